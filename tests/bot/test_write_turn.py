"""bot.db.turn.WriteTurn: one holder at a time, in arrival order, resumed holders first, reentrant per
task, never left taken by a cancelled waiter. Tasks are driven by events, not by time."""

from __future__ import annotations

import asyncio

from bot.db.turn import WriteTurn


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
    assert turn.holder is None and turn.waits == 5


async def test_a_resumed_holder_goes_before_new_sessions() -> None:
    turn = WriteTurn()
    order: list[str] = []
    telegram_answered = asyncio.Event()
    paused = asyncio.Event()

    async def update() -> None:
        await turn.acquire()
        depth = turn.pause()  # its Telegram call: the turn is free meanwhile
        paused.set()
        await telegram_answered.wait()
        await turn.resume(depth)
        order.append("resumed")
        turn.release()

    async def newcomer() -> None:
        await turn.acquire()
        order.append("new")
        turn.release()

    first = asyncio.create_task(update())
    await paused.wait()
    await turn.acquire()  # another session writes while the update waits on Telegram
    late = asyncio.create_task(newcomer())
    while turn.queued < 1:
        await asyncio.sleep(0)
    telegram_answered.set()
    while turn.queued < 2:
        await asyncio.sleep(0)
    turn.release()
    await asyncio.gather(first, late)
    assert order == ["resumed", "new"]


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
