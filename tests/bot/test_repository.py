"""Every function of the users', dialogs' and inbox's statements (bot.db.users, bot.db.dialogs,
bot.db.processed_updates) against real SQLite files and a real PostgreSQL database."""

import asyncio
from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta

import pytest
from sqlalchemy import func, select
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from bot.db import dialogs, processed_updates, users
from bot.db.engine import create_engine, create_sessionmaker
from bot.db.models import ProcessedUpdate, User
from bot.db.report import print_source_report
from bot.db.users import SourceRow
from tests.bot import both_backends

# each test runs on SQLite and on PostgreSQL
db_url = both_backends.db_url
sessionmaker = both_backends.sessionmaker

ALICE, BOB, CAROL = 1001, 1002, 1003


async def add_user(session: AsyncSession, telegram_id: int, source: str | None = None) -> User:
    return await users.upsert_user(
        session,
        telegram_id=telegram_id,
        username=f"user{telegram_id}",
        first_name="Test",
        telegram_language="ru",
        source=source,
    )


async def test_first_contact_records_the_source_and_later_contacts_never_overwrite_it(
    sessionmaker: async_sessionmaker[AsyncSession],
) -> None:
    async with sessionmaker() as session, session.begin():
        created = await users.upsert_user(
            session,
            telegram_id=ALICE,
            username="alice",
            first_name="Alice",
            telegram_language="en",
            source="habr_post",
        )
        assert (created.source, created.language, created.language_from_telegram) == ("habr_post", None, "en")
        first_seen = created.last_seen_at
        assert created.created_at.tzinfo is not None and created.created_at.utcoffset() == timedelta(0)

    async with sessionmaker() as session, session.begin():
        again = await users.upsert_user(
            session,
            telegram_id=ALICE,
            username="alice_new",
            first_name="Alice",
            telegram_language="ru",
            source="vk_ads",
        )
        assert again.id == created.id

    async with sessionmaker() as session:
        stored = await users.get_user(session, ALICE)
        assert stored is not None
        assert (stored.username, stored.source, stored.language_from_telegram) == (
            "alice_new",
            "habr_post",
            "ru",
        )
        assert stored.last_seen_at >= first_seen
        assert stored.created_at == created.created_at
        assert await session.scalar(select(func.count()).select_from(User)) == 1


async def test_a_user_who_came_without_a_link_keeps_no_source(
    sessionmaker: async_sessionmaker[AsyncSession],
) -> None:
    async with sessionmaker() as session, session.begin():
        await add_user(session, BOB, source=None)
        await add_user(session, BOB, source="late_link")
    async with sessionmaker() as session:
        stored = await users.get_user(session, BOB)
        assert stored is not None and stored.source is None
        assert await users.get_user(session, CAROL) is None


async def test_language_is_remembered(sessionmaker: async_sessionmaker[AsyncSession]) -> None:
    async with sessionmaker() as session, session.begin():
        await add_user(session, ALICE)
        await users.set_language(session, ALICE, "en")
        with pytest.raises(ValueError, match="de"):
            await users.set_language(session, ALICE, "de")
    async with sessionmaker() as session:
        stored = await users.get_user(session, ALICE)
        assert stored is not None and stored.language == "en"


async def test_dialog_lifecycle(sessionmaker: async_sessionmaker[AsyncSession]) -> None:
    async with sessionmaker() as session, session.begin():
        await add_user(session, ALICE, source="promo")
        dialog_id = await dialogs.start_dialog(session, telegram_id=ALICE, task="inference", source="promo")
        await dialogs.save_answers(session, dialog_id, {"model": "llama-3-8b"})

    async with sessionmaker() as session, session.begin():
        await dialogs.save_answers(session, dialog_id, {"model": "llama-3-8b", "precision": "int4"})

    async with sessionmaker() as session:
        (started,) = await dialogs.list_dialogs(session, ALICE)
        assert (started.task, started.status, started.source) == ("inference", "started", "promo")
        assert started.answers == {"model": "llama-3-8b", "precision": "int4"}
        assert started.completed_at is None and started.result_summary is None

    summary = {"total_gib": 5.2, "breakdown": {"weights": 4.1}}
    async with sessionmaker() as session, session.begin():
        await dialogs.complete_dialog(
            session,
            dialog_id,
            answers={"model": "llama-3-8b", "precision": "int4", "context": 8192},
            summary=summary,
            verdict="fits",
            offer_id="rtx4090-1x",
        )

    async with sessionmaker() as session:
        (completed,) = await dialogs.list_dialogs(session, ALICE)
        assert (completed.status, completed.verdict, completed.offer_id) == (
            "completed",
            "fits",
            "rtx4090-1x",
        )
        assert completed.result_summary == summary
        assert completed.answers["context"] == 8192
        assert completed.completed_at is not None
        assert completed.completed_at.utcoffset() == timedelta(0)
        assert completed.completed_at >= completed.created_at


async def test_a_new_dialog_abandons_the_unfinished_one_of_that_user_only(
    sessionmaker: async_sessionmaker[AsyncSession],
) -> None:
    async with sessionmaker() as session, session.begin():
        await add_user(session, ALICE)
        await add_user(session, BOB)
        done = await dialogs.start_dialog(session, telegram_id=ALICE, task="inference")
        await dialogs.complete_dialog(session, done, answers={}, summary={}, verdict="fits", offer_id=None)
        first = await dialogs.start_dialog(session, telegram_id=ALICE, task="finetune")
        bobs = await dialogs.start_dialog(session, telegram_id=BOB, task="image")
        second = await dialogs.start_dialog(session, telegram_id=ALICE, task="train")

    async with sessionmaker() as session:
        statuses = {dialog.id: dialog.status for dialog in await dialogs.list_dialogs(session, ALICE)}
        assert statuses == {done: "completed", first: "abandoned", second: "started"}
        assert [dialog.status for dialog in await dialogs.list_dialogs(session, BOB)] == ["started"]
        assert [dialog.id for dialog in await dialogs.list_dialogs(session, ALICE)] == [done, first, second]
        assert bobs not in statuses


async def test_abandon_dialogs_counts_only_unfinished_ones(
    sessionmaker: async_sessionmaker[AsyncSession],
) -> None:
    async with sessionmaker() as session, session.begin():
        await add_user(session, ALICE)
        assert await dialogs.abandon_dialogs(session, ALICE) == 0
        await dialogs.start_dialog(session, telegram_id=ALICE, task="inference")
        assert await dialogs.abandon_dialogs(session, ALICE) == 1
        assert await dialogs.abandon_dialogs(session, ALICE) == 0
        assert await dialogs.abandon_dialogs(session, CAROL) == 0
        (dialog,) = await dialogs.list_dialogs(session, ALICE)
        assert dialog.status == "abandoned"


async def test_dialogs_need_a_known_user_and_dialog(sessionmaker: async_sessionmaker[AsyncSession]) -> None:
    async with sessionmaker() as session, session.begin():
        with pytest.raises(LookupError):
            await dialogs.start_dialog(session, telegram_id=CAROL, task="inference")
        with pytest.raises(LookupError):
            await dialogs.save_answers(session, 424242, {})
        assert await dialogs.list_dialogs(session, CAROL) == []


async def test_claim_update_is_true_once_per_bot_and_update(
    sessionmaker: async_sessionmaker[AsyncSession],
) -> None:
    async with sessionmaker() as session, session.begin():
        assert await processed_updates.claim_update(session, bot_id=1, update_id=100) is True
        assert await processed_updates.claim_update(session, bot_id=1, update_id=100) is False
        assert await processed_updates.claim_update(session, bot_id=2, update_id=100) is True
    async with sessionmaker() as session, session.begin():
        assert await processed_updates.claim_update(session, bot_id=1, update_id=100) is False
        assert await processed_updates.claim_update(session, bot_id=1, update_id=101) is True


async def test_a_rolled_back_claim_can_be_claimed_again(
    sessionmaker: async_sessionmaker[AsyncSession],
) -> None:
    """A handler that failed did not process its update: a redelivery must be handled."""
    with pytest.raises(RuntimeError):
        async with sessionmaker() as session, session.begin():
            assert await processed_updates.claim_update(session, bot_id=1, update_id=7) is True
            raise RuntimeError("handler failed")
    async with sessionmaker() as session, session.begin():
        assert await processed_updates.claim_update(session, bot_id=1, update_id=7) is True


async def test_forget_processed_updates_keeps_recent_ones(
    sessionmaker: async_sessionmaker[AsyncSession],
) -> None:
    async with sessionmaker() as session, session.begin():
        await processed_updates.claim_update(session, bot_id=1, update_id=1)
        assert (
            await processed_updates.forget_processed_updates(
                session, before=datetime.now(UTC) - timedelta(days=1)
            )
            == 0
        )
        assert (
            await processed_updates.forget_processed_updates(
                session, before=datetime.now(UTC) + timedelta(seconds=1)
            )
            == 1
        )
        assert await session.scalar(select(func.count()).select_from(ProcessedUpdate)) == 0


async def test_source_report_counts_users_and_their_dialogs_per_source(
    sessionmaker: async_sessionmaker[AsyncSession], db_url: str, capsys: pytest.CaptureFixture[str]
) -> None:
    async with sessionmaker() as session, session.begin():
        for telegram_id, source in [(1, "habr"), (2, "habr"), (3, "vk"), (4, None)]:
            await add_user(session, telegram_id, source)
        finished = await dialogs.start_dialog(session, telegram_id=1, task="inference")
        await dialogs.complete_dialog(
            session, finished, answers={}, summary={}, verdict="fits", offer_id=None
        )
        await dialogs.start_dialog(session, telegram_id=1, task="finetune")  # started, then...
        await dialogs.start_dialog(session, telegram_id=1, task="train")  # ...abandoned by this one
        finished = await dialogs.start_dialog(session, telegram_id=3, task="image")
        await dialogs.complete_dialog(session, finished, answers={}, summary={}, verdict=None, offer_id=None)
        await dialogs.start_dialog(session, telegram_id=4, task="video")

    async with sessionmaker() as session:
        report = await users.source_report(session)
    assert report == [
        SourceRow(source="habr", users=2, dialogs_started=3, dialogs_completed=1),
        SourceRow(source="vk", users=1, dialogs_started=1, dialogs_completed=1),
        SourceRow(source=None, users=1, dialogs_started=1, dialogs_completed=0),
    ]

    await print_source_report(db_url)
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].split() == [
        "source", "users", "started", "completed", "leads", "undelivered", "failed", "conversion"
    ]  # fmt: skip
    assert lines[1].split() == ["habr", "2", "3", "1", "0", "0", "0", "0%"]
    assert lines[3].split() == ["(no", "link)", "1", "1", "0", "0", "0", "0", "-"]


@pytest.fixture
async def postgres_sessionmaker(
    migrated_postgres_url: str,
) -> AsyncIterator[async_sessionmaker[AsyncSession]]:
    engine = create_engine(migrated_postgres_url)
    try:
        yield create_sessionmaker(engine)
    finally:
        await engine.dispose()


async def test_concurrent_claims_of_one_update_let_exactly_one_through(
    postgres_sessionmaker: async_sessionmaker[AsyncSession],
) -> None:
    async def claim() -> bool:
        async with postgres_sessionmaker() as session, session.begin():
            claimed = await processed_updates.claim_update(session, bot_id=1, update_id=555)
            await asyncio.sleep(0.05)  # hold the transaction open while the others try
            return claimed

    results = await asyncio.gather(*(claim() for _ in range(8)))
    assert sorted(results) == [False] * 7 + [True]


async def test_concurrent_first_contacts_create_one_user(
    postgres_sessionmaker: async_sessionmaker[AsyncSession],
) -> None:
    async def first_contact(source: str) -> int:
        async with postgres_sessionmaker() as session, session.begin():
            user = await add_user(session, CAROL, source)
            await asyncio.sleep(0.05)
            return user.id

    ids = await asyncio.gather(*(first_contact(f"link{n}") for n in range(5)))
    assert len(set(ids)) == 1
    async with postgres_sessionmaker() as session:
        assert await session.scalar(select(func.count()).select_from(User)) == 1
        stored = await users.get_user(session, CAROL)
        assert stored is not None and stored.source in {f"link{n}" for n in range(5)}


async def test_a_personal_link_records_who_brought_whom_once(
    sessionmaker: async_sessionmaker[AsyncSession],
) -> None:
    """`ref_<id>` (issue 23, item 7): the referrer is stored with the row and never changed; one's
    own link, a malformed id and another source bring nobody; /stats counts per referrer."""
    from bot.db.stats import Referrer, top_referrers

    async with sessionmaker() as session, session.begin():
        await add_user(session, ALICE)
        bob = await add_user(session, BOB, source=f"ref_{ALICE}")
        carol = await add_user(session, CAROL, source=f"ref_{ALICE}")
        assert (bob.referred_by, carol.referred_by) == (ALICE, ALICE)
        again = await add_user(session, BOB, source=f"ref_{CAROL}")  # a later contact changes nothing
        assert again.referred_by == ALICE
        for telegram_id, source in [(2001, "ref_2001"), (2002, "ref_x1"), (2003, "ref_" + "9" * 20),
                                    (2004, "habr"), (2005, f"ref_{BOB}")]:  # fmt: skip
            row = await add_user(session, telegram_id, source=source)
            assert row.referred_by == (BOB if telegram_id == 2005 else None), source
        await users.set_currency(session, ALICE, "KZT")
    async with sessionmaker() as session:
        assert await users.referred_count(session, ALICE) == 2
        assert (await users.get_user(session, ALICE)).currency == "KZT"  # type: ignore[union-attr]
        top, total = await top_referrers(session, 1)
        assert (top, total) == ([Referrer(ALICE, f"user{ALICE}", 2, 0)], 2)
