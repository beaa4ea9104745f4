"""The figures /metrics reads from the database at scrape time (bot.metrics.read_snapshot), on SQLite and
on PostgreSQL: the inbox backlog of this bot only, the lead outbox by status, leads by source (personal
links folded), CRM deliveries by destination and status; and a failing database is reported, not raised."""

from __future__ import annotations

from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from bot.db import leads as lead_db
from bot.db import processed_updates, users
from bot.db.models import LEAD_FAILED, LEAD_RESERVATION, utc_now
from bot.metrics import Metrics, Sources, read_snapshot
from tests.bot import both_backends

db_url = both_backends.db_url
sessionmaker = both_backends.sessionmaker

BOT = 42


async def test_the_snapshot_counts_backlog_leads_and_crm(
    sessionmaker: async_sessionmaker[AsyncSession],
) -> None:
    empty = await read_snapshot(sessionmaker, BOT)
    assert (empty.ok, empty.inbox_pending, empty.leads_by_status, empty.leads_by_source) == (True, 0, {}, {})
    async with sessionmaker() as session, session.begin():
        soon = utc_now()
        await processed_updates.receive_updates(
            session, bot_id=BOT, updates=[(1, {"update_id": 1}), (2, {})], lease_until=soon
        )
        await processed_updates.receive_updates(
            session, bot_id=BOT + 1, updates=[(1, {"update_id": 1})], lease_until=soon
        )
        await processed_updates.finish_update(session, bot_id=BOT, update_id=1)
        leads = []
        for n, source in enumerate(["webinar", "ref_7", "ref_8", None]):
            await users.upsert_user(
                session,
                telegram_id=100 + n,
                username=None,
                first_name="A",
                telegram_language="ru",
                source=source,
            )
            lead, _ = await lead_db.create_lead(
                session, telegram_id=100 + n, contact_kind="email", contact="a@example.com", comment=None,
                source=source, dialog_id=None, request=None, summary={"card": "c"}, dedup_key=f"k{n}",
            )  # fmt: skip
            leads.append(lead)
        leads[0].kind = LEAD_RESERVATION
        leads[1].delivery_status = LEAD_FAILED
        await lead_db.enqueue_created(session, ["webhook"], since=soon.replace(year=2000), limit=10)
    snap = await read_snapshot(sessionmaker, BOT)
    assert snap.ok and snap.inbox_pending == 1  # update 2 of this bot; not update 1, not the other bot's
    assert snap.leads_by_status == {"pending": 3, "failed": 1}
    assert snap.leads_by_source == {("webinar", "reservation"): 1, ("ref", "quote"): 2, ("none", "quote"): 1}
    assert snap.crm_by_status == {("webhook", "pending"): 4}


async def test_a_failing_database_marks_the_scrape(sessionmaker: async_sessionmaker[AsyncSession]) -> None:
    def broken() -> None:
        raise ConnectionRefusedError

    metrics = Metrics(Sources(sessionmaker=broken, bot_id=BOT))  # type: ignore[arg-type]
    await metrics.refresh()
    body, _ = metrics.exposition()
    assert b"gpufit_scrape_database_ok 0.0" in body and b"gpufit_inbox_pending_updates" not in body
    metrics.sources.sessionmaker = sessionmaker
    await metrics.refresh()
    body, _ = metrics.exposition()
    assert b"gpufit_scrape_database_ok 1.0" in body and b"gpufit_inbox_pending_updates 0.0" in body
