"""Errors the fake server answers with, and the one the driver raises when a bot stays silent."""

from __future__ import annotations

from typing import Any


class ApiError(Exception):
    """A Bot API error: becomes ``{"ok": false, "error_code": ..., "description": ...}``."""

    def __init__(self, error_code: int, description: str, retry_after: int | None = None) -> None:
        super().__init__(description)
        self.error_code = error_code
        self.description = description
        self.retry_after = retry_after

    def to_json(self) -> dict[str, Any]:
        body: dict[str, Any] = {"ok": False, "error_code": self.error_code, "description": self.description}
        if self.retry_after is not None:
            body["parameters"] = {"retry_after": self.retry_after}
        return body


def bad_request(reason: str) -> ApiError:
    """400 with Telegram's "Bad Request: " prefix, which aiogram shows verbatim."""
    return ApiError(400, f"Bad Request: {reason}")


QUERY_TOO_OLD = "query is too old and response timeout expired or query ID is invalid"


class SandboxTimeout(AssertionError):
    """The bot did not do what the driver awaited in time (a failed test, never a hang)."""
