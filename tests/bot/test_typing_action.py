"""bot.typing_action.Typing: the chat action goes out once its time has come, never once stopped.
Driven by the loop's own order (a timer due now runs on the next iteration), not by waiting."""

from __future__ import annotations

import asyncio
from typing import Any

from bot.typing_action import Typing


class RecordingBot:
    def __init__(self) -> None:
        self.calls: list[tuple[int, str]] = []

    async def send_chat_action(self, chat_id: int, action: str, **_: Any) -> bool:
        self.calls.append((chat_id, action))
        return True


async def next_iterations(n: int = 2) -> None:
    for _ in range(n):
        await asyncio.sleep(0)


async def test_typing_is_sent_once_the_answer_is_late() -> None:
    bot = RecordingBot()
    typing = Typing(bot, 42, after=0.0)  # type: ignore[arg-type]
    await next_iterations()
    assert typing.task is not None
    await typing.task
    assert bot.calls == [(42, "typing")]


async def test_an_answer_in_time_stops_the_typing() -> None:
    bot = RecordingBot()
    typing = Typing(bot, 42, after=0.0)  # type: ignore[arg-type]
    typing.stop()  # answered before its time came
    await next_iterations()
    assert typing.task is None and bot.calls == []
