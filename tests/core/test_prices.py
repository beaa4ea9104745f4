"""Price questions (`core.parse.price`) and the price list (`core.language.prices`): what is read as a price
question and what is not, and a list that shows only the prices the offers file has."""

from __future__ import annotations

import io
import re
from pathlib import Path

import pytest

from core.catalogue.catalog import default_catalog, load_catalog
from core.cli import main
from core.language.prices import price_list, render_price_list
from core.parse import understand
from core.parse.price import PriceQuestion, price_question

SHIPPED = default_catalog()

PRICE_QUESTIONS = {
    "сколько стоит аренда h100?": PriceQuestion(("h100-sxm",)),
    "сколько стоит 4090 48 в месяц": PriceQuestion(("rtx4090-48gb",), monthly=True),
    "how much is an H100 per hour": PriceQuestion(("h100-sxm",)),
    "price list": PriceQuestion(),
    "прайс": PriceQuestion(),
    "тарифы": PriceQuestion(),
    "Какие у вас цены?": PriceQuestion(),
    "сколько стоит 2 карты 4090 48": PriceQuestion(("rtx4090-48gb",), 2),
    "цена 4x h100": PriceQuestion(("h100-sxm",), 4),
    "почём b200": PriceQuestion(("b200",)),
    "стоимость аренды 8 h200": PriceQuestion(("h200",), 8),
    "what does 4x h100 cost per month": PriceQuestion(("h100-sxm",), 4, monthly=True),
}

NOT_PRICE_QUESTIONS = [
    "llama 3.1 8b int4",
    "сколько стоит llama 70b на h100",  # a model: the estimator answers, with the price
    "сколько будет стоить дообучение llama 3.1 8b на 10000 примеров по 1000 токенов",
    "сколько будет стоить дообучение на 10000 примеров",  # a workload to cost: the model is asked
    "how much memory for llama 70b",
    "how much vram do i need",
    "стоит ли брать 4090",
    "сколько пользователей выдержит h100 с qwen2.5 32b",
    "какая самая большая модель влезет в 4090 48гб?",
]


@pytest.mark.parametrize(("text", "expected"), PRICE_QUESTIONS.items())
def test_price_questions_are_read_with_their_cards(text: str, expected: PriceQuestion) -> None:
    assert price_question(text, SHIPPED) == expected


@pytest.mark.parametrize("text", NOT_PRICE_QUESTIONS)
def test_other_questions_are_not_price_questions(text: str) -> None:
    assert price_question(text, SHIPPED) is None


def _shipped_prices() -> set[str]:
    return {f"{o.price_per_hour:g}" for o in SHIPPED.offers if o.price_per_hour is not None}


@pytest.mark.parametrize("lang", ["ru", "en"])
def test_the_whole_list_has_every_offer_and_no_price_the_file_lacks(lang: str) -> None:
    prices = price_list(None, SHIPPED, lang)
    assert len(prices.offers) == len(SHIPPED.offers)
    assert len(prices.lines) == len({o.gpu for o in SHIPPED.offers})
    text = render_price_list(prices)
    shown = set(re.findall(r"(\d[\d  ]*)\s*₽", text))
    assert {s.replace(" ", "").replace(" ", "") for s in shown} <= _shipped_prices()
    on_request = "цена по запросу" if lang == "ru" else "price on request"
    assert prices.lines[0].count(on_request) == 1  # 2× and 4× RTX 4090 48 GB together
    assert ("от 149 ₽/ч" if lang == "ru" else "from 149 ₽/h") in prices.lines[0]
    assert prices.rent is not None and prices.rent.id == "rtx4090-48gb-x1"
    assert prices.on_request


def test_a_named_card_and_count_narrow_the_list() -> None:
    prices = price_list(PriceQuestion(("h100-sxm",), 4), SHIPPED, "ru")
    assert [o.id for o in prices.offers] == ["h100-sxm-x4"]
    assert prices.title.endswith("H100 SXM 80 GB")


def test_a_count_not_offered_says_so_and_lists_the_counts_there_are() -> None:
    prices = price_list(PriceQuestion(("rtx4090-48gb",), 8), SHIPPED, "ru")
    assert "8× RTX 4090 48 GB в предложениях нет; есть 1×, 2×, 4×." in prices.notes
    assert [o.count for o in prices.offers] == [1, 2, 4]


def test_a_card_not_rented_says_so_and_lists_everything() -> None:
    prices = price_list(PriceQuestion(("rtx4090",)), SHIPPED, "en")
    assert prices.notes[0] == "We do not rent RTX 4090 24 GB — here is what we have."
    assert len(prices.offers) == len(SHIPPED.offers)


def test_monthly_asked_without_a_monthly_price_is_not_computed() -> None:
    prices = price_list(PriceQuestion(("rtx4090-48gb",), monthly=True), SHIPPED, "ru")
    text = render_price_list(prices)
    assert "/мес" not in text
    assert "Помесячной цены в прайсе нет — её назовёт менеджер." in prices.notes


def test_a_monthly_price_in_the_file_is_shown(tmp_path: Path) -> None:
    offers = tmp_path / "offers.toml"
    offers.write_text(
        '[[offer]]\nid = "a"\ngpu = "rtx4090-48gb"\ncount = 1\nprice_per_hour = 149\n'
        'price_per_month = 80000\ncurrency = "RUB"\nurl = "https://rent.test/a"\n'
        '[[offer]]\nid = "b"\ngpu = "rtx4090-48gb"\ncount = 2\nurl = "https://rent.test/b"\n',
        encoding="utf-8",
    )
    prices = price_list(PriceQuestion(monthly=True), load_catalog(offers_file=offers), "ru")
    assert prices.lines == ("• RTX 4090 48 GB: 1× — 149 ₽/ч · 80\xa0000 ₽/мес; 2× — цена по запросу",)
    assert not any("Помесячной" in n for n in prices.notes)


@pytest.mark.parametrize(
    ("text", "lang", "expected"),
    [
        ("сколько стоит аренда h100?", "ru", "💰 Цены на аренду: H100 SXM 80 GB"),
        (
            "сколько стоит 4090 48 в месяц",
            "ru",
            "• RTX 4090 48 GB: 1× — от 149 ₽/ч; 2×, 4× — цена по запросу",
        ),
        ("прайс", "ru", "• B200 180 GB: 1×, 2×, 4×, 8× — цена по запросу"),
        ("how much is an H100 per hour", "en", "• H100 SXM 80 GB: 1×, 2×, 4×, 8× — price on request"),
    ],
)
def test_cli_ask_answers_a_price_question_with_the_list(text: str, lang: str, expected: str) -> None:
    out = io.StringIO()
    assert main(["ask", text, "--lang", lang], stdout=out) == 0
    assert expected in out.getvalue().splitlines()
    assert "Какая модель" not in out.getvalue() and "влезет" not in out.getvalue().lower()


def test_a_question_with_a_model_is_still_sized() -> None:
    assert understand("сколько стоит llama 3.1 70b int4 на h100").request.model == "llama-3.1-70b"


@pytest.mark.parametrize(
    ("request_", "lang", "phrase"),
    [
        ({"task": "inference", "model": "llama-3.1-70b", "precision": "bf16"}, "ru", "цена по запросу"),
        ({"task": "inference", "model": "llama-3.1-70b", "precision": "bf16"}, "en", "price on request"),
        ({"task": "inference", "model": "llama-3.1-70b", "precision": "int4"}, "ru", "цена по запросу"),
    ],
)
def test_an_answer_says_price_on_request_once(request_: dict[str, str], lang: str, phrase: str) -> None:
    from core.layouts.plain import render_answer
    from core.sizing.estimate import estimate

    details = "\n\n" + ("Влезет ли" if lang == "ru" else "Fits")
    short = render_answer(estimate(request_), lang).split(details)[0]
    assert short.count(phrase) == 1


def test_a_bad_word_list_is_named(tmp_path: Path) -> None:
    from core.errors import CatalogError
    from core.parse.price import words

    bad = tmp_path / "prices.toml"
    bad.write_text('price = ["цена"]\nmonth = []\nnot_price = ["vram"]\n', encoding="utf-8")
    with pytest.raises(CatalogError, match="`month` must be a list of words"):
        words(bad)
