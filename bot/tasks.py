"""Background tasks of the bot's own (the lead outbox, the CRM push, the reminders, the availability
refresh): stopped the one way, cancelled and awaited, so none outlives the dispatcher's shutdown."""

from __future__ import annotations

import asyncio
import contextlib
from typing import Any


async def cancel(task: asyncio.Task[Any] | None) -> None:
    """Cancel ``task`` and wait until it has ended; None (never started) is nothing to do."""
    if task is None:
        return
    task.cancel()
    with contextlib.suppress(asyncio.CancelledError):
        await task
