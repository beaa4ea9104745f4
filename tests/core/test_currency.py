"""Prices in the customer's currency and "rent or buy?" (issue 23, item 6): an offer carries the
prices the operator gives in other currencies (never converted), the answer shows the asked currency
where it is given and the main one where not; "cheapest" never compares across currencies (a file
with two main currencies is refused); rent against buying from the purchase file, break-even months."""

from __future__ import annotations

from pathlib import Path

import pytest

from core.catalogue.catalog import default_catalog, load_catalog
from core.catalogue.offers import RentalOffer
from core.errors import CatalogError
from core.inverse.purchase import HOURS_PER_MONTH, load_purchases, rent_or_buy
from core.inverse.solve import run
from core.language.answer import build_answer
from core.language.prices import price_list
from core.parse.price import RentBuyQuestion, price_question, rent_buy_question
from core.sizing.estimate import estimate

TENGE_OFFERS = """
[[offer]]
id = "rtx4090-48gb-x1"
gpu = "rtx4090-48gb"
count = 1
price_per_hour = 149
currency = "RUB"
url = "https://example.com/x1"
[offer.prices.KZT]
price_per_hour = 900
price_per_month = 500000

[[offer]]
id = "rtx4090-48gb-x2"
gpu = "rtx4090-48gb"
count = 2
price_per_hour = 290
currency = "RUB"
url = "https://example.com/x2"
"""

PURCHASES = """
[[server]]
id = "x1"
gpu = "rtx4090-48gb"
count = 1
purchase_price = 600000
power_kw = 0.5
electricity_per_kwh = 60
hosting_per_month = 20000
currency = "KZT"
"""


def write(tmp_path: Path, name: str, body: str) -> Path:
    path = tmp_path / name
    path.write_text(body, encoding="utf-8")
    return path


def offer(**fields: object) -> RentalOffer:
    row = {"id": "o", "gpu": "rtx4090-48gb", "count": 1, "url": "https://example.com/o", **fields}
    return RentalOffer.model_validate(row)


def test_an_offer_shows_the_asked_currency_where_given_else_the_main(tmp_path: Path) -> None:
    catalog = load_catalog(offers_file=write(tmp_path, "offers.toml", TENGE_OFFERS))
    tenge = price_list(None, catalog, "ru", "KZT").lines[0]
    assert "900 ₸/ч" in tenge and "500\u00a0000 ₸/мес" in tenge  # the operator's tenge price
    assert "290 ₽/ч" in tenge  # no tenge price for 2×: the main currency, not a converted one
    roubles = price_list(None, catalog, "ru", "RUB").lines[0]
    assert "149 ₽/ч" in roubles and "₸" not in roubles


def test_the_answer_prices_the_recommendation_in_the_users_currency(tmp_path: Path) -> None:
    catalog = load_catalog(offers_file=write(tmp_path, "offers.toml", TENGE_OFFERS))
    result = estimate(
        {"model": "llama-3.1-8b", "task": "inference", "precision": "fp16", "context_length": 4096},
        catalog,
    )
    assert result.recommendation is not None and result.recommendation.offer_id == "rtx4090-48gb-x1"
    assert "900 ₸/h" in build_answer(result, "en", currency="KZT").lead
    assert "149 ₽/h" in build_answer(result, "en", currency="USD").lead  # no USD price: the main one
    assert "149 ₽/h" in build_answer(result, "en").lead


def test_a_file_with_two_main_currencies_is_refused_naming_the_row(tmp_path: Path) -> None:
    """ "Cheapest" compares prices as numbers: 900 KZT is not dearer than 149 RUB. The file is refused
    rather than ranked across currencies."""
    two = 'price_per_hour = 290\ncurrency = "RUB"'
    mixed = TENGE_OFFERS.replace(two, 'price_per_hour = 90\ncurrency = "KZT"')
    with pytest.raises(CatalogError) as e:
        load_catalog(offers_file=write(tmp_path, "offers.toml", mixed))
    assert "row 2" in e.value.message and "currency" in e.value.message and "'RUB'" in e.value.message


@pytest.mark.parametrize(
    ("prices", "message"),
    [
        ({"KZT": {"price_per_hour": 0}}, "greater than 0"),
        ({"KZT": {"price_per_hour": float("inf")}}, "finite"),
        ({"KZT": {"price_per_month": 1e300}}, "less than or equal"),
        ({"KZT": {}}, "needs price_per_hour or price_per_month"),
        ({"kzt": {"price_per_hour": 1}}, "pattern"),
        ({"RUB": {"price_per_hour": 1}}, "not repeated"),
    ],
)
def test_other_currency_prices_are_bounded(prices: dict[str, object], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        offer(price_per_hour=149, currency="RUB", prices=prices)


def test_other_currency_prices_need_a_main_price() -> None:
    with pytest.raises(ValueError, match="need a main price"):
        offer(prices={"KZT": {"price_per_hour": 900}})


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Купить или арендовать?", RentBuyQuestion()),
        ("что выгоднее: купить или арендовать", RentBuyQuestion()),
        ("rent or buy 8x H100 for 200 hours a month", RentBuyQuestion(("h100-sxm",), 8, 200)),
        ("аренда или покупка 2×4090 48 на 300 часов", RentBuyQuestion(("rtx4090-48gb",), 2, 300)),
    ],
)
def test_rent_or_buy_questions_are_read(text: str, expected: RentBuyQuestion) -> None:
    assert rent_buy_question(text) == expected
    assert price_question(text) is None


@pytest.mark.parametrize("text", ["сколько стоит h100", "buy me a coffee", "арендовать 4090", "купить h100"])
def test_other_messages_are_not_rent_or_buy(text: str) -> None:
    assert rent_buy_question(text) is None


def test_rent_against_buy_break_even(tmp_path: Path) -> None:
    purchases = load_purchases(write(tmp_path, "purchase.toml", PURCHASES), default_catalog())
    rented = offer(price_per_hour=149, currency="RUB", prices={"KZT": {"price_per_hour": 900}})
    # around the clock: 730 h × 900 = 657 000 rent; 0.5 kW × 730 h × 60 + 20 000 = 41 900 running
    full = rent_or_buy(rented, purchases)
    assert full is not None and full.currency == "KZT" and full.hours_per_month == HOURS_PER_MONTH
    assert full.rent_per_month == pytest.approx(657_000)
    assert full.running_per_month == pytest.approx(41_900)
    assert full.break_even_months == pytest.approx(600_000 / (657_000 - 41_900))
    # 20 h a month: 18 000 rent < 20 600 running: buying never pays off
    light = rent_or_buy(rented, purchases, 20)
    assert light is not None and light.break_even_months is None
    # a monthly price lower than the hours' rent is what renting costs
    tenge = {"KZT": {"price_per_hour": 900, "price_per_month": 300_000}}
    monthly = offer(price_per_hour=149, currency="RUB", prices=tenge)
    capped = rent_or_buy(monthly, purchases)
    assert capped is not None and capped.rent_per_month == 300_000


def test_no_comparison_across_currencies_or_configurations(tmp_path: Path) -> None:
    purchases = load_purchases(write(tmp_path, "purchase.toml", PURCHASES), default_catalog())
    assert rent_or_buy(offer(price_per_hour=149, currency="RUB"), purchases) is None  # no tenge rent
    assert rent_or_buy(offer(count=2, price_per_hour=900, currency="KZT"), purchases) is None
    assert rent_or_buy(offer(), purchases) is None  # on request


@pytest.mark.parametrize(
    ("field", "value", "message"),
    [
        ("purchase_price", "-1", "purchase_price"),
        ("power_kw", "nan", "power_kw"),
        ("currency", '"рубли"', "currency"),
        ("gpu", '"no-such-gpu"', "unknown gpu"),
    ],
)
def test_a_bad_purchase_row_is_refused_naming_it(
    tmp_path: Path, field: str, value: str, message: str
) -> None:
    lines = PURCHASES.splitlines()
    bad = "\n".join(f"{field} = {value}" if line.startswith(f"{field} =") else line for line in lines)
    bad = bad.replace('id = "x1"', 'id = "bad"')
    with pytest.raises(CatalogError) as e:
        load_purchases(write(tmp_path, "purchase.toml", PURCHASES + bad), default_catalog())
    assert "row 2" in e.value.message and "bad" in e.value.message and message in e.value.message


def test_the_shipped_example_purchase_file_loads() -> None:
    path = Path(__file__).parents[2] / "core" / "data" / "purchase.example.toml"
    assert load_purchases(path, default_catalog()).options


def test_the_users_currency_is_compared_first(tmp_path: Path) -> None:
    roubles = PURCHASES.replace('currency = "KZT"', 'currency = "RUB"').replace('id = "x1"', 'id = "r1"')
    purchases = load_purchases(write(tmp_path, "purchase.toml", roubles + PURCHASES), default_catalog())
    rented = offer(price_per_hour=149, currency="RUB", prices={"KZT": {"price_per_hour": 900}})
    assert rent_or_buy(rented, purchases, currency="KZT").currency == "KZT"  # type: ignore[union-attr]
    assert rent_or_buy(rented, purchases, currency="RUB").currency == "RUB"  # type: ignore[union-attr]
    assert rent_or_buy(rented, purchases).currency == "RUB"  # type: ignore[union-attr]  # the file's order


def test_time_and_cost_are_priced_in_the_users_currency(tmp_path: Path) -> None:
    """The cost of a job ("1 230–2 460 ₽") follows the lead's currency: the hours × the operator's
    tenge price, not the roubles converted."""
    catalog = load_catalog(offers_file=write(tmp_path, "offers.toml", TENGE_OFFERS))
    request = {"task": "training", "model": "llama-3.1-8b", "method": "qlora", "dataset_tokens": 10**8}
    result = run(request, catalog)
    assert result.recommendation is not None and result.recommendation.offer_id == "rtx4090-48gb-x1"
    (option, *_) = result.cost.options  # type: ignore[union-attr]
    assert option.cost_low is not None and option.hours_low is not None
    tenge = "\n".join(build_answer(result, "en", currency="KZT").cost)
    roubles = "\n".join(build_answer(result, "en").cost)
    low, high, _ = (option.prices["KZT"][1], option.prices["KZT"][2], 0)
    assert low == pytest.approx(option.cost_low * 900 / 149, rel=0.02)
    assert "₸" in tenge and "₽" in roubles and "₸" not in roubles
    assert f"{round(low or 0):,}" in tenge and f"{round(high or 0):,}" in tenge
