"""An update's unit of work: what it changes, as data, written after its handler returned.

DbSessionMiddleware makes one `UpdateWork` per update (handler data ``work``). The update's FSM
records (through the FSMContext bound to it, bot.storage), its dialog rows' writes (bot.db.repository
appends them), and what memory may take once they are on disk are kept here while the handler runs:
nothing of it is written before the handler returned. Then all of it goes into one transaction with
the update's done mark (bot.db.group_commit.write_works): the update's own when it wrote something
else, else a group commit. A failed update's work is dropped: nothing of it is written or remembered.
The contract: docs/persistence.md.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from sqlalchemy.ext.asyncio import AsyncSession

if TYPE_CHECKING:
    from bot.db.repository import DialogIds

Record = tuple[str | None, dict[str, Any]]
"""An FSM record: (state, data); a key never written has (None, {})."""


@dataclass(frozen=True)
class DialogWrite:
    """An update of some columns of one dialog row (bind parameters ``dialog_id`` and ``v_{column}``)."""

    columns: tuple[str, ...]
    params: dict[str, Any]


@dataclass(frozen=True)
class DialogInsert:
    """A new dialog row, its id included (bot.db.repository.DialogIds)."""

    row: dict[str, Any]


@dataclass(frozen=True)
class DialogAbandon:
    """The owner's started dialogs marked abandoned (bind parameters ``owner`` and ``now``)."""

    params: dict[str, Any]


DialogOp = DialogWrite | DialogInsert | DialogAbandon


@dataclass(eq=False)
class UpdateWork:
    """One update's writes waiting for its commit.

    ``session``: the update's session, for its reads and for the writes that cannot wait (a new
    dialog row whose id the database gives, a lead); ``dialog_ids``: where new dialog rows take their
    ids from, so they can wait too (one process owns the database); ``records``: the FSM records as
    the update sees them; ``fsm``: those it changed; ``dialogs``: its dialog rows' writes, in order;
    ``committed``: what to run once all of it is on disk (memory taking what the database has)."""

    bot_id: int
    update_id: int
    session: AsyncSession
    dialog_ids: DialogIds | None = None
    owner: asyncio.Task[Any] | None = None
    records: dict[str, Record] = field(default_factory=dict)
    fsm: dict[str, Record] = field(default_factory=dict)
    dialogs: list[DialogOp] = field(default_factory=list)
    committed: list[Callable[[], None]] = field(default_factory=list)
    parsed: dict[tuple[str, Any], tuple[Any, Any]] = field(default_factory=dict)

    async def commit(self) -> None:
        """Commit what the update wrote in its session so far (not its ops: they wait for its end)."""
        await self.session.commit()

    def done(self) -> None:
        """Its writes are on disk: memory may take them."""
        for remember in self.committed:
            remember()


def session_of(db: AsyncSession | UpdateWork) -> AsyncSession:
    return db.session if isinstance(db, UpdateWork) else db
