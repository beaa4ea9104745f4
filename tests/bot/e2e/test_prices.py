"""Every sales question reaches a price or a manager, through the real bot on the sandbox (ru, en):
price questions with and without an earlier answer and /prices get the price list from the offers
file with the rent and quote buttons; an unknown price says so once and asks for it through the
quote form; a tight priced offer leads; comparisons, inverse and cost answers and "Other" end in the
rent and quote buttons; /help names /prices and /contact."""

from __future__ import annotations

from urllib.parse import urlsplit

import pytest

from core.language import words as core_texts
from tests.bot.e2e.conftest import Harness, assert_no_failed_calls, buttons, result_mark, text
from tgsandbox import ChatMessage

ON_REQUEST = {"ru": "цена по запросу", "en": "price on request"}
SIZED = {"ru": "llama 3.1 8b int4 32k 4 пользователя", "en": "llama 3.1 8b int4 32k 4 users"}
HEADLINE = {
    "ru": "Llama 3.1 8B: инференс, int4, vLLM, контекст 32\xa0768 токенов, 4 пользователя",
    "en": "Llama 3.1 8B: inference, int4, vLLM, context 32,768 tokens, 4 users",
}
H100 = {"ru": "сколько стоит аренда h100?", "en": "how much is an H100 per hour"}
H100_LINE = {
    "ru": "• H100 SXM 80 GB: 1×, 2×, 4×, 8× — цена по запросу",
    "en": "• H100 SXM 80 GB: 1×, 2×, 4×, 8× — price on request",
}
RTX_LINE = {
    "ru": "• RTX 4090 48 GB: 1× — от 149 ₽/ч; 2×, 4× — цена по запросу",
    "en": "• RTX 4090 48 GB: 1× — from 149 ₽/h; 2×, 4× — price on request",
}


def core(key: str, lang: str, **args: object) -> str:
    return core_texts.t(key, lang, **args)  # type: ignore[arg-type]


def rent(gpu: str, lang: str) -> str:
    return text("btn-rent", lang, count=1, gpu=gpu)


def rent_url(message: ChatMessage) -> str:
    (url,) = [b.url for row in message.buttons for b in row if b.url]
    assert url is not None
    return url


def lines(message: ChatMessage) -> list[str]:
    return (message.text or "").splitlines()


async def assert_form_opens(user: object, button: str, lang: str, config: str | None) -> None:
    """`button` pressed: the quote form asks how to reach the user, naming `config` (or none)."""
    await user.click(button)  # type: ignore[attr-defined]
    ask = user.last_message()  # type: ignore[attr-defined]
    expected = text("lead-config", lang, config=config) if config else text("lead-no-config", lang)
    assert expected in (ask.text or "")
    assert text("btn-lead-phone", lang) in buttons(ask)


@pytest.mark.parametrize("lang", ["ru", "en"])
async def test_a_price_question_without_an_answer_gets_the_price_list(harness: Harness, lang: str) -> None:
    user = harness.user(language_code=lang)
    reply = (await user.send(H100[lang]))[-1]
    assert lines(reply)[0] == core("prices-title-gpu", lang, gpu="H100 SXM 80 GB")
    assert H100_LINE[lang] in lines(reply)
    assert text("ask-model", lang) not in (reply.text or "")
    assert buttons(reply) == [rent("H100 SXM 80 GB", lang), text("btn-ask-price", lang)]
    assert urlsplit(rent_url(reply)).path.endswith("/h100-sxm-x1")
    await assert_form_opens(user, text("btn-ask-price", lang), lang, None)
    assert_no_failed_calls(harness.sandbox)


@pytest.mark.parametrize("lang", ["ru", "en"])
async def test_a_price_question_after_an_answer_is_not_a_sizing_question(harness: Harness, lang: str) -> None:
    user = harness.user(language_code=lang)
    await user.send(SIZED[lang])
    reply = (await user.send(H100[lang]))[-1]
    assert H100_LINE[lang] in lines(reply)
    assert result_mark(lang) not in (reply.text or "")
    month = {"ru": "сколько стоит 4090 48 в месяц", "en": "how much is a 4090 48 per month"}[lang]
    reply = (await user.send(month))[-1]
    assert lines(reply)[1:2] == [RTX_LINE[lang]]
    assert core("prices-no-monthly", lang) in lines(reply)
    assert "8×" not in (reply.text or "") and result_mark(lang) not in (reply.text or "")
    assert buttons(reply) == [rent("RTX 4090 48 GB", lang), text("btn-ask-price", lang)]
    assert urlsplit(rent_url(reply)).path.endswith("/rtx4090-48gb-x1")
    # the quote form from the list keeps the earlier answer's configuration
    await assert_form_opens(user, text("btn-ask-price", lang), lang, HEADLINE[lang])


@pytest.mark.parametrize(
    ("lang", "ask"),
    [("ru", "прайс"), ("ru", "тарифы"), ("ru", "/prices"), ("en", "price list"), ("en", "/prices")],
)
async def test_the_whole_price_list(harness: Harness, lang: str, ask: str) -> None:
    user = harness.user(language_code=lang)
    reply = (await user.send(ask))[-1]
    assert lines(reply)[0] == core("prices-title", lang)
    assert lines(reply)[1] == RTX_LINE[lang]
    assert H100_LINE[lang] in lines(reply)
    assert buttons(reply) == [rent("RTX 4090 48 GB", lang), text("btn-ask-price", lang)]


@pytest.mark.parametrize("lang", ["ru", "en"])
async def test_an_unknown_price_is_said_once_and_asked_for(harness: Harness, lang: str) -> None:
    user = harness.user(language_code=lang)
    question = {"ru": "llama 3.1 70b bf16", "en": "llama 3.1 70b bf16"}[lang]
    result = (await user.send(question))[-1]
    assert "4× RTX 4090 48 GB" in lines(result)[0]
    assert (result.text or "").count(ON_REQUEST[lang]) == 1
    assert text("btn-ask-price", lang) in buttons(result)
    assert text("btn-quote", lang) not in buttons(result)
    settings = {"ru": "Llama 3.1 70B: инференс, bf16", "en": "Llama 3.1 70B: inference, bf16"}[lang]
    await user.click(text("btn-ask-price", lang))
    assert settings in (user.last_message().text or "")


@pytest.mark.parametrize("lang", ["ru", "en"])
async def test_a_tight_priced_offer_leads_and_the_comfortable_one_second(harness: Harness, lang: str) -> None:
    user = harness.user(language_code=lang)
    question = {"ru": "llama 3.1 70b int4", "en": "llama 3.1 70b int4"}[lang]
    result = (await user.send(question))[-1]
    first, _need, tight = lines(result)[:3]
    assert "1× RTX 4090 48 GB" in first and ("149 ₽/ч" if lang == "ru" else "149 ₽/h") in first
    assert tight.startswith(core("tight-lead", lang, percent=10).split(":")[0])
    assert core("tight-roomy", lang, config="2× RTX 4090 48 GB", price=ON_REQUEST[lang]) in tight
    assert text("btn-rent", lang, count=1, gpu="RTX 4090 48 GB") in buttons(result)
    assert text("btn-quote", lang) in buttons(result)


@pytest.mark.parametrize(
    ("lang", "ask"),
    [
        ("ru", "сравни 4090 48 и h100 для llama 3.1 70b int4"),
        ("en", "compare 4090 48 and h100 for llama 3.1 70b int4"),
    ],
)
async def test_a_comparison_ends_in_the_rent_and_quote_buttons(harness: Harness, lang: str, ask: str) -> None:
    user = harness.user(language_code=lang)
    reply = (await user.send(ask))[-1]
    assert buttons(reply) == [text("btn-rent", lang, count=1, gpu="RTX 4090 48 GB"), text("btn-quote", lang)]
    assert urlsplit(rent_url(reply)).path.endswith("/rtx4090-48gb-x1")
    await user.click(text("btn-quote", lang))
    assert text("btn-lead-phone", lang) in buttons(user.last_message())


@pytest.mark.parametrize(
    ("lang", "ask"),
    [
        ("ru", "какой максимальный контекст влезет в 4090 48 для llama 3.1 8b"),
        ("en", "longest context that fits a 4090 48 for llama 3.1 8b"),
        ("ru", "сколько будет стоить дообучение llama 3.1 8b на 10000 примеров по 1000 токенов, 3 эпохи"),
        ("en", "how much will fine-tuning llama 3.1 8b on 10000 examples of 1000 tokens, 3 epochs cost"),
    ],
)
async def test_inverse_and_cost_answers_end_in_the_rent_and_quote_buttons(
    harness: Harness, lang: str, ask: str
) -> None:
    user = harness.user(language_code=lang)
    reply = (await user.send(ask))[-1]
    assert result_mark(lang) in (reply.text or "")
    shown = buttons(reply)
    assert shown[0] == text("btn-rent", lang, count=1, gpu="RTX 4090 48 GB")
    assert text("btn-quote", lang) in shown


@pytest.mark.parametrize("lang", ["ru", "en"])
async def test_other_task_opens_the_quote_form(harness: Harness, lang: str) -> None:
    user = harness.user(language_code=lang)
    await user.send("/start")
    await user.click(text("task-other", lang))
    note = user.last_message()
    assert text("task-other-note", lang).split("\n")[0] in (note.text or "")
    assert buttons(note)[:2] == [rent("RTX 4090 48 GB", lang), text("btn-quote", lang)]
    assert not any(b.url == harness.settings.contact_url for row in note.buttons for b in row)
    await assert_form_opens(user, text("btn-quote", lang), lang, None)
    await user.send("ann@example.com")
    await user.click(text("btn-lead-skip", lang))
    saved, ask = user.bot_messages()[-2:]  # the lead, then the optional "when?"
    assert "ann@example.com" in (saved.text or "") and ask.text == text("need-ask-when", lang)


@pytest.mark.parametrize("lang", ["ru", "en"])
async def test_help_names_prices_and_contact(harness: Harness, lang: str) -> None:
    user = harness.user(language_code=lang)
    reply = (await user.send("/help"))[-1]
    assert "/prices" in (reply.text or "") and "/contact" in (reply.text or "")
    menus = [r.params for r in harness.sandbox.requests if r.method == "setMyCommands"]
    assert menus and all("prices" in str(m.get("commands")) for m in menus)
