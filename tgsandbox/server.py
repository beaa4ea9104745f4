"""The aiohttp application that answers ``/bot<token>/<method>`` like api.telegram.org."""

from __future__ import annotations

import logging
from typing import Any

from aiohttp import web

from .errors import ApiError
from .methods import Handler, files, find_method
from .params import Params, read_params
from .telegram import FakeTelegram

logger = logging.getLogger(__name__)

# Long polls are not bot activity: the driver's "bot has gone quiet" ignores them.
PASSIVE_METHODS = frozenset({"getupdates"})

TELEGRAM_KEY: web.AppKey[FakeTelegram] = web.AppKey("telegram", FakeTelegram)


def _answer(body: dict[str, Any], status: int = 200) -> web.Response:
    return web.json_response(body, status=status)


async def handle_call(request: web.Request) -> web.Response:
    telegram = request.app[TELEGRAM_KEY]
    if request.match_info["token"] != telegram.token:
        return _answer(ApiError(401, "Unauthorized").to_json(), 401)
    method = request.match_info["method"]
    handler = find_method(method)
    if handler is None:
        params = await _params_or_error(request)
        if isinstance(params, Params):  # recorded, so a test can see which method the bot wanted
            telegram.record(method, params, None, "Not Found")
        return _answer(ApiError(404, "Not Found").to_json(), 404)
    return await run_method(telegram, method, handler, await _params_or_error(request))


async def _params_or_error(request: web.Request) -> Params | ApiError:
    try:
        return await read_params(request)
    except ApiError as error:
        return error


async def run_method(
    telegram: FakeTelegram, method: str, handler: Handler, params: Params | ApiError
) -> web.Response:
    passive = method.lower() in PASSIVE_METHODS
    if not passive:
        telegram.in_flight += 1
        telegram.touch()
    chat_id = None
    try:
        if isinstance(params, ApiError):
            raise params
        chat_id = telegram.chat_id_of_call(params)
        for gate in list(telegram.gates):
            await gate.pass_through(method)
        telegram.check_flood(method, chat_id)
        telegram.check_faults(method, chat_id)
        result = await handler(telegram, params)
    except ApiError as error:
        if not passive and isinstance(params, Params):
            telegram.record(method, params, chat_id, error.description)
        return _answer(error.to_json(), error.error_code)
    except Exception as error:  # a sandbox bug: answer like a Telegram outage, never hang the bot
        logger.exception("tgsandbox failed in %s", method)
        failure = ApiError(500, f"Internal Server Error: {error!r}")
        if isinstance(params, Params):
            telegram.record(method, params, chat_id, failure.description)
        return _answer(failure.to_json(), 500)
    finally:
        if not passive:
            telegram.in_flight -= 1
            telegram.touch()
    if not passive:
        telegram.record(method, params, chat_id, None)
    return _answer({"ok": True, "result": result})


async def download_file(request: web.Request) -> web.Response:
    return await files.download(request, request.app[TELEGRAM_KEY])


def make_app(telegram: FakeTelegram) -> web.Application:
    app = web.Application(client_max_size=50 * 1024 * 1024)  # Telegram accepts uploads up to 50 MB
    app[TELEGRAM_KEY] = telegram
    app.router.add_route("*", "/bot{token}/{method}", handle_call)
    app.router.add_get("/file/bot{token}/{path:.+}", download_file)
    return app
