"""Offer availability set by admins (`/offers off|on|request <id>`), kept in the database and applied
over the offers file's `availability` (core.catalogue.offers.RentalOffer) to the catalogue every answer uses.

`LiveAvailability` holds the overrides in memory, read at start (the dispatcher's startup), so no
update waits for them. The replica that changes one applies it at once; the embedded database
(SQLite) is one process, so nothing else reads the table. On PostgreSQL (several replicas) each
re-reads it every `REFRESH_S` seconds in the background: another replica's change is seen within
that. A read that fails keeps the last overrides and is tried again at the next interval; with none
read yet, the next update tries (the offers file's values meanwhile).
"""

from __future__ import annotations

import asyncio
import copy
import logging
from collections.abc import Mapping

from sqlalchemy import select
from sqlalchemy.exc import SQLAlchemyError
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from bot import tasks
from bot.db.models import OfferAvailability, utc_now
from bot.db.upserts import dialect_insert
from core.catalogue.catalog import Catalog
from core.catalogue.offers import AVAILABILITIES, Availability

log = logging.getLogger(__name__)

REFRESH_S = 5.0
"""Seconds a replica answers from its copy of the overrides before reading them again (PostgreSQL)."""

Overrides = Mapping[str, Availability]


async def read(session: AsyncSession) -> dict[str, Availability]:
    """The overrides in the database, offer id → availability (unknown values skipped)."""
    rows = await session.execute(select(OfferAvailability.offer_id, OfferAvailability.availability))
    return {offer_id: value for offer_id, value in rows.tuples() if _known(value)}  # type: ignore[misc]


async def write(session: AsyncSession, offer_id: str, availability: Availability, by: int | None) -> None:
    """Set (or replace) one offer's override; one statement, so two admins at once do not clash."""
    if not _known(availability):
        raise ValueError(f"unknown availability {availability!r}")
    values = {"availability": availability, "changed_by": by, "changed_at": utc_now()}
    await session.execute(
        dialect_insert(session, OfferAvailability)
        .values(offer_id=offer_id, **values)
        .on_conflict_do_update(index_elements=[OfferAvailability.offer_id], set_=values)
    )


def apply(catalog: Catalog, overrides: Overrides) -> Catalog:
    """`catalog` with its offers' availability overridden (ids not in it ignored: the file may have
    dropped one); the same object when nothing changes."""
    changed: dict[str, Availability] = {}
    for o in catalog.offers:
        value = overrides.get(o.id, o.availability)
        if value != o.availability:
            changed[o.id] = value
    if not changed:
        return catalog
    shown = copy.copy(catalog)  # the indexes are shared; only the offers list is new
    shown.offers = [
        o.model_copy(update={"availability": changed[o.id]}) if o.id in changed else o for o in catalog.offers
    ]
    return shown


class LiveAvailability:
    """The overrides in force for this process, and the catalogue with them applied (built once per
    file catalogue and set of overrides)."""

    def __init__(self, sessionmaker: async_sessionmaker[AsyncSession], refresh_s: float | None) -> None:
        self._sessionmaker = sessionmaker
        self._refresh_s = refresh_s  # None: read once (one process owns the database)
        self._overrides: dict[str, Availability] | None = None
        self._built: tuple[Catalog, tuple[tuple[str, str], ...], Catalog] | None = None
        self._task: asyncio.Task[None] | None = None

    async def start(self) -> None:
        """Dispatcher startup: the overrides read; on PostgreSQL, read again every `refresh_s`."""
        await self._read()
        if self._refresh_s is not None and (self._task is None or self._task.done()):
            self._task = asyncio.create_task(self._refresh(self._refresh_s), name="offer-availability")

    async def stop(self) -> None:
        await tasks.cancel(self._task)
        self._task = None

    async def _refresh(self, every_s: float) -> None:
        while True:
            await asyncio.sleep(every_s)
            await self._read()

    async def catalog(self, base: Catalog) -> Catalog:
        """`base` (the offers file's catalogue) with the overrides in force applied."""
        if self._overrides is None:  # not read at start (the database was down): try now
            await self._read()
        overrides = self._overrides or {}
        key = tuple(sorted(overrides.items()))
        if self._built is None or self._built[0] is not base or self._built[1] != key:
            self._built = (base, key, apply(base, overrides))
        return self._built[2]

    async def _read(self) -> None:
        try:
            async with self._sessionmaker() as session:
                self._overrides = await read(session)
        except (SQLAlchemyError, OSError) as e:
            log.warning("offer availability not read (%s): the last known is used", e)

    async def set(self, offer_id: str, availability: Availability, by: int | None) -> None:
        """Store one override (committed) and apply it here at once."""
        async with self._sessionmaker() as session, session.begin():
            await write(session, offer_id, availability, by)
        self._overrides = {**(self._overrides or {}), offer_id: availability}


def _known(value: str) -> bool:
    return value in AVAILABILITIES
