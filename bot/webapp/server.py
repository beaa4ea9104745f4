"""Where the page is served: `install` adds it to the webhook server (`bot.webhook.build_webhook_app`);
in polling mode (and the sandbox) `serve` runs a small aiohttp server of its own. With WEBAPP_URL set
the bot's menu button opens it (setChatMenuButton with a WebAppInfo, at start)."""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

from aiogram import Bot
from aiogram.exceptions import TelegramAPIError
from aiogram.types import MenuButtonWebApp, WebAppInfo
from aiohttp import web

from bot.throttle import Throttle
from bot.webapp import routes

if TYPE_CHECKING:
    from bot.app import App

log = logging.getLogger(__name__)


def install(web_app: web.Application, app: App, throttle: Throttle | None = None) -> routes.WebApp:
    """The page and its API on `web_app`; the menu button set at start when WEBAPP_URL is."""
    webapp = routes.install(web_app, app, throttle)
    url = app.settings.webapp_url
    if url:

        async def menu_button(bot: Bot) -> None:  # after the texts are loaded (i18n's startup)
            text = app.i18n.core.get("webapp-menu", app.settings.default_language)
            try:
                await bot.set_chat_menu_button(
                    menu_button=MenuButtonWebApp(text=text, web_app=WebAppInfo(url=url))
                )
            except TelegramAPIError as e:  # the bot runs without it; the answers' buttons still open the page
                log.warning("could not set the menu button to the Mini App: %s", e)

        app.dp.startup.register(menu_button)
    return webapp


async def serve(app: App, host: str, port: int, throttle: Throttle | None = None) -> web.AppRunner:
    """The page on a server of its own (polling mode, the sandbox); `cleanup()` the runner to stop."""
    from bot.webhook import webhook_runner

    web_app = web.Application()
    install(web_app, app, throttle)
    runner: web.AppRunner = webhook_runner(web_app)
    await runner.setup()
    await web.TCPSite(runner, host, port).start()
    log.info("Mini App on %s:%s/app", host, port)
    return runner
