"""bot.db.turn.WriteTurn: one holder at a time, in arrival order, those ahead (the receipt, the
writer) first, reentrant per task, never left taken by a cancelled waiter. Tasks are driven by
events, not by time."""

from __future__ import annotations

import asyncio

from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from bot.db.models import User
from bot.db.turn import TurnSession, WriteTurn, turn_of


async def test_waiters_get_the_turn_in_arrival_order() -> None:
    turn = WriteTurn()
    order: list[int] = []
    await turn.acquire()

    async def writer(n: int) -> None:
        await turn.acquire()
        order.append(n)
        turn.release()

    tasks = [asyncio.create_task(writer(n)) for n in range(5)]
    while turn.queued < 5:  # each task queues on its first step
        await asyncio.sleep(0)
    turn.release()
    await asyncio.gather(*tasks)
    assert order == [0, 1, 2, 3, 4]
    assert turn.holder is None and turn.queued == 0


async def test_a_session_ahead_of_updates_goes_before_those_queued() -> None:
    turn = WriteTurn()
    order: list[str] = []
    await turn.acquire()  # an update writing

    async def session(name: str, *, ahead: bool = False) -> None:
        await turn.acquire(ahead=ahead)
        order.append(name)
        turn.release()

    update = asyncio.create_task(session("update"))
    while turn.queued < 1:
        await asyncio.sleep(0)
    writer = asyncio.create_task(session("writer", ahead=True))  # the group commit, came later
    while turn.queued < 2:
        await asyncio.sleep(0)
    turn.release()
    await asyncio.gather(update, writer)
    assert order == ["writer", "update"]


async def test_the_turn_is_reentrant_for_its_task() -> None:
    turn = WriteTurn()
    await turn.acquire()
    await turn.acquire()  # a nested session of the same task does not wait for itself
    turn.release()
    assert turn.held_by_me()
    turn.release()
    assert turn.holder is None


async def test_a_cancelled_waiter_does_not_keep_the_turn() -> None:
    turn = WriteTurn()
    await turn.acquire()
    waiter = asyncio.create_task(turn.acquire())
    while turn.queued < 1:
        await asyncio.sleep(0)
    turn.release()  # handed to the waiter ...
    waiter.cancel()  # ... cancelled before it ran
    await asyncio.gather(waiter, return_exceptions=True)
    assert turn.holder is None
    await asyncio.wait_for(turn.acquire(), 1)  # free for the next one
    turn.release()


async def test_a_release_by_a_task_not_holding_it_changes_nothing() -> None:
    turn = WriteTurn()
    await turn.acquire()

    async def stranger() -> None:
        turn.release()

    await asyncio.create_task(stranger())
    assert turn.held_by_me()
    turn.release()


async def test_a_session_that_ran_no_statement_commits_without_waiting_for_the_turn(
    sessionmaker: async_sessionmaker[AsyncSession],
) -> None:
    """The update's session before its handler commits even when it ran nothing (its user row in
    memory): that must not queue behind the writers holding SQLite's turn; one that wrote does."""
    async with sessionmaker() as holder:  # a writer holds the turn
        assert isinstance(holder, TurnSession)
        await holder.take_turn()
        turn = turn_of(holder)
        assert turn is not None
        async with sessionmaker() as idle:
            await asyncio.wait_for(idle.commit(), timeout=5)  # returns while the turn is held
        assert turn.queued == 0

        async def wrote() -> None:
            async with sessionmaker() as session:
                session.add(User(telegram_id=77, first_name="Ann"))
                await session.commit()

        writing = asyncio.create_task(wrote())
        while turn.queued < 1:  # it queues: its INSERT waits for the turn
            await asyncio.sleep(0)
        assert not writing.done()
    await writing
