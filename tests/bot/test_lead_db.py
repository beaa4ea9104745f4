"""The lead outbox's database functions against a real SQLite file and a real PostgreSQL database:
notes joining a card, a card sent while a note joined, the admins' alert and the user's "accepted"
taken once, failed leads queued again."""

from datetime import timedelta

from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from bot.db import leads as lead_db
from bot.db import users
from bot.db.models import LEAD_FAILED, LEAD_PENDING, LEAD_SENT, LEAD_UPDATED, Lead, utc_now
from tests.bot import both_backends

# each test runs on SQLite and on PostgreSQL
db_url = both_backends.db_url
sessionmaker = both_backends.sessionmaker

ANN = 2001


async def new_lead(session: AsyncSession, key: str, **at: object) -> Lead:
    if await users.get_user(session, ANN) is None:
        await users.upsert_user(
            session, telegram_id=ANN, username="ann", first_name="Ann", telegram_language="ru", source=None
        )
    lead, created = await lead_db.create_lead(
        session, telegram_id=ANN, contact_kind="email", contact="ann@example.com", comment="\u00e9" * 5000,
        source=None, dialog_id=None, request=None, summary={"card": "card"}, dedup_key=key, **at,  # type: ignore[arg-type]
    )  # fmt: skip
    assert created
    return lead


async def get(sessionmaker: async_sessionmaker[AsyncSession], lead_id: int) -> Lead:
    async with sessionmaker() as session:
        lead = await session.get(Lead, lead_id)
        assert lead is not None
        return lead


async def test_a_note_joins_an_unsent_card_and_makes_a_sent_one_due_again(
    sessionmaker: async_sessionmaker[AsyncSession],
) -> None:
    async with sessionmaker() as session, session.begin():
        lead = await new_lead(session, "a")
        assert await lead_db.add_note(session, lead, "first")
    unsent = await get(sessionmaker, lead.id)
    assert (unsent.delivery_status, unsent.notes, unsent.revision) == (LEAD_PENDING, ["first"], 1)
    assert unsent.comment == "\u00e9" * 5000  # kept whole
    async with sessionmaker() as session, session.begin():
        await lead_db.mark_sent(session, lead.id, now=utc_now(), message_id=77, revision=1)
        assert await lead_db.next_attempt_at(session) is None
        lead = await session.get(Lead, lead.id)  # type: ignore[assignment]
        assert await lead_db.add_note(session, lead, "second")
    updated = await get(sessionmaker, lead.id)
    assert (updated.delivery_status, updated.card_message_id, updated.notes) == (
        LEAD_UPDATED, 77, ["first", "second"]
    )  # fmt: skip
    async with sessionmaker() as session:
        assert await lead_db.due_lead_ids(session, now=utc_now(), all_of_them=False, limit=5) == [lead.id]


async def test_a_card_sent_while_a_note_joined_stays_due(
    sessionmaker: async_sessionmaker[AsyncSession],
) -> None:
    async with sessionmaker() as session, session.begin():
        lead = await new_lead(session, "b")
        revision = lead.revision  # what the outbox read and sent
        await lead_db.add_note(session, lead, "late")
        await lead_db.mark_sent(session, lead.id, now=utc_now(), message_id=5, revision=revision)
    sent = await get(sessionmaker, lead.id)
    assert (sent.delivery_status, sent.card_message_id, sent.sent_at is not None) == (LEAD_UPDATED, 5, True)


async def test_the_cap_counts_the_users_cards_within_the_window(
    sessionmaker: async_sessionmaker[AsyncSession],
) -> None:
    async with sessionmaker() as session, session.begin():
        old = await new_lead(session, "old", now=utc_now() - lead_db.LEAD_WINDOW - timedelta(minutes=1))
        recent = [await new_lead(session, f"r{n}") for n in range(2)]
        assert [r.id for r in await lead_db.recent_leads(session, ANN)] == [r.id for r in recent]
        assert old.id not in [r.id for r in await lead_db.recent_leads(session, ANN)]


async def test_alerts_and_the_users_edit_are_taken_once(
    sessionmaker: async_sessionmaker[AsyncSession],
) -> None:
    async with sessionmaker() as session, session.begin():
        lead = await new_lead(session, "c")
        await lead_db.set_confirmation(session, lead.id, 12)
        for _ in range(3):
            await lead_db.mark_attempt_failed(session, lead.id, error="x" * 2000, retry_at=utc_now())
    async with sessionmaker() as session, session.begin():
        (failing,) = await lead_db.to_alert(session, min_attempts=3, limit=10)
        assert failing.id == lead.id and failing.last_error == "x" * 1000
        assert await lead_db.mark_alerted(session, [lead.id], now=utc_now()) == 1
        assert await lead_db.mark_alerted(session, [lead.id], now=utc_now()) == 0
        assert await lead_db.to_alert(session, min_attempts=3, limit=10) == []
        assert await lead_db.to_tell(session, limit=10) == []  # not delivered yet
        await lead_db.mark_sent(session, lead.id, now=utc_now(), message_id=1, revision=0)
    async with sessionmaker() as session, session.begin():
        (due,) = await lead_db.to_tell(session, limit=10)
        assert due.confirm_message_id == 12
        assert await lead_db.mark_told(session, lead.id, now=utc_now())
        assert not await lead_db.mark_told(session, lead.id, now=utc_now())  # another replica's
        assert await lead_db.mark_told(session, lead.id, now=None)  # given back
        assert await lead_db.to_tell(session, limit=10) != []


async def test_failed_leads_are_listed_and_queued_again(
    sessionmaker: async_sessionmaker[AsyncSession],
) -> None:
    async with sessionmaker() as session, session.begin():
        failed = await new_lead(session, "d")
        pending = await new_lead(session, "e")
        delivered = await new_lead(session, "f")
        await lead_db.mark_attempt_failed(session, failed.id, error="Forbidden", retry_at=None)
        await lead_db.mark_sent(session, delivered.id, now=utc_now(), message_id=3, revision=0)
    async with sessionmaker() as session, session.begin():
        count, rows = await lead_db.undelivered(session, limit=1)
        assert count == 2 and [r.id for r in rows] == [failed.id]
        assert rows[0].delivery_status == LEAD_FAILED
        assert await lead_db.resend(session) == 2
    assert (await get(sessionmaker, failed.id)).delivery_status == LEAD_PENDING
    assert (await get(sessionmaker, pending.id)).next_attempt_at is None
    assert (await get(sessionmaker, delivered.id)).delivery_status == LEAD_SENT
