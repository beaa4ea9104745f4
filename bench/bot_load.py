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
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from aiogram import Bot, Dispatcher, Router
from aiogram.types import CallbackQuery, Message, Update
from pydantic import SecretStr

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bot.app import create_app
from bot.callbacks import Nav, NavCB
from bot.config import Settings
from tgsandbox import Sandbox

QUESTION = "qwen3 8b int4 {n}k"
DETAILS = NavCB(action=Nav.DETAILS).pack()


def percentile(values: list[float], p: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(p / 100 * (len(ordered) - 1)))]


class Arrivals:
    """The sandbox's request log, telling waiters when a chat gets a call (no polling of the log:
    the bench must not cost the bot the CPU it measures)."""

    def __init__(self, sandbox: Sandbox) -> None:
        self.counts: dict[tuple[int | None, str], int] = {}
        self.events: dict[tuple[int | None, str], asyncio.Event] = {}
        arrivals = self

        class Log(list):  # type: ignore[type-arg]
            def append(self, request: Any) -> None:
                super().append(request)
                key = (request.chat_id, request.method.lower())
                arrivals.counts[key] = arrivals.counts.get(key, 0) + 1
                if (event := arrivals.events.pop(key, None)) is not None:
                    event.set()

        sandbox.telegram.requests = Log(sandbox.telegram.requests)
        self.log = sandbox.telegram.requests

    async def wait(self, chat_id: int, method: str, more_than: int) -> float:
        """The time of the chat's first ``method`` call after the first ``more_than`` ones."""
        key = (chat_id, method.lower())
        while self.counts.get(key, 0) <= more_than:
            await self.events.setdefault(key, asyncio.Event()).wait()
        return [r for r in self.log if r.chat_id == chat_id and r.method.lower() == key[1]][more_than].at


@dataclass
class Figures:
    seconds: float = 0.0
    reactions: list[float] = field(default_factory=list)
    callbacks: list[float] = field(default_factory=list)
    walks: int = 0


async def drive(sandbox: Sandbox, users: int, questions: int, first_id: int, buttons: bool) -> Figures:
    """Every user asks its questions one after the other, each followed by "📋 Details" (a button)."""
    figures = Figures()
    arrivals = Arrivals(sandbox)

    async def walk(user_id: int) -> None:
        user = sandbox.user(id=user_id, language_code="ru")
        for n in range(questions):
            answered = arrivals.counts.get((user_id, "sendmessage"), 0)
            started = time.monotonic()
            await user.post(QUESTION.format(n=2**n))
            figures.reactions.append(await arrivals.wait(user_id, "sendMessage", answered) - started)
            if buttons:
                pressed = arrivals.counts.get((user_id, "answercallbackquery"), 0)
                started = time.monotonic()
                await press(sandbox, user, DETAILS)
                answered_at = await arrivals.wait(user_id, "answerCallbackQuery", pressed)
                figures.callbacks.append(answered_at - started)
        figures.walks += 1

    began = time.monotonic()
    await asyncio.wait_for(asyncio.gather(*(walk(first_id + i) for i in range(users))), 300)
    figures.seconds = time.monotonic() - began
    return figures


async def press(sandbox: Sandbox, user: Any, data: str) -> None:
    """Push a callback query for the chat's latest bot message without waiting (as `press` would)."""
    target = user.last_message()
    query = sandbox.telegram.new_query("callback_query", user.id, user.chat.chat.id)
    callback = CallbackQuery(
        id=query.query_id, from_user=user.user, chat_instance=f"ci{user.id}",
        message=user.chat.api_message(target), data=data,
    )  # fmt: skip
    await user._push(Update(update_id=0, callback_query=callback), None)


async def run(
    name: str, users: int, questions: int, start: Callable[[Sandbox], Awaitable[Any]], buttons: bool
) -> Figures:
    async with Sandbox(reply_timeout=60) as sandbox:
        stop = await start(sandbox)
        try:
            figures = await drive(sandbox, users, questions, 10_000, buttons)
        finally:
            await stop()
    ms = [r * 1000 for r in figures.reactions]
    updates = len(figures.reactions) + len(figures.callbacks)
    line = (
        f"{name:10} {updates / figures.seconds:8.1f} updates/s   "
        f"reaction p50 {statistics.median(ms):6.0f} ms  p95 {percentile(ms, 95):6.0f} ms  "
        f"p99 {percentile(ms, 99):6.0f} ms   walks {figures.walks}/{users}"
    )
    if figures.callbacks:
        within = sum(c <= 1.0 for c in figures.callbacks)
        cb = [c * 1000 for c in figures.callbacks]
        line += f"   callbacks ≤1 s {within}/{len(cb)} (p99 {percentile(cb, 99):.0f} ms)"
    print(line, flush=True)
    return figures


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

    @router.callback_query()
    async def pressed(query: CallbackQuery) -> None:
        await query.answer()

    dp = Dispatcher()
    dp.include_router(router)
    return polling(dp, sandbox.make_bot())


async def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--users", type=int, default=50)
    parser.add_argument("--questions", type=int, default=4, help="at most 8: the per-user throttle")
    parser.add_argument("--no-buttons", action="store_true", help="questions only, no button presses")
    args = parser.parse_args()
    buttons = not args.no_buttons
    with tempfile.TemporaryDirectory() as directory:
        extra = " + a button each" if buttons else ""
        print(f"{args.users} users × {args.questions} questions each{extra}")
        bare = await run("bare", args.users, args.questions, bare_bot, buttons)
        full = await run("full bot", args.users, args.questions, await full_bot(Path(directory)), buttons)
    ratio = (len(bare.reactions) + len(bare.callbacks)) / bare.seconds
    p99 = percentile(bare.reactions, 99)
    print(
        f"full/bare: throughput {(len(full.reactions) + len(full.callbacks)) / full.seconds / ratio:.2f}×"
        f"   p99 {percentile(full.reactions, 99) / p99:.1f}×"
    )


if __name__ == "__main__":
    asyncio.run(main())
