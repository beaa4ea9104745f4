"""`python -m bot [run|sandbox|migrate|webhook|stats]`.

- `python -m bot` (or `run`): long polling with the settings from the environment / `.env`;
- `python -m bot sandbox`: a local fake Telegram and our bot in one process, chat in the terminal
  (no token, no network, the embedded SQLite database);
- `python -m bot migrate`: upgrade the database schema (for shared databases; SQLite migrates itself);
- `python -m bot webhook`: serve Telegram's webhook calls (WEBHOOK_URL, WEBHOOK_SECRET);
- `python -m bot stats`: users and dialogs per deep-link source, for the sales team.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import logging
import sys
import time
from collections.abc import Callable
from typing import TextIO

from pydantic import SecretStr

from bot.app import create_app, run_polling, run_webhook
from bot.config import ConfigError, Settings, load_settings
from bot.db.engine import migrate
from bot.db.report import print_source_report

SANDBOX_USER_ID = 1001


async def run_sandbox(
    settings: Settings, input_fn: Callable[[str], str] = input, output: TextIO = sys.stdout
) -> None:
    """Fake Telegram + our bot in polling mode + a terminal chat, all in this process."""
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
        try:
            await run_terminal_chat(sandbox, user, input_fn=input_fn, output=output)
        finally:
            await app.dp.stop_polling()
            await polling
            await app.close()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m bot", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "command", nargs="?", default="run", choices=("run", "sandbox", "migrate", "webhook", "stats")
    )
    args = parser.parse_args(argv)
    try:
        settings = load_settings()
    except ConfigError as e:
        print(e, file=sys.stderr)
        return 2
    quiet = args.command == "sandbox"  # the terminal chat owns the screen
    logging.basicConfig(
        level=logging.WARNING if quiet else settings.log_level,
        format="%(asctime)s %(levelname)s %(name)s: %(message)s",
    )
    runners = {
        "run": lambda: run_polling(settings),
        "sandbox": lambda: run_sandbox(settings),
        "migrate": lambda: migrate(settings.database_url),
        "webhook": lambda: run_webhook(settings),
        "stats": lambda: print_source_report(settings.database_url),
    }
    with contextlib.suppress(KeyboardInterrupt):
        asyncio.run(runners[args.command]())
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
