"""Inline mode: `@bot question` in any chat, answered with one article (answerInlineQuery)."""

from __future__ import annotations

from typing import Any

import pytest

from bot.db.middleware import INLINE_SOURCE
from bot.presenter import render_inline, render_result
from core.catalogue.catalog import default_catalog
from core.contract import Result
from core.language.answer import build_answer
from core.language.cards import price_of
from core.layouts.plain import render_answer
from core.parse import understand
from core.sizing.estimate import estimate
from tests.bot.e2e.conftest import Harness, assert_no_failed_calls, core, html, text
from tgsandbox import InlineAnswer
from tgsandbox.formatting import format_text, parse_html, utf16_length
from tgsandbox.keyboards import buttons_of, validate_reply_markup

QUESTION = "llama 3.1 8b int4 32k 4 users"
FITS_NOWHERE = "deepseek r1 fp16 128k 64 users"
BOT_LINK = "https://t.me/sandbox_bot?start=inline"  # the sandbox bot's username


def core_result(question: str) -> Result:
    catalog = default_catalog()
    return estimate(understand(question, catalog).request, catalog)


def the_article(answer: InlineAnswer) -> dict[str, Any]:
    """The one result, checked as Telegram would check the message it posts: HTML parse mode, valid
    HTML, within the length limit (well under it), URL buttons only."""
    assert answer.is_personal, "answers are in the user's language"
    assert answer.cache_time is not None and 0 < answer.cache_time <= 60
    (article,) = answer.results
    assert article["type"] == "article" and article["title"] and article["description"]
    content = article["input_message_content"]
    assert content["parse_mode"] == "HTML"
    shown = format_text(content["message_text"], "HTML")  # raises Telegram's 400 for broken HTML
    assert utf16_length(shown.text) < 1500, "a compact answer"
    validate_reply_markup(article["reply_markup"])
    article["shown_text"] = shown.text
    article["urls"] = [b.url for row in buttons_of(article["reply_markup"]) for b in row]
    assert all(article["urls"]), "URL buttons only: an inline message has no dialog behind it"
    assert article["urls"][-1] == BOT_LINK
    return article


def results_button(harness: Harness) -> Any:
    (call,) = [r for r in harness.sandbox.requests if r.method == "answerInlineQuery"][-1:]
    return call.params.get("button")


EXPECTED = {
    "ru": {
        "title": "✅ Влезет на 1× RTX 4090 48 GB · от 149 ₽/ч · ~32 ток/с",
        "need": "Нужно 24,0 ГБ на карту из 43,2 ГБ",
        "parts": ["KV-кэш 16,0 ГБ", "веса 5,4 ГБ", "активации 802 МБ"],
        "lines": ["• KV-кэш: 16,0 ГБ", "• веса: 5,4 ГБ", "• активации: 802 МБ"],
        "offer": "Дешевле всего: 1× RTX 4090 48 GB, от 149 ₽/ч · быстрее всего: 1× B200 180 GB, "
        "цена по запросу",
        "settings": "Llama 3.1 8B: инференс, int4, vLLM, контекст 32 768 токенов, 4 пользователя",
    },
    "en": {
        "title": "✅ Fits on 1× RTX 4090 48 GB · from 149 ₽/h · ~32 tok/s",
        "need": "Needs 24.0 GB per card of 43.2 GB",
        "parts": ["KV cache 16.0 GB", "weights 5.4 GB", "activations 802 MB"],
        "lines": ["• KV cache: 16.0 GB", "• weights: 5.4 GB", "• activations: 802 MB"],
        "offer": "Cheapest: 1× RTX 4090 48 GB, from 149 ₽/h · fastest: 1× B200 180 GB, price on request",
        "settings": "Llama 3.1 8B: inference, int4, vLLM, context 32,768 tokens, 4 users",
    },
}


def read(text: str) -> str:
    return text.replace("\xa0", " ").replace("\u202f", " ")


@pytest.mark.parametrize("lang", ["ru", "en"])
async def test_inline_answer_in_the_users_language(harness: Harness, lang: str) -> None:
    assert harness.app is not None
    assert "inline_query" in harness.app.dp.resolve_used_update_types()
    user = harness.user(language_code=lang)
    article = the_article(await user.inline(QUESTION))
    expected = EXPECTED[lang]

    result = core_result(QUESTION)
    answer = build_answer(result, lang)
    assert article["title"] == answer.lead == expected["title"], "the title is the lead"
    description = read(article["description"])
    assert description.startswith(expected["need"]) and "\n" not in description
    for part in expected["parts"]:
        assert part in description, part
    shown = read(article["shown_text"])
    lines = shown.splitlines()
    assert lines[0] == expected["title"] and lines[1].startswith(expected["need"])
    assert expected["settings"] in lines
    for line in [*expected["lines"], expected["offer"]]:
        assert line in lines, line
    rec = result.recommendation
    assert rec is not None and rec.url
    assert price_of(rec, lang) in shown and ("149 ₽/ч" if lang == "ru" else "149 ₽/h") in shown
    assert "GiB" not in shown and "ГиБ" not in shown and "{" not in shown and "None" not in shown
    assert [article["urls"][0].split("?")[0], *article["urls"][1:]] == [rec.url, BOT_LINK]  # UTM-tagged
    rent = buttons_of(article["reply_markup"])[0][0]
    assert rent.text == text("btn-rent", lang, count=1, gpu="RTX 4090 48 GB")
    assert results_button(harness) == {"text": text("btn-open-bot", lang), "start_parameter": "inline"}
    assert not user.bot_messages(), "inline mode writes nothing to the user's chat with the bot"
    db_user = await harness.db_user(user.id)
    assert db_user is not None and db_user.source == INLINE_SOURCE
    assert_no_failed_calls(harness.sandbox)


@pytest.mark.parametrize("lang", ["ru", "en"])
def test_the_inline_answer_is_the_bots_short_answer(lang: str) -> None:
    """Picked, the article posts the bot's answer up to its offers: the same lines, nothing else."""
    result = core_result(QUESTION)
    notes = understand(QUESTION).notes

    def tr(key: str, **args: Any) -> str:
        return html(key, lang, **args)

    inline = parse_html(render_inline(result, tr, lang).text).text.splitlines()
    message = parse_html(render_result(result, tr, lang, notes=notes)).text.splitlines()
    assert message[: len(inline)] == inline
    cli = render_answer(result, lang, notes=notes).splitlines()
    assert inline[:2] == cli[:2], "the same decision as the CLI"


async def test_inline_answer_in_the_stored_language(harness: Harness) -> None:
    """A user who chose Russian with /lang gets Russian inline answers from an English Telegram."""
    user = harness.user(language_code="en")
    await user.send("/lang")
    await user.click(text("lang-ru", "en"))
    article = the_article(await user.inline(QUESTION))
    assert article["title"] == EXPECTED["ru"]["title"]
    assert read(article["description"]).startswith(EXPECTED["ru"]["need"])
    assert_no_failed_calls(harness.sandbox)


GARBAGE = [("", "en"), ("   ", "ru"), ("🙃 ??? ытщ", "ru"), ("hello there", "en")]


@pytest.mark.parametrize(("query", "lang"), GARBAGE)
async def test_empty_or_garbage_query_gets_how_to_use(harness: Harness, query: str, lang: str) -> None:
    user = harness.user(language_code=lang)
    article = the_article(await user.inline(query))
    assert article["title"] == text("inline-help-title", lang)
    assert "@sandbox_bot" in article["shown_text"]
    assert article["urls"] == [BOT_LINK], "no offer without an estimate"
    if not query.strip():
        assert article["description"] == text("inline-help-description", lang)
    else:  # what the core did not understand, in the user's language
        description = article["description"]
        assert description != text("inline-help-description", lang) and "\n" not in description
    assert results_button(harness)["start_parameter"] == "inline"
    assert_no_failed_calls(harness.sandbox)


@pytest.mark.parametrize("lang", ["ru", "en"])
async def test_inline_answer_when_nothing_fits(harness: Harness, lang: str) -> None:
    result = core_result(FITS_NOWHERE)
    assert result.recommendation is None, "the question needs more than any configuration we rent"
    user = harness.user(language_code=lang)
    article = the_article(await user.inline(FITS_NOWHERE))
    answer = build_answer(result, lang)
    assert article["title"] == answer.lead
    title = read(article["title"])
    # 64 users: vLLM, whose KV cache carries no allocator reserve (one exact allocation)
    assert title.startswith("❌ " + ("Нужно 1 801,9 ГБ" if lang == "ru" else "Needs 1,801.9 GB"))
    shown = read(article["shown_text"])
    assert shown.splitlines()[0] == title
    for name in ("weights", "kv_cache"):
        assert core("component", name, lang) in shown
    assert "₽" not in shown, "no offer, no price"
    assert article["urls"] == [harness.settings.contact_url, BOT_LINK]
    assert_no_failed_calls(harness.sandbox)


def test_an_inline_answer_points_only_at_what_it_shows() -> None:
    result = core_result(FITS_NOWHERE)

    def tr(key: str, **args: Any) -> str:
        return html(key, "en", **args)

    article = render_inline(result, tr, "en")
    assert "below" not in article.text and "below" not in article.description
