from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator

import pytest
from aiogram import Bot, Dispatcher

from tgsandbox import Sandbox

from .tiny_bot import make_router


@pytest.fixture
async def sandbox() -> AsyncIterator[Sandbox]:
    async with Sandbox(reply_timeout=3.0) as running:
        yield running


@pytest.fixture
async def bot(sandbox: Sandbox) -> Bot:
    return sandbox.make_bot()


@contextlib.asynccontextmanager
async def polling(bot: Bot, dispatcher: Dispatcher) -> AsyncIterator[None]:
    """Run ``dispatcher`` in polling mode for the duration of the block, then stop it cleanly."""
    task = asyncio.create_task(
        dispatcher.start_polling(bot, handle_signals=False, close_bot_session=False, polling_timeout=1)
    )
    try:
        yield
    finally:
        with contextlib.suppress(RuntimeError):  # polling may have failed to start: its error wins
            await asyncio.wait_for(dispatcher.stop_polling(), timeout=5)
        await asyncio.wait_for(task, timeout=5)


@pytest.fixture
async def polling_bot(sandbox: Sandbox, bot: Bot) -> AsyncIterator[Bot]:
    dispatcher = Dispatcher()
    dispatcher.include_router(make_router())
    async with polling(bot, dispatcher):
        yield bot
