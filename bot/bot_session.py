"""aiogram's aiohttp session, with calls sent as JSON and answers read with less work.

A call without a file is one ``json.dumps`` of the fields aiogram's form would send: pydantic's dump
of the call, what JSON cannot write as it is (the bot's defaults, dates, files) through aiogram's
`prepare_value`; the Bot API takes JSON for every method but uploads
(https://core.telegram.org/bots/api#making-requests), and a call with a file (the answer's picture)
goes through aiogram's multipart form. Telegram's answer is read as aiogram reads it
(`BaseSession.check_response`, whose errors it raises), except that each `Response[T]` class is
built once and held, and the inline keyboard a sent or edited message comes back with (Telegram's
echo of the one sent) is the keyboard object sent, not validated again.
Why, with the figures: bench/README.md ("Bot API calls").
"""

from __future__ import annotations

import json
from http import HTTPStatus
from typing import Any, cast

from aiogram import Bot
from aiogram.client.default import Default
from aiogram.client.session.aiohttp import AiohttpSession
from aiogram.exceptions import TelegramNetworkError
from aiogram.methods import TelegramMethod
from aiogram.methods.base import Response, TelegramType
from aiogram.types import InlineKeyboardMarkup, InputFile
from aiohttp import ClientError, ClientTimeout
from pydantic import ValidationError

JSON_HEADERS = {"Content-Type": "application/json"}


class _LeftOut(Exception):
    """A value inside the call that aiogram's form leaves out (a default the bot does not set)."""


class JsonBodySession(AiohttpSession):
    """`AiohttpSession` whose calls without a file are sent as JSON, and whose answers are read with
    the shortcuts of the module doc."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._response_types: dict[Any, Any] = {}

    def check_response(
        self, bot: Bot, method: TelegramMethod[TelegramType], status_code: int, content: str
    ) -> Response[TelegramType]:
        try:
            json_data = self.json_loads(content)
        except ValueError:
            json_data = None
        if not (HTTPStatus.OK <= status_code <= HTTPStatus.IM_USED) or not isinstance(json_data, dict):
            return super().check_response(bot, method, status_code, content)  # aiogram's errors
        markup = getattr(method, "reply_markup", None)
        result = json_data.get("result")
        if isinstance(markup, InlineKeyboardMarkup) and isinstance(result, dict) and "reply_markup" in result:
            result["reply_markup"] = markup  # Telegram's echo of the keyboard sent
        returning = method.__returning__
        response_type = self._response_types.get(returning)
        if response_type is None:
            response_type = self._response_types[returning] = Response[returning]  # type: ignore[valid-type]
        try:
            response: Response[TelegramType] = response_type.model_validate(json_data, context={"bot": bot})
        except ValidationError:
            return super().check_response(bot, method, status_code, content)  # aiogram's error
        if response.ok:
            return response
        return super().check_response(bot, method, status_code, content)

    def json_body(self, bot: Bot, method: TelegramMethod[TelegramType]) -> bytes | None:
        """The call as a JSON body; None when it carries a file (it needs multipart)."""
        files: dict[str, InputFile] = {}
        fields: dict[str, Any] = {}
        # Nones left out by pydantic: aiogram drops them anyway, at every depth (`prepare_value`).
        for key, value in method.model_dump(warnings=False, exclude_none=True).items():
            if isinstance(value, Default):  # the bot's default, or left out where it has none
                value = self.prepare_value(value, bot=bot, files=files, _dumps_json=False)
            if value is None or value == "":
                continue  # left out, as aiogram's form leaves them out
            fields[key] = value

        def prepared(value: Any) -> Any:
            """What json cannot write as it is (a default, a date, a file) as aiogram's form writes it."""
            value = self.prepare_value(value, bot=bot, files=files, _dumps_json=False)
            if value is None:
                raise _LeftOut  # aiogram leaves it out of its object; JSON would write null
            return value

        try:
            body = json.dumps(fields, ensure_ascii=False, separators=(",", ":"), default=prepared)
        except _LeftOut:
            body = json.dumps(
                self.prepare_value(fields, bot=bot, files=files, _dumps_json=False),
                ensure_ascii=False, separators=(",", ":"),
            )  # fmt: skip
        return None if files else body.encode()

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
