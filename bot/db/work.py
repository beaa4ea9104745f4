"""An update's unit of work: what it changes, as data, written after its handler returned.

DbSessionMiddleware makes one `UpdateWork` per update (handler data ``work``). The update's FSM
records (through the FSMContext bound to it, bot.storage), its dialog rows' writes (bot.db.dialogs
appends them) and what memory may take once they are on disk are kept here while the handler runs;
then the writer (bot.db.group_commit) commits all of it with the update's done mark, after its last
Telegram call. A failed update's work is dropped: nothing of it is written or remembered. A handler
holds no transaction: it reads with `UpdateWork.read`, and what must be on disk before it speaks (a
lead before its confirmation) it writes with `UpdateWork.write`, committed before the call returns.
The contract: docs/persistence.md.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from copy import deepcopy
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Concatenate, ParamSpec, TypeVar

from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

if TYPE_CHECKING:
    from bot.db.dialogs import DialogIds

P = ParamSpec("P")
T = TypeVar("T")
Record = tuple[str | None, dict[str, Any]]
"""An FSM record: (state, data); a key never written has (None, {})."""


def copy_data(data: Any) -> Any:
    """FSM data copied for a caller that may change it (what `copy.deepcopy` gives, in a third of
    its time: the data is JSON, its dicts and lists copied, its scalars shared; anything else is
    deep-copied)."""
    kind = type(data)
    if kind is dict:
        return {key: copy_data(value) for key, value in data.items()}
    if kind is list:
        return [copy_data(value) for value in data]
    if kind in (str, int, float, bool) or data is None:
        return data
    return deepcopy(data)


@dataclass(frozen=True)
class DialogWrite:
    """An update of some columns of one dialog row (bind parameters ``dialog_id`` and ``v_{column}``)."""

    columns: tuple[str, ...]
    params: dict[str, Any]


@dataclass(frozen=True)
class DialogInsert:
    """A new dialog row, its id included (bot.db.dialogs.DialogIds)."""

    row: dict[str, Any]


@dataclass(frozen=True)
class DialogAbandon:
    """The owner's started dialogs marked abandoned (bind parameters ``owner`` and ``now``)."""

    params: dict[str, Any]


DialogOp = DialogWrite | DialogInsert | DialogAbandon


@dataclass(eq=False)
class UpdateWork:
    """One update's writes waiting for its commit.

    ``sessionmaker``: the sessions of its reads and of the writes that cannot wait; ``dialog_ids``:
    where new dialog rows take their ids from, so they can wait too (None: inserted at once);
    ``records``: the FSM records as the update sees them; ``fsm``: those it changed; ``dialogs``: its
    dialog rows' writes, in order; ``committed``: what to run once all of it is on disk (memory
    taking what the database has); ``then``: what to start once the update is finished (its
    picture, sent apart: the user's next update does not wait for it); ``undo``: what takes back a
    row it had to write at once (a new dialog's, where its id cannot wait), run if the update fails."""

    bot_id: int
    update_id: int
    sessionmaker: async_sessionmaker[AsyncSession]
    dialog_ids: DialogIds | None = None
    records: dict[str, Record] = field(default_factory=dict)
    fsm: dict[str, Record] = field(default_factory=dict)
    dialogs: list[DialogOp] = field(default_factory=list)
    committed: list[Callable[[], None]] = field(default_factory=list)
    then: list[Callable[[], None]] = field(default_factory=list)
    undo: list[Callable[[AsyncSession], Awaitable[None]]] = field(default_factory=list)

    async def read(
        self, fn: Callable[Concatenate[AsyncSession, P], Awaitable[T]], *args: P.args, **kwargs: P.kwargs
    ) -> T:
        """``fn(session, …)`` in a session of its own, closed before this returns."""
        async with self.sessionmaker() as session:
            return await fn(session, *args, **kwargs)

    async def write(
        self, fn: Callable[Concatenate[AsyncSession, P], Awaitable[T]], *args: P.args, **kwargs: P.kwargs
    ) -> T:
        """``fn(session, …)`` in a transaction of its own, committed before this returns: on disk
        before the handler's next line (a crash later replays the update, which writes it again)."""
        async with self.sessionmaker() as session, session.begin():
            return await fn(session, *args, **kwargs)

    @asynccontextmanager
    async def session(self) -> AsyncIterator[AsyncSession]:
        """A session of its own for a block that reads (and may write: committed at the block's end)."""
        async with self.sessionmaker() as session:
            yield session
            if session.in_transaction():
                await session.commit()

    async def commit(self) -> None:
        """Write what the work holds so far (not its done mark) now, in a transaction of its own."""
        if self.dialogs or self.fsm:
            await self.commit_with(_nothing)

    async def commit_with(
        self, fn: Callable[Concatenate[AsyncSession, P], Awaitable[T]], *args: P.args, **kwargs: P.kwargs
    ) -> T:
        """`write` with what the work holds so far (`commit`) in the same transaction: a handler's
        own rows and the state that goes with them (saved into the FSM context first) commit together."""
        from bot.db.group_commit import write_works  # the writer imports this module

        async with self.sessionmaker() as session, session.begin():
            if self.dialogs or self.fsm:  # first: a row of ``fn`` may name a new dialog's
                await write_works(session, [self], mark=False)
            result = await fn(session, *args, **kwargs)
        self.done()
        self.dialogs.clear()
        self.fsm.clear()
        return result

    def done(self) -> None:
        """Its writes are on disk: memory may take them."""
        for remember in self.committed:
            remember()


async def _nothing(session: AsyncSession) -> None:
    """No rows of a handler's own (`UpdateWork.commit`)."""
