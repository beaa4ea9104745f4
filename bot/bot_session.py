"""aiogram's aiohttp session sending the Bot API calls as JSON bodies (uploads keep multipart).

aiogram posts every call as a form (`AiohttpSession.build_form_data`): each field JSON-dumped on its
own, then the whole form url-encoded, where every Cyrillic letter and emoji of a message becomes
six bytes of ``%XX%XX``, and a multipart writer is set up (a UUID boundary) for every call. The Bot
API takes ``application/json`` for every method but uploads (https://core.telegram.org/bots/api
#making-requests). Here a call without a file is one ``json.dumps`` of its prepared fields: the same
values aiogram would send (its `prepare_value`: defaults such as the HTML parse mode filled in,
nested objects as objects), a third of the body for a Russian answer. Measured with
`bench/bot_load.py --profile` (50 users, guided walk): form building and url-encoding were 6 % of the
bot's CPU. A call with a file (the answer's picture) goes through aiogram's own form.
"""

from __future__ import annotations

import json
from typing import Any, cast

from aiogram import Bot
from aiogram.client.session.aiohttp import AiohttpSession
from aiogram.exceptions import TelegramNetworkError
from aiogram.methods import TelegramMethod
from aiogram.methods.base import TelegramType
from aiogram.types import InputFile
from aiohttp import ClientError, ClientTimeout

JSON_HEADERS = {"Content-Type": "application/json"}


class JsonBodySession(AiohttpSession):
    """`AiohttpSession` whose calls without a file are sent as JSON (see the module doc)."""

    def json_body(self, bot: Bot, method: TelegramMethod[TelegramType]) -> bytes | None:
        """The call as a JSON body; None when it carries a file (it needs multipart)."""
        files: dict[str, InputFile] = {}
        fields: dict[str, Any] = {}
        for key, value in method.model_dump(warnings=False).items():
            prepared = self.prepare_value(value, bot=bot, files=files, _dumps_json=False)
            if prepared is None or prepared == "":
                continue  # left out, as aiogram's form leaves them out
            fields[key] = prepared
        if files:
            return None
        return json.dumps(fields, ensure_ascii=False, separators=(",", ":")).encode()

    async def make_request(
        self, bot: Bot, method: TelegramMethod[TelegramType], timeout: int | None = None
    ) -> TelegramType:
        body = self.json_body(bot, method)
        if body is None:
            return await super().make_request(bot, method, timeout)
        session = await self.create_session()
        url = self.api.api_url(token=bot.token, method=method.__api_method__)
        try:
            async with session.post(
                url, data=body, headers=JSON_HEADERS,
                timeout=ClientTimeout(total=self.timeout if timeout is None else timeout),
            ) as resp:  # fmt: skip
                raw_result = await resp.text()
        except TimeoutError as e:
            raise TelegramNetworkError(method=method, message="Request timeout error") from e
        except ClientError as e:
            raise TelegramNetworkError(method=method, message=f"{type(e).__name__}: {e}") from e
        response = self.check_response(bot=bot, method=method, status_code=resp.status, content=raw_result)
        return cast(TelegramType, response.result)
