"""Load through tgsandbox: N simulated users each asking Q questions in a row, the full bot (polling,
embedded SQLite, inbox) against a bare aiogram bot on the same sandbox, in the same run.

    python bench/bot_load.py [--users 50] [--questions 4]

Prints updates/s and p50/p95/p99 reaction (the user's message → the bot's sendMessage, as the
sandbox records them). Figures, not a test.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import statistics
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from aiogram import Bot, Dispatcher, Router
from aiogram.types import Message
from pydantic import SecretStr

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bot.app import create_app
from bot.config import Settings
from tgsandbox import Sandbox

QUESTION = "qwen3 8b int4 {n}k"


def percentile(values: list[float], p: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(p / 100 * (len(ordered) - 1)))]


async def drive(sandbox: Sandbox, users: int, questions: int, first_id: int) -> tuple[float, list[float]]:
    """Every user asks its questions one after the other; (seconds, reaction times)."""
    reactions: list[float] = []

    async def walk(user_id: int) -> None:
        user = sandbox.user(id=user_id, language_code="ru")
        for n in range(questions):
            answered = len(sandbox.requests_for(user_id, "sendMessage"))
            started = time.monotonic()
            await user.post(QUESTION.format(n=2**n))
            while len(sent := sandbox.requests_for(user_id, "sendMessage")) <= answered:
                await asyncio.sleep(0.002)
            reactions.append(sent[answered].at - started)

    began = time.monotonic()
    await asyncio.wait_for(asyncio.gather(*(walk(first_id + i) for i in range(users))), 300)
    return time.monotonic() - began, reactions


async def run(name: str, users: int, questions: int, start: Callable[[Sandbox], Awaitable[Any]]) -> None:
    async with Sandbox(reply_timeout=60) as sandbox:
        stop = await start(sandbox)
        try:
            seconds, reactions = await drive(sandbox, users, questions, 10_000)
        finally:
            await stop()
    ms = [r * 1000 for r in reactions]
    print(
        f"{name:10} {users * questions / seconds:8.1f} updates/s   "
        f"reaction p50 {statistics.median(ms):6.0f} ms  p95 {percentile(ms, 95):6.0f} ms  "
        f"p99 {percentile(ms, 99):6.0f} ms   ({len(ms)} answers)"
    )


def polling(dp: Dispatcher, bot: Bot) -> Callable[[], Awaitable[None]]:
    task = asyncio.create_task(dp.start_polling(bot, handle_signals=False, polling_timeout=1))

    async def stop() -> None:
        with contextlib.suppress(RuntimeError):
            await dp.stop_polling()
        await task

    return stop


async def full_bot(directory: Path) -> Callable[[Sandbox], Awaitable[Any]]:
    async def start(sandbox: Sandbox) -> Callable[[], Awaitable[None]]:
        settings = Settings(
            _env_file=None,  # type: ignore[call-arg]
            database_url=f"sqlite+aiosqlite:///{directory / 'bot.sqlite3'}",
            bot_token=SecretStr(sandbox.token),
            telegram_api_url=sandbox.base_url,
        )
        app = await create_app(settings, bot=sandbox.make_bot())
        stop_polling = polling(app.dp, app.bot)

        async def stop() -> None:
            await stop_polling()
            await app.close()

        return stop

    return start


async def bare_bot(sandbox: Sandbox) -> Callable[[], Awaitable[None]]:
    router = Router()

    @router.message()
    async def answer(message: Message) -> None:
        await message.answer(f"answer to {message.text}")

    dp = Dispatcher()
    dp.include_router(router)
    return polling(dp, sandbox.make_bot())


async def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--users", type=int, default=50)
    parser.add_argument("--questions", type=int, default=4)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as directory:
        print(f"{args.users} users × {args.questions} questions each")
        await run("bare", args.users, args.questions, bare_bot)
        await run("full bot", args.users, args.questions, await full_bot(Path(directory)))


if __name__ == "__main__":
    asyncio.run(main())
