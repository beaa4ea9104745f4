"""How to reach the user: a typed e-mail address or phone number, read and normalized (a Telegram
@username or a shared phone is taken by bot.handlers.leads)."""

from __future__ import annotations

import re
from dataclasses import dataclass

MAX_CONTACT = 254  # an e-mail address's longest legal length
EMAIL = re.compile(
    r"^[^@\s<>\"']{1,64}@[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?(?:\.[A-Za-z0-9-]{1,63})+$"
)
PHONE_CHARS = re.compile(r"^\+?[\d\s().-]{7,25}$")


@dataclass(frozen=True)
class Contact:
    kind: str  # bot.db.models CONTACT_USERNAME | CONTACT_PHONE | CONTACT_EMAIL
    value: str


def read_contact(text: str) -> Contact | None:
    """A typed e-mail or phone number, normalized; None when it is neither."""
    text = text.strip()
    if "@" in text and not text.startswith("@"):
        if len(text) <= MAX_CONTACT and EMAIL.match(text):
            return Contact("email", text)
        return None
    return read_phone(text)


def read_phone(text: str) -> Contact | None:
    text = text.strip()
    if not PHONE_CHARS.match(text):
        return None
    digits = re.sub(r"\D", "", text)
    if not 7 <= len(digits) <= 15:
        return None
    return Contact("phone", f"+{digits}")
