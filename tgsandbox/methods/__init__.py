"""Bot API methods of the fake server, registered by name (Telegram matches names case-insensitively)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from ..params import Params
from ..telegram import FakeTelegram

Handler = Callable[[FakeTelegram, Params], Awaitable[Any]]
METHODS: dict[str, Handler] = {}


def api_method(*names: str) -> Callable[[Handler], Handler]:
    def register(handler: Handler) -> Handler:
        for name in names:
            METHODS[name.lower()] = handler
        return handler

    return register


def find_method(name: str) -> Handler | None:
    return METHODS.get(name.lower())


# Importing the modules registers their methods.
from . import files, messages, queries, service  # noqa: E402

__all__ = ["METHODS", "Handler", "api_method", "files", "find_method", "messages", "queries", "service"]
