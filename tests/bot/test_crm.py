"""The CRM push's rounds on a real SQLite file and a real PostgreSQL database, against the fake
webhook (tests/fake_crm.py): `lead.claimed` enqueued by the function the claim button calls, a lead
asked before any answer, a stale lead given up, a destination set later, two replicas enqueueing."""

from collections.abc import AsyncIterator
from datetime import timedelta

import pytest
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from bot import outbox
from bot.crm.push import CrmPush
from bot.crm.webhook import Webhook
from bot.db import leads as lead_db
from bot.db.models import CRM_FAILED, CRM_LEAD_CLAIMED, CRM_LEAD_CREATED, CRM_PENDING, CRM_SENT, Lead, utc_now
from bot.outbox import LeadOutbox
from tests.bot import both_backends
from tests.bot.test_lead_db import new_lead
from tests.fake_crm import FakeWebhook

SALES = {"crm-title-plain": "Заявка #{id} из Telegram"}


def tr(key: str, **args: object) -> str:
    return SALES[key].format(**args)


# each test runs on SQLite and on PostgreSQL
db_url = both_backends.db_url
sessionmaker = both_backends.sessionmaker


@pytest.fixture
async def hook() -> AsyncIterator[FakeWebhook]:
    async with FakeWebhook() as fake:
        yield fake


def pusher(sessionmaker: async_sessionmaker[AsyncSession], hook: FakeWebhook) -> CrmPush:
    return CrmPush(sessionmaker, [Webhook(hook.url)], tr=tr, lang="ru")


async def test_a_claim_is_pushed_once_after_the_lead(
    sessionmaker: async_sessionmaker[AsyncSession], hook: FakeWebhook
) -> None:
    crm = pusher(sessionmaker, hook)
    async with sessionmaker() as session, session.begin():
        lead = await new_lead(session, "claimed")
    try:
        assert await crm.enqueue() == 1 and await crm.enqueue() == 0
        assert await crm.push_due() == 1
        async with sessionmaker() as session, session.begin():
            row = await session.get(Lead, lead.id)
            assert row is not None
            box = LeadOutbox(sessionmaker, None, crm=crm)
            assert await box.lead_claimed(session, row, by="Маша") == 1
            assert await box.lead_claimed(session, row, by="Петя") == 0  # a second press: no second event
            assert await LeadOutbox(sessionmaker, None).lead_claimed(session, row, by="Маша") == 0
        assert await crm.push_due() == 1 and await crm.push_due() == 0
    finally:
        await crm.stop()
    created, claimed = hook.deals.values()
    assert (created["event"], claimed["event"]) == (CRM_LEAD_CREATED, CRM_LEAD_CLAIMED)
    assert claimed["event_data"]["claimed_by"] == "Маша" and claimed["lead_id"] == created["lead_id"]
    assert claimed["idempotency_key"] != created["idempotency_key"]
    # a lead asked before any answer: no configuration, a title all the same
    assert created["configuration"] is None and created["recommendation"] is None
    assert created["title"] == f"Заявка #{lead.id} из Telegram"
    assert created["contact"] == {"kind": "email", "value": "ann@example.com"}
    assert created["username"] == "ann"


async def test_a_stale_lead_is_given_up_and_an_old_one_never_enqueued(
    sessionmaker: async_sessionmaker[AsyncSession], hook: FakeWebhook, monkeypatch: pytest.MonkeyPatch
) -> None:
    crm = pusher(sessionmaker, hook)
    async with sessionmaker() as session, session.begin():
        await new_lead(session, "old", now=utc_now() - outbox.LEAD_FRESH_FOR - timedelta(minutes=1))
        fresh = await new_lead(session, "fresh")
    hook.down(500)
    try:
        assert await crm.enqueue() == 1  # the old one is past LEAD_FRESH_FOR: never pushed
        assert await crm.push_due() == 0
        async with sessionmaker() as session:
            (row,) = await lead_db.crm_deliveries(session)
        assert (row.lead_id, row.status, row.attempts) == (fresh.id, CRM_PENDING, 1)
        monkeypatch.setattr(outbox, "LEAD_FRESH_FOR", timedelta(0))
        assert await crm.push_due(all_of_them=True) == 0
        async with sessionmaker() as session:
            (row,) = await lead_db.crm_deliveries(session)
        assert (row.status, row.attempts, row.next_attempt_at) == (CRM_FAILED, 2, None)
        assert "HTTP 500" in (row.last_error or "")
    finally:
        await crm.stop()


async def test_two_replicas_enqueue_and_push_each_lead_once(
    sessionmaker: async_sessionmaker[AsyncSession], hook: FakeWebhook
) -> None:
    one, two = pusher(sessionmaker, hook), pusher(sessionmaker, hook)
    async with sessionmaker() as session, session.begin():
        for key in "abc":
            await new_lead(session, key)
    try:
        assert await one.enqueue() + await two.enqueue() == 3
        assert await one.push_due() + await two.push_due() == 3
    finally:
        await one.stop()
        await two.stop()
    async with sessionmaker() as session:
        rows = await lead_db.crm_deliveries(session)
    assert [r.status for r in rows] == [CRM_SENT] * 3 and hook.repeats == 0 and len(hook.deals) == 3
