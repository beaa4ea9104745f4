"""Prices in the customer's currency, "rent or buy?" and personal links (issue 23, items 6 and 7),
through the real bot on the sandbox (ru, en): a Kazakh user (Telegram language `kk`) or one who
sent `/currency KZT` sees the operator's tenge price, others roubles; "купить или арендовать?" is
compared with the purchase file (break-even months) or, without it, says so and offers the quote
form; a user who arrives through another's `/ref` link is recorded and counted in /stats."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from bot.db import users
from core.catalogue.load import DATA_DIR
from core.language.words import label
from tests.bot.e2e.conftest import (
    ADMIN_ID,
    Harness,
    assert_no_failed_calls,
    buttons,
    result_mark,
    running_bot,
    text,
)

SIZED = {"ru": "llama 3.1 8b int4 32k 4 пользователя", "en": "llama 3.1 8b int4 32k 4 users"}
TENGE = "[offer.prices.KZT]\nprice_per_hour = 900\n"
PURCHASE = """
[[server]]
id = "x1"
gpu = "rtx4090-48gb"
count = 1
purchase_price = 450000
power_kw = 0.6
electricity_per_kwh = 7
hosting_per_month = 8000
currency = "RUB"
"""
RENT_OR_BUY = {
    "ru": "купить или арендовать на 200 часов в месяц?",
    "en": "rent or buy for 200 hours a month?",
}


def tenge_offers(tmp_path: Path) -> Path:
    """The shipped offers with a tenge price for 1× RTX 4090 48 GB (its first offer)."""
    shipped = (DATA_DIR / "offers.toml").read_text(encoding="utf-8")
    first = shipped.index("price_is_from = true\n") + len("price_is_from = true\n")
    path = tmp_path / "offers.toml"
    path.write_text(shipped[:first] + TENGE + shipped[first:], encoding="utf-8")
    return path


@pytest.fixture
async def tenge(tmp_path: Path, template_db: Path) -> AsyncIterator[Harness]:
    purchase = tmp_path / "purchase.toml"
    purchase.write_text(PURCHASE, encoding="utf-8")
    offers = tenge_offers(tmp_path)
    async with running_bot(
        tmp_path, template_db, offers_file=offers, purchase_file=purchase, admin_ids=frozenset({ADMIN_ID})
    ) as h:
        yield h


def price(lang: str, currency: str, amount: int) -> str:
    sign = label("currency", currency, lang)
    return {"ru": f"от {amount} {sign}/ч", "en": f"from {amount} {sign}/h"}[lang]


@pytest.mark.parametrize("lang", ["ru", "en"])
async def test_currency_command_shows_the_operators_tenge_price(tenge: Harness, lang: str) -> None:
    user = tenge.user(language_code=lang)
    (listed,) = await user.send("/prices")
    assert price(lang, "RUB", 149) in (listed.text or "") and "₸" not in (listed.text or "")
    (said,) = await user.send("/currency KZT")
    assert said.text == text("currency-set", lang, currency="KZT")
    (listed,) = await user.send("/prices")
    assert price(lang, "KZT", 900) in (listed.text or "") and "149" not in (listed.text or "")
    answer = (await user.send(SIZED[lang]))[-1]
    assert result_mark(lang) in (answer.text or "")
    assert price(lang, "KZT", 900) in (answer.text or "").splitlines()[0]
    row = await tenge.db_user(user.user.id)
    assert row is not None and row.currency == "KZT"
    (refused,) = await user.send("/currency EUR")
    assert refused.text == text("currency-unknown", lang, currency="EUR", choices="RUB, KZT")
    (current,) = await user.send("/currency")
    assert current.text == text("currency-current", lang, currency="KZT", choices="RUB, KZT")
    assert_no_failed_calls(tenge.sandbox)


async def test_a_kazakh_user_sees_tenge_without_asking(tenge: Harness) -> None:
    kazakh = tenge.user(language_code="kk")  # answered in Russian (bot.i18n), priced in tenge
    answer = (await kazakh.send(SIZED["ru"]))[-1]
    assert price("ru", "KZT", 900) in (answer.text or "").splitlines()[0]
    russian = tenge.user(language_code="ru")
    answer = (await russian.send(SIZED["ru"]))[-1]
    assert price("ru", "RUB", 149) in (answer.text or "").splitlines()[0]
    # inline mode too: the article's title is the answer's lead
    (article,) = (await tenge.user(language_code="kk").inline(SIZED["ru"])).results
    assert price("ru", "KZT", 900) in article["title"]
    (article,) = (await russian.inline(SIZED["ru"])).results
    assert price("ru", "RUB", 149) in article["title"]


@pytest.mark.parametrize("lang", ["ru", "en"])
async def test_rent_or_buy_after_an_answer_gives_the_break_even(tenge: Harness, lang: str) -> None:
    user = tenge.user(language_code=lang)
    await user.send(SIZED[lang])  # recommends 1× RTX 4090 48 GB at 149 ₽/h
    (reply,) = await user.send(RENT_OR_BUY[lang])
    sign = label("currency", "RUB", lang)
    # rent 200 h × 149 = 29 800; running 0.6 kW × 200 h × 7 + 8 000 = 8 840; 450 000 / 20 960 = 21.5
    assert text("currency-rentbuy-workload", lang, hours=200) in (reply.text or "")
    assert text("currency-rentbuy-rent", lang, amount=29800, currency=sign) in (reply.text or "")
    assert text("currency-rentbuy-buy", lang, price=450000, running=8840, currency=sign) in (reply.text or "")
    assert text("currency-rentbuy-break-even", lang, months=21.5) in (reply.text or "")
    assert text("btn-ask-price", lang) in buttons(reply)
    light = {"ru": "купить или арендовать на 20 часов", "en": "rent or buy for 20 hours"}
    (never,) = await user.send(light[lang])
    assert text("currency-rentbuy-never", lang) in (never.text or "")
    heavy = {"ru": "купить или арендовать на 800 часов", "en": "rent or buy 800 hours"}
    (too_many,) = await user.send(heavy[lang])
    assert too_many.text == text("currency-rentbuy-hours", lang, most=730)
    named = {"ru": "купить или арендовать 8×H100?", "en": "rent or buy 8x H100?"}
    (no_row,) = await user.send(named[lang])  # the purchase file has no H100 server
    assert no_row.text == text("currency-rentbuy-no-row", lang, config="8× H100 SXM 80 GB")
    assert text("btn-ask-price", lang) in buttons(no_row)


@pytest.mark.parametrize("lang", ["ru", "en"])
async def test_rent_or_buy_without_a_purchase_file_offers_the_quote_form(harness: Harness, lang: str) -> None:
    user = harness.user(language_code=lang)
    (which,) = await user.send(RENT_OR_BUY[lang])
    assert which.text == text("currency-rentbuy-which", lang)
    await user.send(SIZED[lang])
    (reply,) = await user.send(RENT_OR_BUY[lang])
    assert reply.text == text("currency-rentbuy-no-file", lang, config="1× RTX 4090 48 GB")
    assert text("btn-ask-price", lang) in buttons(reply)
    assert_no_failed_calls(harness.sandbox)


async def test_an_arrival_through_a_personal_link_is_counted_in_stats(tenge: Harness) -> None:
    h = tenge
    alice = h.user(language_code="en", username="alice")
    (ref,) = await alice.send("/ref")
    link = f"https://t.me/{h.sandbox.bot_user.username}?start=ref_{alice.user.id}"
    assert ref.text == text("currency-ref", "en", link=link, users=0)
    for _ in range(2):
        await h.user().send(f"/start ref_{alice.user.id}")
    own = h.user()
    await own.send(f"/start ref_{own.user.id}")  # one's own link brings nobody
    (ref,) = await alice.send("/ref")
    assert ref.text == text("currency-ref", "en", link=link, users=2)
    brought = await h.db_user(alice.user.id + 1)
    assert brought is not None and brought.referred_by == alice.user.id
    assert brought.source == users.referral_source(alice.user.id)
    own_row = await h.db_user(own.user.id)
    assert own_row is not None and own_row.referred_by is None
    admin = h.sandbox.user(id=ADMIN_ID, first_name="Boss", username="boss", language_code="en")
    replies = await admin.send("/stats")
    everything = replies[-2].text or ""  # the all-time message (the by-week one comes last)
    assert text("currency-stats-referrers", "en") in everything
    assert text("currency-stats-referrer", "en", name="@alice", users=2, leads=0) in everything
    (help_text,) = await alice.send("/help")
    assert link in (help_text.text or "")
    assert_no_failed_calls(h.sandbox)
