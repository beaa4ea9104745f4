"""Offer availability through the real bot on the sandbox: an admin's `/offers off <id>` makes that
server "taken" — never the recommendation, said in the answer (ru/en) and marked in /prices — kept in
the database across a restart (SQLite and PostgreSQL), and `/offers on <id>` brings it back."""

from __future__ import annotations

import shutil
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from sqlalchemy import select

from bot.db.engine import create_engine, create_sessionmaker
from bot.db.models import OfferAvailability
from tests.bot.e2e.conftest import (
    ADMIN_ID,
    QUIET_S,
    REPLY_TIMEOUT_S,
    Harness,
    assert_no_failed_calls,
    make_settings,
    text,
)
from tgsandbox import ChatMessage, Sandbox, SandboxUser

SEVENTY_B = "llama 3.1 70b bf16"  # 4× RTX 4090 48 GB while it is free
TAKEN = "rtx4090-48gb-x4"


def admin_of(h: Harness) -> SandboxUser:
    return h.sandbox.user(id=ADMIN_ID, first_name="Boss", username="boss", language_code="en")


def first_line(message: ChatMessage) -> str:
    return str(message.text).splitlines()[0]


def taken_words(lang: str) -> str:
    return {"ru": "сейчас занято", "en": "taken right now"}[lang]


async def overrides(h: Harness) -> dict[str, str]:
    engine = create_engine(h.db_url)
    try:
        async with create_sessionmaker(engine)() as session:
            rows = await session.execute(select(OfferAvailability.offer_id, OfferAvailability.availability))
            return dict(rows.tuples().all())
    finally:
        await engine.dispose()


@pytest.fixture(params=["sqlite", "postgres"])
def database_url(request: pytest.FixtureRequest) -> str | None:
    """None: a copy of the migrated SQLite template; else a migrated PostgreSQL schema of its own."""
    return None if request.param == "sqlite" else str(request.getfixturevalue("migrated_postgres_url"))


@pytest.fixture
async def bot(database_url: str | None, tmp_path: Path, template_db: Path) -> AsyncIterator[Harness]:
    """The bot with one admin, on SQLite or PostgreSQL."""
    db_path = tmp_path / "bot.sqlite3"
    shutil.copy(template_db, db_path)
    extra = {"database_url": database_url} if database_url else {}
    async with Sandbox(quiet_period=QUIET_S, reply_timeout=REPLY_TIMEOUT_S) as sandbox:
        settings = make_settings(
            db_path, telegram_api_url=sandbox.base_url, admin_ids=frozenset({ADMIN_ID}), **extra
        )
        h = Harness(sandbox, settings)
        await h.start()
        try:
            yield h
        finally:
            await h.stop()


async def ask(h: Harness, lang: str) -> ChatMessage:
    (answer,) = await h.user(lang).send(SEVENTY_B)
    return answer


async def test_sold_out_offer_is_never_recommended_and_stays_so_after_a_restart(bot: Harness) -> None:
    h = bot
    admin = admin_of(h)
    free = await ask(h, "ru")
    assert "4× RTX 4090 48 GB" in first_line(free) and "сейчас занято" not in str(free.text)

    switched, listing = await admin.send(f"/offers off {TAKEN.upper()}")
    assert switched.text == text("admin-offers-switched", "en", ids=TAKEN, availability="sold_out")
    assert f"• {TAKEN}: " in str(listing.text) and text("admin-offers-sold_out", "en") in str(listing.text)
    assert await overrides(h) == {TAKEN: "sold_out"}

    await h.restart()  # kept in the database: a new process (or another replica) reads it
    for lang in ("ru", "en"):
        answer = await ask(h, lang)
        lead, _need, taken = str(answer.text).splitlines()[:3]
        assert "RTX 4090 48 GB" not in lead  # the next configuration that fits leads
        assert taken.startswith("⏳ 4× RTX 4090 48 GB") and taken_words(lang) in taken
        keyboard = (answer.reply_markup or {}).get("inline_keyboard", [])
        rent = [b["url"] for row in keyboard for b in row if b.get("url")]
        assert rent and all(TAKEN not in str(url) for url in rent)
        (prices,) = await h.user(lang).send("/prices")
        rtx = next(line for line in str(prices.text).splitlines() if "RTX 4090" in line)
        assert rtx.endswith(f"4× — {taken_words(lang)}")

    await admin.send(f"/offers on {TAKEN}")
    again = await ask(h, "en")
    assert "4× RTX 4090 48 GB" in first_line(again) and "taken right now" not in str(again.text)
    assert await overrides(h) == {TAKEN: "available"}
    assert_no_failed_calls(h.sandbox)


async def test_offers_switch_refuses_an_unknown_offer(bot: Harness) -> None:
    h = bot
    (reply,) = await admin_of(h).send("/offers off rtx9999-x1")
    assert reply.text is not None and reply.text.startswith("No such offers: rtx9999-x1.")
    assert await overrides(h) == {}
    answer = await ask(h, "en")
    assert "4× RTX 4090 48 GB" in first_line(answer)


async def test_offers_switch_is_for_admins_only(bot: Harness) -> None:
    h = bot
    stranger = h.user("en")
    await stranger.send(f"/offers off {TAKEN}")
    assert await overrides(h) == {}
