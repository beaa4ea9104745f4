"""A polled update that keeps the JSON Telegram sent it as, which the inbox stores (bot.db.inbox).

`GetReceivedUpdates` is aiogram's `getUpdates` answered as `ReceivedUpdate`s: each update is parsed as
aiogram parses it and holds the object it was parsed from, so the inbox stores what came (not a dump
of the model: ~60 µs a button press, and closer to what the column promises) without the session
keeping anything aside. Any session reads it so: the method's answer type says what to build.
"""

from __future__ import annotations

from typing import Any

from aiogram.methods import GetUpdates
from aiogram.types import Update
from pydantic import ModelWrapValidatorHandler, PrivateAttr, model_validator


class ReceivedUpdate(Update):
    """An `Update` with the JSON object it was parsed from (`as_sent`; None when built otherwise)."""

    _as_sent: dict[str, Any] | None = PrivateAttr(default=None)

    @model_validator(mode="wrap")
    @classmethod
    def _keep_as_sent(cls, data: Any, handler: ModelWrapValidatorHandler[ReceivedUpdate]) -> ReceivedUpdate:
        update = handler(data)
        if isinstance(data, dict):
            update._as_sent = data
        return update

    @property
    def as_sent(self) -> dict[str, Any] | None:
        return self._as_sent


class GetReceivedUpdates(GetUpdates):
    """aiogram's `getUpdates`, its updates read as `ReceivedUpdate`s."""

    __returning__ = list[ReceivedUpdate]
