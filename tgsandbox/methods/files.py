"""Files the bot reads: ``getFile`` and the download URL ``/file/bot<token>/<file_path>``.

A file is anything in ``FakeTelegram.files`` held as bytes: a document a user sent
(`SandboxUser.send_document`) or one the bot uploaded. As Telegram does, ``getFile`` refuses a file
over 20 MB ("file is too big", https://core.telegram.org/bots/api#getfile) and an unknown id.
"""

from __future__ import annotations

import re
from typing import Any

from aiohttp import web

from ..errors import ApiError, bad_request
from ..params import Params, Upload
from ..telegram import FakeTelegram
from . import api_method

MAX_DOWNLOAD_BYTES = 20 * 1024 * 1024  # "bots can download files of up to 20MB in size" (getFile)
_UNSAFE = re.compile(r"[^A-Za-z0-9._-]")


def file_path(file_id: str, upload: Upload) -> str:
    """Where the file is served: ``documents/<file_id>/<name>`` (the name made URL-safe)."""
    return f"documents/{file_id}/{_UNSAFE.sub('_', upload.filename or 'file')[:64]}"


@api_method("getFile")
async def get_file(telegram: FakeTelegram, params: Params) -> Any:
    file_id = params.text("file_id") or ""
    upload = telegram.files.get(file_id)
    if not isinstance(upload, Upload):
        raise bad_request("invalid file_id")
    if len(upload.content) > MAX_DOWNLOAD_BYTES:
        raise bad_request("file is too big")
    return {
        "file_id": file_id,
        "file_unique_id": f"u{file_id}",
        "file_size": len(upload.content),
        "file_path": file_path(file_id, upload),
    }


async def download(request: web.Request, telegram: FakeTelegram) -> web.Response:
    """``GET /file/bot<token>/<file_path>``: the bytes, or 404 like Telegram's file server."""
    not_found = web.json_response(ApiError(404, "Not Found").to_json(), status=404)
    if request.match_info["token"] != telegram.token:
        return web.json_response(ApiError(401, "Unauthorized").to_json(), status=401)
    parts = request.match_info["path"].split("/")
    upload = telegram.files.get(parts[1]) if len(parts) == 3 and parts[0] == "documents" else None
    if not isinstance(upload, Upload) or file_path(parts[1], upload) != request.match_info["path"]:
        return not_found
    telegram.in_flight += 1
    telegram.touch()
    try:
        return web.Response(body=upload.content, content_type="application/octet-stream")
    finally:
        telegram.in_flight -= 1
        telegram.touch()
