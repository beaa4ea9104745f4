"""The runner of `python -m bot` (polling): the bot's getUpdates loop records each batch in the inbox
before confirming it (bot.db.inbox), and the Mini App's page is served beside it when configured."""

from __future__ import annotations

from bot.app import create_app, reach_telegram
from bot.config import Settings


async def run_polling(settings: Settings) -> None:
    if (bot := await reach_telegram(settings)) is None:
        return
    app = await create_app(settings, bot=bot)
    page = None
    try:
        if settings.webapp_url:  # the Mini App's page on a server of its own (bot.webapp)
            from bot.webapp.server import serve

            page = await serve(app, settings.web_server_host, settings.webapp_port)
        await app.bot.delete_webhook(drop_pending_updates=False)
        await app.dp.start_polling(app.bot, allowed_updates=app.dp.resolve_used_update_types())
    finally:
        if page is not None:
            await page.cleanup()
        await app.close()
