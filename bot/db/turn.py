"""One writer at a time on the embedded SQLite database, in arrival order, decided in this process.

Every session of the bot's sessionmaker takes `WriteTurn` before its first statement: waiters queue
here and the turn passes on the moment a session ends, so SQLite's busy handler (which sleeps and
retries in no order) never waits. A session holds the turn until its transaction ends (no handler
holds one: bot.db.work); the inbox's receipt and the writer go ahead of the others
(`take_turn_ahead`). With SQLite run
on the event loop (bot.db.inline_sqlite) this is also what keeps a writer from waiting inside SQLite
and blocking the loop. Reentrant per task, released in ``finally``: a cancelled or failing update
cannot leave it taken. Only for SQLite: PostgreSQL has row locks and many writers. The contract:
docs/persistence.md.
"""

from __future__ import annotations

import asyncio
import functools
import logging
from collections import deque
from collections.abc import Awaitable, Callable
from typing import Any

from sqlalchemy.ext.asyncio import AsyncSession

log = logging.getLogger(__name__)

TURN_KEY = "write_turn"
"""``session.info`` key of the session's `WriteTurn` (set by bot.db.engine.create_sessionmaker)."""


async def take_turn_ahead(session: AsyncSession) -> None:
    """The session's turn, ahead of the updates' sessions queued for it (the inbox recording a poll
    batch, the writer committing finished updates: every update in hand waits for them). Nothing
    where the session takes no turns (PostgreSQL)."""
    if isinstance(session, TurnSession):
        await session.take_turn(ahead=True)


class WriteTurn:
    """A FIFO lock owned by a task, reentrant for that task, with a lane ahead of the others."""

    def __init__(self) -> None:
        self.holder: asyncio.Task[Any] | None = None
        self.depth = 0
        self._ahead: deque[asyncio.Future[None]] = deque()
        self._waiting: deque[asyncio.Future[None]] = deque()

    def held_by_me(self) -> bool:
        return self.holder is not None and self.holder is asyncio.current_task()

    @property
    def queued(self) -> int:
        return len(self._ahead) + len(self._waiting)

    async def acquire(self, *, ahead: bool = False, depth: int = 1) -> None:
        task = asyncio.current_task()
        if self.holder is task and task is not None:
            self.depth += depth
            return
        if self.holder is None and not self.queued:
            self.holder, self.depth = task, depth
            return
        future: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        (self._ahead if ahead else self._waiting).append(future)
        try:
            await future
        except asyncio.CancelledError:
            if future.done() and not future.cancelled():
                # Granted in the same moment as cancelled: the turn is ours; pass it on.
                self.holder, self.depth = task, depth
                self.release()
            else:
                with_future = self._ahead if future in self._ahead else self._waiting
                if future in with_future:
                    with_future.remove(future)
            raise
        self.holder, self.depth = task, depth

    def release(self) -> None:
        """Release one level; the last one hands the turn to the next waiter. A task not holding
        the turn releases nothing (its acquire was cancelled before it got the turn)."""
        if not self.held_by_me():
            log.debug("write turn released by a task that does not hold it: ignored")
            return
        self.depth -= 1
        if self.depth > 0:
            return
        self.holder, self.depth = None, 0
        self._hand_over()

    def _hand_over(self) -> None:
        for lane in (self._ahead, self._waiting):
            while lane:
                future = lane.popleft()
                if not future.done():
                    future.set_result(None)
                    # The waiter becomes the holder when it runs; until then nobody else may take it.
                    self.holder = _GRANTED
                    return


class _Granted:
    """Placeholder holder between a hand-over and the waiter running."""


_GRANTED: Any = _Granted()


def _taking_turn(method: Callable[..., Awaitable[Any]]) -> Any:
    """``method`` of AsyncSession, after `TurnSession.take_turn`."""

    @functools.wraps(method)
    async def with_turn(self: TurnSession, *args: Any, **kwargs: Any) -> Any:
        await self.take_turn()
        return await method(self, *args, **kwargs)

    return with_turn


class TurnSession(AsyncSession):
    """An AsyncSession that takes its sessionmaker's `WriteTurn` before its first statement and
    gives it back when its transaction ends (commit, rollback) or the session does: an update whose
    writes all wait for the group commit (bot.db.group_commit) never queues for the turn. Plain
    AsyncSession behaviour otherwise. ``async with session.begin()`` commits without `commit`: the
    turn then goes back with the session's end, right after it in the bot's code."""

    async def take_turn(self, *, ahead: bool = False) -> None:
        """The turn, for the session's statements to come (at once when it has it already)."""
        turn: WriteTurn | None = self.info.get(TURN_KEY)
        if turn is not None and not self.info.get(_TAKEN):
            await turn.acquire(ahead=ahead)
            self.info[_TAKEN] = True

    def _give_turn(self) -> None:
        turn: WriteTurn | None = self.info.get(TURN_KEY)
        if turn is not None and self.info.pop(_TAKEN, False):
            turn.release()

    # Every method that may issue a statement takes the turn first.
    execute = _taking_turn(AsyncSession.execute)
    scalar = _taking_turn(AsyncSession.scalar)
    scalars = _taking_turn(AsyncSession.scalars)
    get = _taking_turn(AsyncSession.get)
    get_one = _taking_turn(AsyncSession.get_one)
    stream = _taking_turn(AsyncSession.stream)
    stream_scalars = _taking_turn(AsyncSession.stream_scalars)
    run_sync = _taking_turn(AsyncSession.run_sync)
    flush = _taking_turn(AsyncSession.flush)
    refresh = _taking_turn(AsyncSession.refresh)
    merge = _taking_turn(AsyncSession.merge)
    delete = _taking_turn(AsyncSession.delete)
    connection = _taking_turn(AsyncSession.connection)

    async def commit(self) -> None:
        """Commit, then give the turn back. A session that ran no statement has nothing to commit
        and does not queue for the turn (an update whose user row is in memory runs none before its
        handler: it waited for the writers ahead of it for nothing)."""
        if self.in_transaction():
            await self.take_turn()
        try:
            await super().commit()
        finally:
            self._give_turn()

    async def rollback(self) -> None:
        try:
            await super().rollback()
        finally:
            self._give_turn()

    async def __aexit__(self, type_: Any, value: Any, traceback: Any) -> None:
        try:
            await super().__aexit__(type_, value, traceback)
        finally:
            self._give_turn()


_TAKEN = "write_turn_taken"


def turn_of(session: AsyncSession) -> WriteTurn | None:
    turn = session.info.get(TURN_KEY)
    return turn if isinstance(turn, WriteTurn) else None
