"""Telegram updates for tests, built as Telegram sends them: one private-chat message each."""

from __future__ import annotations

import json
import time
from typing import Any

from aiogram.types import Update

USER_ID = 777


def message_payload(
    update_id: Any,
    text: str = "hi",
    user_id: Any = USER_ID,
    *,
    first_name: str = "Ann",
    username: str | None = "ann",
    language_code: str | None = "en",
) -> dict[str, Any]:
    """The update's JSON, as parsed: a text message from ``user_id`` in their private chat (a leading
    /command marked as Telegram marks it). Ids are taken as given: a test may pass what no Update
    holds."""
    sender: dict[str, Any] = {"id": user_id, "is_bot": False, "first_name": first_name}
    if username is not None:
        sender["username"] = username
    if language_code is not None:
        sender["language_code"] = language_code
    message: dict[str, Any] = {
        "message_id": update_id if isinstance(update_id, int) and 0 < update_id < 2**31 else 1,
        "date": int(time.time()),
        "chat": {"id": user_id, "type": "private", "first_name": first_name},
        "from": sender,
        "text": text,
    }
    if text.startswith("/"):
        message["entities"] = [{"type": "bot_command", "offset": 0, "length": len(text.split()[0])}]
    return {"update_id": update_id, "message": message}


def message_body(update_id: Any, text: str = "hi", user_id: Any = USER_ID, **fields: Any) -> bytes:
    """The update as the webhook receives it (JSON bytes)."""
    return json.dumps(message_payload(update_id, text, user_id, **fields)).encode()


def message_update(update_id: int, text: str = "hi", user_id: int = USER_ID, **fields: Any) -> Update:
    """The update as aiogram parses it."""
    return Update.model_validate(message_payload(update_id, text, user_id, **fields))
