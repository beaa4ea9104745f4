"""Inline mode: `@bot question` in any chat, answered with one article (answerInlineQuery)."""

from __future__ import annotations

from typing import Any

import pytest

from bot.db.middleware import INLINE_SOURCE
from core import texts as core_texts
from core.catalog import default_catalog
from core.contract import Result
from core.estimate import estimate
from core.parse import understand
from core.render import format_bytes, price_text
from tests.bot.e2e.conftest import Harness, assert_no_failed_calls, text
from tgsandbox import InlineAnswer
from tgsandbox.formatting import format_text, utf16_length
from tgsandbox.keyboards import buttons_of, validate_reply_markup

QUESTION = "llama 3.1 70b int4 32k"
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


@pytest.mark.parametrize("lang", ["ru", "en"])
async def test_inline_answer_in_the_users_language(harness: Harness, lang: str) -> None:
    assert harness.app is not None
    assert "inline_query" in harness.app.dp.resolve_used_update_types()
    user = harness.user(language_code=lang)
    article = the_article(await user.inline(QUESTION))

    result = core_result(QUESTION)
    rec = result.recommendation
    assert rec is not None and rec.in_offers and rec.url
    total = format_bytes(result.total_bytes, lang)
    title = text("inline-title", lang, icon="✅", total=total, count=rec.count, gpu=rec.gpu_name)
    assert article["title"] == title
    for component in ("weights", "kv_cache"):
        part = text(
            "inline-component",
            lang,
            name=core_texts.label("component", component, lang),
            size=format_bytes(result.breakdown[component], lang),
        )
        assert part in article["description"]
    shown = article["shown_text"]
    assert total in shown and "Llama 3.1 70B" in shown
    assert price_text(rec, lang) in shown
    assert article["urls"] == [rec.url, BOT_LINK]
    assert results_button(harness) == {"text": text("btn-open-bot", lang), "start_parameter": "inline"}
    assert not user.bot_messages(), "inline mode writes nothing to the user's chat with the bot"
    db_user = await harness.db_user(user.id)
    assert db_user is not None and db_user.source == INLINE_SOURCE
    assert_no_failed_calls(harness.sandbox)


async def test_inline_answer_in_the_stored_language(harness: Harness) -> None:
    """A user who chose Russian with /lang gets Russian inline answers from an English Telegram."""
    user = harness.user(language_code="en")
    await user.send("/lang")
    await user.click(text("lang-ru", "en"))
    article = the_article(await user.inline(QUESTION))
    assert format_bytes(core_result(QUESTION).total_bytes, "ru") in article["title"]
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
    total = format_bytes(result.total_bytes, lang)
    assert article["title"] == text("inline-title-none", lang, total=total)
    assert text("inline-no-offer", lang) in article["shown_text"]
    assert article["urls"] == [harness.settings.contact_url, BOT_LINK]
    assert_no_failed_calls(harness.sandbox)
