"""`bot.db.availability` on SQLite and PostgreSQL: an override written by one process (replica) is
read by another — at its start, and on PostgreSQL within `refresh_s` — and applied over the offers."""

from __future__ import annotations

import pytest

from bot import keyboards
from bot.db.availability import LiveAvailability, apply
from bot.db.engine import create_engine, create_sessionmaker
from core.catalog import default_catalog

SHIPPED = default_catalog()
OFFER = "rtx4090-48gb-x2"


@pytest.fixture(params=["sqlite", "postgres"])
def db_url(request: pytest.FixtureRequest) -> str:
    return str(request.getfixturevalue(f"migrated_{request.param}_url"))


def availability_of(catalog_offers: list, offer_id: str) -> str:  # type: ignore[type-arg]
    return next(o.availability for o in catalog_offers if o.id == offer_id)


async def test_an_override_reaches_another_replica(db_url: str) -> None:
    engine = create_engine(db_url)
    try:
        sessions = create_sessionmaker(engine)
        here, other = LiveAvailability(sessions, refresh_s=0), LiveAvailability(sessions, refresh_s=3600)
        assert await other.catalog(SHIPPED) is SHIPPED  # nothing overridden: the file's own catalogue
        await here.set(OFFER, "sold_out", by=1)
        assert availability_of((await here.catalog(SHIPPED)).offers, OFFER) == "sold_out"
        # read once already, not due for an hour: still the file's value
        assert availability_of((await other.catalog(SHIPPED)).offers, OFFER) == "available"
        restarted = LiveAvailability(sessions, refresh_s=None)  # a new process reads it at start
        assert availability_of((await restarted.catalog(SHIPPED)).offers, OFFER) == "sold_out"
        await restarted.set(OFFER, "on_request", by=2)
        # a replica whose copy is due reads the table again on its next update
        assert availability_of((await here.catalog(SHIPPED)).offers, OFFER) == "on_request"
        assert availability_of(SHIPPED.offers, OFFER) == "available"  # the file's catalogue untouched
    finally:
        await engine.dispose()


def test_the_default_rent_button_never_shows_a_sold_out_offer() -> None:
    """The price list's and the "other task" note's rent button (`keyboards.first_offer`)."""
    assert keyboards.first_offer(SHIPPED).id == "rtx4090-48gb-x1"  # type: ignore[union-attr]
    taken = apply(SHIPPED, {"rtx4090-48gb-x1": "sold_out"})
    shown = keyboards.first_offer(taken)
    assert shown is not None and shown.availability != "sold_out"
    everything = apply(SHIPPED, {o.id: "sold_out" for o in SHIPPED.offers})
    assert keyboards.first_offer(everything) is None
