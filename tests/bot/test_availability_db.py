"""`bot.db.availability` on SQLite and PostgreSQL: an override written by one process (replica) is
read by another — at its start, and on PostgreSQL within `refresh_s` — and applied over the offers."""

from __future__ import annotations

import asyncio

import pytest

from bot import keyboards
from bot.db.availability import LiveAvailability, apply
from bot.db.engine import create_engine, create_sessionmaker
from core.catalogue.catalog import default_catalog

SHIPPED = default_catalog()
OFFER = "rtx4090-48gb-x2"


@pytest.fixture(params=["sqlite", "postgres"])
def db_url(request: pytest.FixtureRequest) -> str:
    return str(request.getfixturevalue(f"migrated_{request.param}_url"))


def availability_of(catalog_offers: list, offer_id: str) -> str:  # type: ignore[type-arg]
    return next(o.availability for o in catalog_offers if o.id == offer_id)


async def changed_to(live: LiveAvailability, value: str) -> str:
    """Waits (5 s at most) until `live` has read OFFER's override as `value`: its refresh is an event
    in the background."""
    async with asyncio.timeout(5):
        while (seen := availability_of((await live.catalog(SHIPPED)).offers, OFFER)) != value:
            await asyncio.sleep(0.01)
    return seen


async def test_an_override_reaches_another_replica(db_url: str) -> None:
    engine = create_engine(db_url)
    sessions = create_sessionmaker(engine)
    here = LiveAvailability(sessions, refresh_s=None)
    other = LiveAvailability(sessions, refresh_s=0.05)  # another replica, on PostgreSQL's refresh
    try:
        await here.start()
        await other.start()
        assert await other.catalog(SHIPPED) is SHIPPED  # nothing overridden: the file's own catalogue
        await here.set(OFFER, "sold_out", by=1)
        assert availability_of((await here.catalog(SHIPPED)).offers, OFFER) == "sold_out"  # at once here
        assert await changed_to(other, "sold_out") == "sold_out"  # within its refresh there
        restarted = LiveAvailability(sessions, refresh_s=None)  # a new process reads it at start
        await restarted.start()
        assert availability_of((await restarted.catalog(SHIPPED)).offers, OFFER) == "sold_out"
        await restarted.set(OFFER, "on_request", by=2)
        assert await changed_to(other, "on_request") == "on_request"
        # `here` reads only at start (SQLite: one process owns the database, the change was its own)
        assert availability_of((await here.catalog(SHIPPED)).offers, OFFER) == "sold_out"
        assert availability_of(SHIPPED.offers, OFFER) == "available"  # the file's catalogue untouched
    finally:
        await other.stop()
        await engine.dispose()


def test_the_default_rent_button_never_shows_a_sold_out_offer() -> None:
    """The price list's and the "other task" note's rent button (`keyboards.first_offer`)."""
    assert keyboards.first_offer(SHIPPED).id == "rtx4090-48gb-x1"  # type: ignore[union-attr]
    taken = apply(SHIPPED, {"rtx4090-48gb-x1": "sold_out"})
    shown = keyboards.first_offer(taken)
    assert shown is not None and shown.availability != "sold_out"
    everything = apply(SHIPPED, {o.id: "sold_out" for o in SHIPPED.offers})
    assert keyboards.first_offer(everything) is None
