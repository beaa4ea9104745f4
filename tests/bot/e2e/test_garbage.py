"""A handled update is freed as it ends, by reference counting: nothing of it waits for the garbage
collector (issue 21). Its handler data (its event, FSM context, unit of work, the user's row) was
held in reference cycles (aiogram-i18n's context and the data it is in; the unit of work and the
storage bound to it) until the next collection, whose middle generation then stopped a crowded
bot for ~50 ms (bench/README.md)."""

from __future__ import annotations

import gc
from collections import Counter

from bot.db.middleware import Receipt
from bot.db.work import UpdateWork
from bot.storage import UpdateStorage
from tests.bot.e2e.conftest import Harness, text

PER_UPDATE = (UpdateWork, UpdateStorage, Receipt)


def alive() -> Counter[str]:
    return Counter(type(found).__name__ for found in gc.get_objects() if isinstance(found, PER_UPDATE))


async def test_a_handled_updates_work_is_freed_without_a_collection(harness: Harness) -> None:
    user = harness.user(language_code="ru")
    await user.send("/start")  # what the first answers build, built
    gc.collect()
    before = alive()
    gc.disable()  # only reference counting frees anything meanwhile
    try:
        for _ in range(3):
            await user.click(text("task-inference"))
            await user.send("/start")
        after = alive()
    finally:
        gc.enable()
    # none of the six updates' units of work, storages or receipts is left (the last update's may
    # still be on its way out)
    assert all(count <= before[name] + 1 for name, count in after.items()), (before, after)
