"""`python -m bot [run|sandbox|migrate|webhook|stats]`.

- `python -m bot` (or `run`): long polling with the settings from the environment / `.env`;
- `python -m bot sandbox`: a local fake Telegram and our bot in one process, chat in the terminal
  (no token, no network, the embedded SQLite database);
- `python -m bot migrate`: upgrade the database schema (for shared databases; SQLite migrates itself);
- `python -m bot webhook`: serve Telegram's webhook calls (WEBHOOK_URL, WEBHOOK_SECRET);
- `python -m bot stats`: users, dialogs, leads, conversion per deep-link source, task and GPU (as /stats).

Exit status: 0 done, 2 bad configuration (one line on stderr naming the variable), 1 the bot stopped
on an error (logged, secrets redacted). The bot's modules are imported only once the settings pass,
so a bad setting is reported within a second.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import gc
import logging
import sys
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import TYPE_CHECKING, TextIO
from urllib.parse import urlencode

from pydantic import SecretStr

from bot.config import ConfigError, Settings, check_command, check_services, load_settings
from bot.logs import log_uncaught_exceptions, secrets_of, setup_logging

SANDBOX_USER_ID = 1001
SANDBOX_PICTURES = Path("data") / "pictures"  # the answers' pictures the sandbox chat received
SANDBOX_HOST = "127.0.0.1"  # the Mini App's page in the sandbox: this machine only
if TYPE_CHECKING:
    from aiogram.types import User as TelegramUser
    from aiohttp.web import AppRunner

    from bot.app import App

log = logging.getLogger("bot")


async def run_sandbox(
    settings: Settings, input_fn: Callable[[str], str] = input, output: TextIO = sys.stdout
) -> None:
    """Fake Telegram + our bot in polling mode + a terminal chat, all in this process."""
    from bot.app import create_app
    from tgsandbox import Sandbox
    from tgsandbox.terminal import run_terminal_chat

    # Update ids continue above those of earlier runs, which the database remembers for de-duplication.
    async with Sandbox(first_update_id=int(time.time() * 1000)) as sandbox:
        settings = settings.model_copy(
            update={"telegram_api_url": sandbox.base_url, "bot_token": SecretStr(sandbox.token)}
        )
        app = await create_app(settings, bot=sandbox.make_bot())
        polling = asyncio.create_task(
            app.dp.start_polling(
                app.bot, allowed_updates=app.dp.resolve_used_update_types(), handle_signals=False
            )
        )
        user = sandbox.user(id=SANDBOX_USER_ID, first_name="You", language_code=settings.default_language)
        page = await _serve_page(app, user.user, output)
        try:
            await run_terminal_chat(
                sandbox, user, input_fn=input_fn, output=output, pictures_dir=SANDBOX_PICTURES
            )
        finally:
            if page is not None:
                await page.cleanup()
            await app.dp.stop_polling()
            await polling
            await app.close()


async def _serve_page(app: App, user: TelegramUser, output: TextIO) -> AppRunner | None:
    """The Mini App on 127.0.0.1:WEBAPP_PORT, and a URL opening it in a desktop browser as `user`
    (initData signed with the sandbox's token, as Telegram would: bot.webapp.auth.sign)."""
    from bot.webapp.auth import sign
    from bot.webapp.server import serve

    port = app.settings.webapp_port
    try:
        page = await serve(app, SANDBOX_HOST, port)
    except OSError as e:
        where = f"{SANDBOX_HOST}:{port}"
        print(f"(the Mini App is not served: {where}: {e.strerror or e}; set WEBAPP_PORT)", file=output)
        return None
    init_data = sign(app.bot.token, user)
    url = f"http://{SANDBOX_HOST}:{port}/app#{urlencode({'tgWebAppData': init_data})}"
    print(app.i18n.core.get("webapp-dev-url", app.settings.default_language, url=url), file=output)
    return page


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m bot", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "command", nargs="?", default="run", choices=("run", "sandbox", "migrate", "webhook", "stats")
    )
    args = parser.parse_args(argv)
    if args.command in ("run", "webhook"):
        # No garbage collections while the settings are read and the bot's modules import and start
        # (aiogram's and pydantic's models: collections walking them cost start-up time and free next
        # to nothing); the dispatcher's startup freezes what it built and enables the collector.
        gc.disable()
    try:
        return _main(args.command)
    finally:
        gc.enable()  # also after a start that failed before the dispatcher's startup


def _main(command: str) -> int:
    try:
        settings = load_settings()
        check_command(settings, command)
    except ConfigError as e:
        print(e, file=sys.stderr)
        return 2
    quiet = command == "sandbox"  # the terminal chat owns the screen
    setup_logging(logging.WARNING if quiet else settings.log_level, secrets_of(settings))
    try:
        with contextlib.suppress(KeyboardInterrupt):
            asyncio.run(_checked(settings, command, _runner(settings, command)))
    except ConfigError as e:
        print(e, file=sys.stderr)
        return 2
    except Exception as e:  # logged through the redacting filter, never printed raw
        log.critical("python -m bot %s stopped: %s: %s", command, type(e).__name__, e, exc_info=True)
        return 1
    return 0


def _runner(settings: Settings, command: str) -> Callable[[], Awaitable[None]]:
    async def run() -> None:
        from bot.polling import run_polling

        await run_polling(settings)

    async def webhook() -> None:
        from bot.webhook import run_webhook

        await run_webhook(settings)

    async def migrate() -> None:
        from bot.db.engine import migrate

        await migrate(settings.database_url)

    async def stats() -> None:
        from bot.db.report import print_source_report

        await print_source_report(settings.database_url)

    async def sandbox() -> None:
        await run_sandbox(settings)

    runners = {"run": run, "sandbox": sandbox, "migrate": migrate, "webhook": webhook, "stats": stats}
    return runners[command]


async def _checked(settings: Settings, command: str, runner: Callable[[], Awaitable[None]]) -> None:
    """Redis and a server database answer (a few seconds at most), then the command runs."""
    await check_services(settings, command)
    await runner()


if __name__ == "__main__":
    log_uncaught_exceptions()
    raise SystemExit(main())
