"""An update as Telegram sent it: the JSON it came as kept, the bot's own keyboard read once.

`ReceivedUpdate` is parsed as aiogram parses an `Update` and holds the object it was parsed from
(`as_sent`), which the inbox stores (not a dump of the model: ~60 µs a button press, and closer to
what the column promises) without the session keeping anything aside. `GetReceivedUpdates` is
aiogram's `getUpdates` answered as `ReceivedUpdate`s: any session reads it so, the method's answer
type says what to build; the webhook parses its body as one. A button press carries the message it
was under, with the bot's own keyboard (a step's options, shown to user after user): a keyboard met
before is the object it was read as then (`KEYBOARDS_KEPT`), not validated again, as the answers to
the bot's calls take the keyboard sent (bot.bot_session). Why, with the figures: bench/README.md.
"""

from __future__ import annotations

import json
from typing import Any

from aiogram.methods import GetUpdates
from aiogram.types import InlineKeyboardMarkup, Update
from cachetools import LRUCache
from pydantic import ModelWrapValidatorHandler, PrivateAttr, ValidationError, model_validator

KEYBOARDS_KEPT = 1024
"""Keyboards of pressed messages kept, by their JSON (least recently used dropped): a step's options
are a few hundred keyboards shared by every user; a result's keyboard (its links) is one user's. A
keyboard is frozen and has no calls of its own: one object serves every update it came with."""
_keyboards: LRUCache[str, InlineKeyboardMarkup] = LRUCache(KEYBOARDS_KEPT)


class ReceivedUpdate(Update):
    """An `Update` with the JSON object it was parsed from (`as_sent`; None when built otherwise)."""

    _as_sent: dict[str, Any] | None = PrivateAttr(default=None)

    @model_validator(mode="wrap")
    @classmethod
    def _keep_as_sent(cls, data: Any, handler: ModelWrapValidatorHandler[ReceivedUpdate]) -> ReceivedUpdate:
        if not isinstance(data, dict):
            return handler(data)
        update = handler(_with_known_keyboard(data))
        update._as_sent = data
        return update

    @property
    def as_sent(self) -> dict[str, Any] | None:
        return self._as_sent


def _with_known_keyboard(data: dict[str, Any]) -> dict[str, Any]:
    """``data`` with its press's message's keyboard as the object kept for that JSON (copies of the
    objects on the way to it; ``data`` is left as it came); as it is when there is none or it is not
    a keyboard (then aiogram's validation says why)."""
    query = data.get("callback_query")
    message = query.get("message") if isinstance(query, dict) else None
    markup = message.get("reply_markup") if isinstance(message, dict) else None
    if not isinstance(markup, dict):
        return data
    assert isinstance(query, dict) and isinstance(message, dict)
    try:
        key = json.dumps(markup, ensure_ascii=False, separators=(",", ":"))
    except (TypeError, ValueError, RecursionError):  # not JSON: built in code, not received
        return data
    keyboard = _keyboards.get(key)
    if keyboard is None:
        try:
            keyboard = _keyboards[key] = InlineKeyboardMarkup.model_validate(markup)
        except ValidationError:
            return data
    return {**data, "callback_query": {**query, "message": {**message, "reply_markup": keyboard}}}


class GetReceivedUpdates(GetUpdates):
    """aiogram's `getUpdates`, its updates read as `ReceivedUpdate`s."""

    __returning__ = list[ReceivedUpdate]
