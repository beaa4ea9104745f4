"""What the bot keeps per user in memory stays bounded: the users' locks exist only while an update of
theirs is in hand, a throttle bucket goes once it has refilled, remembered FSM records and user rows
are copies of what was committed (issue 21; figures: bench/memory_per_user.py)."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime

from aiogram.fsm.storage.base import StorageKey

from bot.db.middleware import KnownUsers
from bot.db.models import User
from bot.storage import Committed, UserLocks
from bot.throttle import Limits, Throttle


def key(user: int) -> StorageKey:
    return StorageKey(bot_id=1, chat_id=user, user_id=user)


async def test_a_users_lock_goes_when_their_last_update_finishes() -> None:
    locks = UserLocks()
    order: list[str] = []

    async def update(user: int, name: str, hold: asyncio.Event | None = None) -> None:
        async with locks.lock(key(user)):
            order.append(f"{name} in")
            if hold is not None:
                await hold.wait()
            order.append(f"{name} out")

    hold = asyncio.Event()
    first = asyncio.create_task(update(1, "a", hold))
    await asyncio.sleep(0)
    second = asyncio.create_task(update(1, "b"))  # waits for the first: one update per user at a time
    others = [asyncio.create_task(update(user, f"u{user}")) for user in range(2, 102)]
    await asyncio.gather(*others)
    assert len(locks) == 1  # only the user whose updates are in hand
    hold.set()
    await asyncio.gather(first, second)
    assert order[:1] == ["a in"] and order.index("a out") < order.index("b in")
    assert len(locks) == 0


async def test_a_cancelled_waiter_leaves_no_lock() -> None:
    locks = UserLocks()
    hold = asyncio.Event()

    async def holder() -> None:
        async with locks.lock(key(1)):
            await hold.wait()

    async def waiter() -> None:
        async with locks.lock(key(1)):
            pass

    held = asyncio.create_task(holder())
    await asyncio.sleep(0)
    waiting = asyncio.create_task(waiter())
    await asyncio.sleep(0)
    waiting.cancel()
    await asyncio.gather(waiting, return_exceptions=True)
    hold.set()
    await held
    assert len(locks) == 0


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def test_refilled_buckets_are_forgotten() -> None:
    clock = Clock()
    throttle = Throttle(messages=Limits(3, 0.5), buttons=Limits(2, 1.0), clock=clock)
    for user in range(1000):
        assert throttle.check(user) == "allow"
        assert throttle.check(user, "button") == "allow"
    assert len(throttle) == 2000
    clock.now += 3 / 0.5  # every bucket has refilled: as good as a new one
    assert throttle.check(5000) == "allow"
    assert len(throttle) == 1
    # a user whose bucket is not full yet keeps it
    assert [throttle.check(7) for _ in range(4)] == ["allow"] * 3 + ["notice"]
    clock.now += 1 / 0.5
    assert throttle.check(8) == "allow"
    assert [throttle.check(7) for _ in range(2)] == ["allow", "notice"]  # one token back, not three


def test_a_remembered_record_is_a_copy_of_the_committed_one() -> None:
    committed = Committed()
    data = {"answers": {"task": "inference", "models": ["a", "b"]}, "msg_id": 2}
    committed.put("k", ("Wizard:result", data))
    data["answers"]["task"] = "changed after the commit"
    first = committed.get("k")
    assert first == ("Wizard:result", {"answers": {"task": "inference", "models": ["a", "b"]}, "msg_id": 2})
    assert first is not None
    first[1]["msg_id"] = 3  # a reader changing its copy changes nothing kept
    assert committed.get("k") == ("Wizard:result", {**first[1], "msg_id": 2})
    committed.put("new", (None, {}))
    assert committed.get("new") == (None, {}) and committed.get("missing") is None


def test_a_kept_user_row_is_a_copy_taken_at_the_commit() -> None:
    users = KnownUsers(keep_rows=True)
    now = datetime(2026, 1, 1, tzinfo=UTC)
    row = User(id=7, telegram_id=70, username="u", first_name="F", language=None,
               language_from_telegram="ru", source=None, created_at=now, last_seen_at=now,
               currency=None, referred_by=None)  # fmt: skip
    users.keep(row)
    assert users.row(70) is None  # only rows this process wrote (or found written)
    users.written(70, ("u", "F", "ru"))
    users.keep(row)
    row.language = "en"  # an update changing its copy, then failing: nothing kept changes
    kept = users.row(70)
    assert kept is not None and kept.language is None and kept.id == 7 and kept.created_at == now
    kept.currency = "USD"
    users.keep(kept)  # the update committed: its copy is what is kept
    again = users.row(70)
    assert again is not None and again.currency == "USD" and again is not kept
    users.forget(70)
    assert users.row(70) is None and not users.seen(70)
