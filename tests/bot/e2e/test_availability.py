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
from bot.db.models import LEAD_QUOTE, LEAD_RESERVATION, Lead, OfferAvailability
from core.catalogue.load import DATA_DIR
from tests.bot.e2e.conftest import (
    ADMIN_ID,
    QUIET_S,
    REPLY_TIMEOUT_S,
    Harness,
    assert_no_failed_calls,
    buttons,
    make_settings,
    running_bot,
    text,
)
from tests.bot.e2e.test_leads import saved_message
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
    (reply,) = await stranger.send(f"/offers off {TAKEN}")
    assert "switch" not in str(reply.text) and await overrides(h) == {}
    await admin_of(h).send(f"/offers request {TAKEN}")
    assert await overrides(h) == {TAKEN: "on_request"}


async def test_offers_reload_keeps_the_overrides(tmp_path: Path, template_db: Path) -> None:
    offers = tmp_path / "offers.toml"
    shutil.copy(DATA_DIR / "offers.toml", offers)
    async with running_bot(tmp_path, template_db, admin_ids=frozenset({ADMIN_ID}), offers_file=offers) as h:
        admin = admin_of(h)
        await admin.send(f"/offers off {TAKEN}")
        reloaded, listing = await admin.send("/offers reload")
        assert reloaded.text == text("admin-offers-reloaded", "en", file=str(offers))
        row = next(line for line in str(listing.text).splitlines() if f"• {TAKEN}: " in line)
        assert row.endswith(text("admin-offers-sold_out", "en")), row
        answer = await ask(h, "en")
        assert "RTX 4090" not in first_line(answer) and "taken right now" in str(answer.text)


# ---------------------------------------------------------------- reservation (issue 23, item 4)

SALES_CHAT = -1009876543211


@pytest.fixture
async def sales(tmp_path: Path, template_db: Path) -> AsyncIterator[Harness]:
    settings = {"sales_chat_id": SALES_CHAT, "admin_ids": frozenset({ADMIN_ID})}
    async with running_bot(tmp_path, template_db, **settings) as h:
        h.sandbox.user(id=901, first_name="Manager").in_group(chat_id=SALES_CHAT, title="Sales")
        yield h


def cards(h: Harness) -> list[ChatMessage]:
    return [m for m in h.sandbox.chat(SALES_CHAT) if m.from_bot]


async def leads_of(h: Harness) -> list[Lead]:
    engine = create_engine(h.db_url)
    try:
        async with create_sessionmaker(engine)() as session:
            return list(await session.scalars(select(Lead).order_by(Lead.id)))
    finally:
        await engine.dispose()


@pytest.mark.parametrize("lang", ["ru", "en"])
async def test_reservation_reaches_the_sales_chat_card(sales: Harness, lang: str) -> None:
    h = sales
    user = h.user(language_code=lang, username="ann_k")
    (answer,) = await user.send(SEVENTY_B)
    rent = text("btn-rent", lang, count=4, gpu="RTX 4090 48 GB")
    assert buttons(answer)[:2] == [rent, text("btn-reserve", lang)]
    await user.click(text("btn-reserve", lang))
    ask = user.last_message()
    assert TAKEN in str(ask.text) and "4× RTX 4090 48 GB" in str(ask.text)
    assert buttons(ask) == [text("btn-hold-hours", lang), text("btn-hold-months", lang)]
    await user.click(text("btn-hold-months", lang))
    assert buttons(user.last_message()) == [
        text("btn-lead-username", lang, username="ann_k"),
        text("btn-lead-phone", lang),
    ]
    await user.click(text("btn-lead-username", lang, username="ann_k"))
    await user.click(text("btn-lead-skip", lang))
    confirmation = str(saved_message(user).text)  # before the optional "when?" question
    assert TAKEN in confirmation and text("btn-hold-months", lang) in confirmation

    await h.sandbox.wait_for(lambda: len(cards(h)) >= 1, "the reservation's card")
    (card,) = cards(h)
    body = str(card.text)
    assert body.splitlines()[1] == f"📅 Бронь предложения {TAKEN}: {text('btn-hold-months', lang)}"
    assert "@ann_k" in body
    (lead,) = await leads_of(h)
    assert lead.kind == LEAD_RESERVATION
    assert lead.summary["reservation"] == {"offer_id": TAKEN, "hold": text("btn-hold-months", lang)}
    assert_no_failed_calls(h.sandbox)


async def test_reservation_takes_typed_dates_and_a_quote_stays_a_quote(sales: Harness) -> None:
    h = sales
    user = h.user(language_code="ru", username="bob")
    await user.send(SEVENTY_B)
    await user.click(text("btn-reserve", "ru"))
    await user.send("с 10 по 20 декабря <срочно>")
    await user.click(text("btn-lead-username", "ru", username="bob"))
    await user.click(text("btn-lead-skip", "ru"))
    await user.send(SEVENTY_B)
    await user.click(text("btn-ask-price", "ru"))  # 4× RTX 4090 48 GB has no price: "ask the price"
    await user.click(text("btn-lead-username", "ru", username="bob"))
    await user.click(text("btn-lead-skip", "ru"))
    await h.sandbox.wait_for(lambda: len(cards(h)) >= 2, "two cards")
    reservation, quote = await leads_of(h)
    assert (reservation.kind, quote.kind) == (LEAD_RESERVATION, LEAD_QUOTE)
    assert reservation.summary["reservation"]["hold"] == "с 10 по 20 декабря <срочно>"
    assert "reservation" not in quote.summary
    first, second = cards(h)
    assert "Бронь" in str(first.text) and "с 10 по 20 декабря <срочно>" in str(first.text)
    assert "Бронь" not in str(second.text)


async def test_reserve_button_offers_the_free_server_once_one_is_taken(sales: Harness) -> None:
    h = sales
    user = h.user(language_code="en", username="cy")
    (before,) = await user.send(SEVENTY_B)
    await admin_of(h).send(f"/offers off {TAKEN}")
    await user.click(text("btn-reserve", "en"), message=before)
    ask = str(user.last_message().text)
    assert TAKEN not in ask  # sized again with the availability in force: the taken server is not held
