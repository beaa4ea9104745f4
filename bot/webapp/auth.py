"""Telegram's `initData`: checked with the bot token (aiogram's `safe_parse_webapp_init_data`, the
HMAC-SHA256 Telegram documents at core.telegram.org/bots/webapps#validating-data-received-via-the-
mini-app), fresh (`auth_date` within `MAX_AGE_S`) and naming a user; and signed the same way for
tests and the sandbox's dev URL (`sign`)."""

from __future__ import annotations

import hashlib
import hmac
import json
import time
from typing import Any
from urllib.parse import urlencode

from aiogram.types import User as TelegramUser
from aiogram.utils.web_app import WebAppInitData, safe_parse_webapp_init_data

MAX_AGE_S = 24 * 3600
"""initData older than this is refused: a page kept open a day must be reopened (Telegram signs a
fresh one at every opening). Telegram states no limit; a day keeps a leaked string short-lived."""
MAX_FUTURE_S = 300  # a clock a few minutes ahead of ours is tolerated, not a date from the future
MAX_INIT_DATA = 4096  # characters: Telegram's initData is a few hundred; anything longer is not it


def verify(token: str, init_data: str | None, *, now: float | None = None) -> WebAppInitData | None:
    """The checked initData, or None: missing, too long, forged, stale or without a user."""
    if not init_data or len(init_data) > MAX_INIT_DATA:
        return None
    try:
        data = safe_parse_webapp_init_data(token, init_data)
    except (ValueError, TypeError):  # a bad signature, a query string or JSON that does not parse
        return None
    age = (time.time() if now is None else now) - data.auth_date.timestamp()
    if data.user is None or not -MAX_FUTURE_S <= age <= MAX_AGE_S:
        return None
    return data


def sign(
    token: str, user: TelegramUser | dict[str, Any], *, auth_date: int | None = None, **fields: str
) -> str:
    """initData as Telegram makes it: the fields, `hash` = HMAC-SHA256 of the sorted "key=value"
    lines with the key HMAC-SHA256("WebAppData", token)."""
    user_json = (
        user.model_dump_json(exclude_none=True) if isinstance(user, TelegramUser) else json.dumps(user)
    )
    pairs = {
        "auth_date": str(int(time.time()) if auth_date is None else auth_date),
        "user": user_json,
        **fields,
    }
    check = "\n".join(f"{k}={v}" for k, v in sorted(pairs.items()))
    secret = hmac.new(b"WebAppData", token.encode(), hashlib.sha256).digest()
    pairs["hash"] = hmac.new(secret, check.encode(), hashlib.sha256).hexdigest()
    return urlencode(pairs)
