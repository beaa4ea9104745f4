"""Request parameters as Telegram reads them: query string, form, multipart or JSON body."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from aiohttp import BodyPartReader, web

from .errors import bad_request

# Parameters whose value is a JSON-serialized object or array in form and multipart bodies.
JSON_PARAMS = frozenset(
    {
        "reply_markup",
        "entities",
        "caption_entities",
        "results",
        "commands",
        "scope",
        "allowed_updates",
        "link_preview_options",
        "reply_parameters",
        "button",
        "media",
        "options",
        "menu_button",
    }
)

# Scalars arrive as strings in form bodies; recorded requests show these typed, for easy assertions.
INT_PARAMS = frozenset(
    {
        "chat_id",
        "message_id",
        "user_id",
        "cache_time",
        "offset",
        "limit",
        "timeout",
        "max_connections",
        "reply_to_message_id",
        "message_thread_id",
    }
)
BOOL_PARAMS = frozenset(
    {
        "show_alert",
        "is_personal",
        "disable_notification",
        "protect_content",
        "drop_pending_updates",
        "disable_web_page_preview",
        "allow_sending_without_reply",
        "has_spoiler",
        "show_caption_above_media",
    }
)


@dataclass
class Upload:
    filename: str
    content: bytes


@dataclass
class Params:
    values: dict[str, Any]
    uploads: dict[str, Upload] = field(default_factory=dict)

    def text(self, name: str) -> str | None:
        value = self.values.get(name)
        return None if value is None else str(value)

    def integer(self, name: str) -> int | None:
        value = self.values.get(name)
        if value is None or value == "":
            return None
        try:
            return int(value)
        except (TypeError, ValueError):
            raise bad_request(f"invalid {name} specified") from None

    def number(self, name: str, default: float) -> float:
        value = self.values.get(name)
        if value is None or value == "":
            return default
        try:
            return float(value)
        except (TypeError, ValueError):
            raise bad_request(f"invalid {name} specified") from None

    def flag(self, name: str) -> bool:
        value = self.values.get(name)
        if isinstance(value, str):
            return value.lower() in ("true", "1")
        return bool(value)

    def json(self, name: str) -> Any:
        return self.values.get(name)

    def typed_values(self) -> dict[str, Any]:
        """The values with known integer and boolean parameters converted from their form strings."""
        typed = dict(self.values)
        for name, value in self.values.items():
            if not isinstance(value, str):
                continue
            if name in INT_PARAMS and value.lstrip("-").isdigit():
                typed[name] = int(value)
            elif name in BOOL_PARAMS and value in ("true", "false"):
                typed[name] = value == "true"
        typed.update({name: f"<file {upload.filename}>" for name, upload in self.uploads.items()})
        return typed

    def file(self, name: str) -> Upload | str | None:
        """An uploaded file (directly or via ``attach://``), or a file_id / URL string."""
        value = self.values.get(name)
        if name in self.uploads:
            return self.uploads[name]
        if isinstance(value, str) and value.startswith("attach://"):
            return self.uploads.get(value.removeprefix("attach://"))
        return value if isinstance(value, str) and value else None


def decode_json_params(values: dict[str, Any]) -> dict[str, Any]:
    for name in JSON_PARAMS & values.keys():
        raw = values[name]
        if isinstance(raw, str):
            try:
                values[name] = json.loads(raw)
            except ValueError:
                raise bad_request(f"can't parse {name} JSON object") from None
    return values


async def read_params(request: web.Request) -> Params:
    values: dict[str, Any] = dict(request.query)
    uploads: dict[str, Upload] = {}
    if request.content_type == "application/json":
        try:
            body = await request.json()
        except ValueError:
            raise bad_request("can't parse JSON") from None
        if isinstance(body, dict):
            values.update(body)
    elif request.content_type == "multipart/form-data":
        reader = await request.multipart()
        while (part := await reader.next()) is not None:
            if not isinstance(part, BodyPartReader) or not part.name:
                continue
            if part.filename:
                uploads[part.name] = Upload(part.filename, await part.read())
            else:
                values[part.name] = await part.text()
    elif request.can_read_body:
        values.update((key, value) for key, value in (await request.post()).items() if isinstance(value, str))
    return Params(decode_json_params(values), uploads)
