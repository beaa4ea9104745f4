"""Claiming a lead against a real SQLite file and a real PostgreSQL database: of presses at the same
moment exactly one wins; the reminder and escalation marks are taken once and only while unclaimed."""

import asyncio
from datetime import UTC, datetime, timedelta

import pytest
from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from bot.db import leads as lead_db
from bot.db import report, stats
from bot.db.engine import create_engine, create_sessionmaker, migrate
from bot.db.models import LEAD_SENT, LEAD_UPDATED, Lead, utc_now
from tests.bot import both_backends
from tests.bot.test_lead_db import get, new_lead

# each test runs on SQLite and on PostgreSQL
db_url = both_backends.db_url
sessionmaker = both_backends.sessionmaker


async def sent_lead(sessionmaker: async_sessionmaker[AsyncSession], key: str) -> Lead:
    async with sessionmaker() as session, session.begin():
        lead = await new_lead(session, key)
        await lead_db.mark_sent(session, lead.id, now=utc_now(), message_id=77, revision=0)
    return lead


async def claim(sessionmaker: async_sessionmaker[AsyncSession], lead_id: int, manager: int) -> bool:
    async with sessionmaker() as session, session.begin():
        won, _ = await lead_db.claim(
            session, lead_id, manager_id=manager, manager_name=f"m{manager}", now=utc_now()
        )
        return won


async def test_a_second_claim_waiting_on_the_first_loses(
    sessionmaker: async_sessionmaker[AsyncSession],
) -> None:
    lead = await sent_lead(sessionmaker, "a")
    async with sessionmaker() as first:
        await first.begin()
        won, claimed = await lead_db.claim(first, lead.id, manager_id=1, manager_name="Ann", now=utc_now())
        assert won and claimed is not None and claimed.claimed_by == 1
        second = asyncio.create_task(claim(sessionmaker, lead.id, 2))  # waits for the first's lock
        await first.commit()
    assert await second is False
    row = await get(sessionmaker, lead.id)
    assert (row.claimed_by, row.claimed_by_name) == (1, "Ann")
    assert (row.delivery_status, row.revision) == (LEAD_UPDATED, 1)  # the card is edited to say so


async def test_of_presses_at_once_exactly_one_wins(sessionmaker: async_sessionmaker[AsyncSession]) -> None:
    lead = await sent_lead(sessionmaker, "b")
    results = await asyncio.gather(*(claim(sessionmaker, lead.id, manager) for manager in range(1, 9)))
    assert sum(results) == 1
    winner = results.index(True) + 1
    row = await get(sessionmaker, lead.id)
    assert row.claimed_by == winner and row.revision == 1


async def test_reminder_and_escalation_are_taken_once_and_only_while_unclaimed(
    sessionmaker: async_sessionmaker[AsyncSession],
) -> None:
    lead = await sent_lead(sessionmaker, "c")
    other = await sent_lead(sessionmaker, "d")
    later = utc_now() + timedelta(hours=2)
    async with sessionmaker() as session:
        due = await lead_db.to_remind(session, due_before=later, limit=10)
        assert [d.id for d in due] == [lead.id, other.id]
        before = lead.created_at - timedelta(seconds=1)
        assert await lead_db.to_remind(session, due_before=before, limit=10) == []
    assert await claim(sessionmaker, other.id, 5)
    async with sessionmaker() as session, session.begin():
        assert await lead_db.mark_reminded(session, lead.id, now=later)
        assert not await lead_db.mark_reminded(session, lead.id, now=later)  # once
        assert not await lead_db.mark_reminded(session, other.id, now=later)  # claimed
        assert await lead_db.mark_escalated(session, [lead.id, other.id], now=later) == [lead.id]
        assert await lead_db.mark_escalated(session, [lead.id, other.id], now=later) == []
    async with sessionmaker() as session:
        assert await lead_db.to_remind(session, due_before=later, limit=10) == []
        assert await lead_db.earliest_unclaimed(session) == (None, None)
    row = await get(sessionmaker, lead.id)
    assert row.delivery_status == LEAD_SENT  # a reminder does not touch the card


@pytest.fixture(params=["sqlite", "postgres"])
def empty_url(request: pytest.FixtureRequest) -> str:
    return str(request.getfixturevalue(f"{request.param}_url"))


async def test_leads_from_before_the_claim_button_are_never_reminded(empty_url: str) -> None:
    """Their cards have no "Беру": the migration marks them reminded and escalated."""
    url = empty_url
    await migrate(url, "0005")
    engine = create_engine(url)
    try:
        async with engine.begin() as connection:
            now = utc_now()
            await connection.execute(
                text("INSERT INTO users (telegram_id, created_at, last_seen_at) VALUES (1, :now, :now)"),
                {"now": now},
            )
            await connection.execute(
                text(
                    "INSERT INTO leads (telegram_id, created_at, contact_kind, contact, request, summary,"
                    " dedup_key, delivery_status, attempts, card_message_id, revision)"
                    " VALUES (1, :now, 'email', 'a@b.cd', '{}', '{}', 'k', 'sent', 1, 5, 0)"
                ),
                {"now": now},
            )
        await migrate(url)
        async with create_sessionmaker(engine)() as session:
            assert await lead_db.to_remind(session, due_before=now + timedelta(days=1), limit=5) == []
            assert await lead_db.to_escalate(session, due_before=now + timedelta(days=1), limit=5) == []
    finally:
        await engine.dispose()


async def test_weekly_counts_leads_claims_and_the_median_time_to_claim(
    sessionmaker: async_sessionmaker[AsyncSession],
) -> None:
    now = datetime(2026, 12, 3, 12, 0, tzinfo=UTC)  # a Thursday of 2026-W49
    last_week = now - timedelta(days=7)
    async with sessionmaker() as session, session.begin():
        leads = [
            await new_lead(session, key, now=at)
            for key, at in (("w1", now), ("w2", now), ("w3", now), ("l1", last_week))
        ]
    for lead, minutes in zip(leads, (4, 10, None, 30), strict=True):
        if minutes is not None:
            async with sessionmaker() as session, session.begin():
                at = lead.created_at + timedelta(minutes=minutes)
                assert (await lead_db.claim(session, lead.id, manager_id=1, manager_name="m", now=at))[0]
    async with sessionmaker() as session:
        weeks = await stats.weekly(session, now=now)
    assert list(weeks)[:3] == ["2026-W49", "2026-W48", "2026-W47"] and len(weeks) == stats.WEEKS_SHOWN
    this, last = weeks["2026-W49"], weeks["2026-W48"]
    assert (this.leads, this.claimed, this.median_claim_s) == (3, 2, 7 * 60)
    assert (last.leads, last.claimed, last.median_claim_s) == (1, 1, 30 * 60)
    assert weeks["2026-W47"] == stats.Counts()
    table = report.format_report({"all": stats.Funnel(None, total=this, by_source={None: this})}, weeks)
    claims, week = table.split("\n\n")[-2:]
    assert claims.splitlines()[1].split() == ["(no", "link)", "3", "2", "7"]
    assert week.splitlines()[1].split() == ["2026-W49", "0", "3", "2", "7", "-"]


async def test_a_card_waiting_for_its_claim_edit_is_no_failure_to_tell_of(
    sessionmaker: async_sessionmaker[AsyncSession],
) -> None:
    """Sent, then edited three times (notes, answers): four attempts, none failed. The claim makes
    it due for a fifth: the admins' alert (4 failed attempts) must not take it for an outage."""
    lead = await sent_lead(sessionmaker, "e")
    for revision in range(1, 4):
        async with sessionmaker() as session, session.begin():
            assert await lead_db.set_need(session, lead.id, lead.telegram_id, need_when="today")
            await lead_db.mark_sent(session, lead.id, now=utc_now(), message_id=77, revision=revision)
    assert await claim(sessionmaker, lead.id, 5)
    row = await get(sessionmaker, lead.id)
    assert (row.attempts, row.delivery_status) == (4, LEAD_UPDATED)
    async with sessionmaker() as session:
        assert await lead_db.to_alert(session, min_attempts=4, limit=10) == []
