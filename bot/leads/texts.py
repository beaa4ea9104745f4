"""Texts of any length for the sales chat and the user: Fluent sentences with the user's text put in
after formatting (`render`), user text as stored (`clean`), cut (`clip`), and measured as Telegram
counts a message (`shown_length`, MESSAGE_LIMIT)."""

from __future__ import annotations

import re
from collections.abc import Callable
from html import unescape
from typing import Any

MESSAGE_LIMIT = 4096
"""Telegram's limit on a message's text, in UTF-16 code units of the text as shown (tags parsed)."""
CUT = "…"

Translate = Callable[..., str]
"""`translate(key, **args)` in the sales chat's language."""


_SLOT = re.compile("\x00([0-9]+)\x00")


def render(tr: Translate, key: str, **args: Any) -> str:
    """``tr(key, **args)`` with every text argument put in after Fluent formatted the sentence.

    fluent.runtime refuses a placeable longer than 2,500 characters (resolver.MAX_PART_LENGTH) and
    an escaped comment grows up to five times (``&`` is ``&amp;``): a long paste would fail the lead.
    Fluent gets a short slot for each text and never sees the text itself (numbers go through it,
    so plural forms still work)."""
    texts: list[str] = []
    slots: dict[str, Any] = {}
    for name, value in args.items():
        if isinstance(value, str):
            slots[name] = f"\x00{len(texts)}\x00"
            texts.append(value)
        else:
            slots[name] = value
    return _SLOT.sub(lambda m: texts[int(m.group(1))], tr(key, **slots))


def clean(text: str) -> str:
    """User text as stored: no NUL (PostgreSQL's text refuses it), no surrounding blanks."""
    return text.replace("\x00", "").strip()


def clip(text: str, limit: int) -> str:
    """At most ``limit`` characters, the cut marked."""
    return text if len(text) <= limit else text[: max(limit - 1, 0)].rstrip() + CUT


def shown_length(html: str) -> int:
    """The length Telegram counts of an HTML text: tags dropped, entities read, in UTF-16 units."""
    return len(unescape(re.sub(r"<[^>]*>", "", html)).encode("utf-16-le")) // 2
