"""Speculative decoding and hybrid models asked in the bot as users type them (ru, en): the draft's
share and the speed-up under the breakdown; a hybrid's KV cache of its attention layers only and the
state per request. Through the real bot on the sandbox, in a chat and inline."""

from __future__ import annotations

import pytest

from core.language.phrases import format_bytes
from core.parse import understand
from core.sizing.estimate import estimate
from tests.bot.e2e.conftest import Harness, assert_no_failed_calls, result_mark
from tests.bot.e2e.test_inline import the_article


def plain(text: str | None) -> str:
    return (text or "").replace("\xa0", " ").replace("\u202f", " ")


@pytest.mark.parametrize(
    ("question", "lang", "says"),
    [
        ("llama 3.1 70b с драфт моделью llama 3.2 1b на 2 h100", "ru", "драфт-модель Llama 3.2 1B, k = 5"),
        ("llama 3.1 70b with draft model llama 3.2 1b on 2 h100", "en", "draft model Llama 3.2 1B, k = 5"),
        ("eagle3 для llama 3.1 8b", "ru", "голова EAGLE-3, k = 3"),
        ("deepseek v3 with mtp on 8 h200", "en", "the model's MTP layer, k = 1"),
    ],
)
async def test_speculative_decoding_shows_the_draft_and_the_speed_up(
    harness: Harness, question: str, lang: str, says: str
) -> None:
    user = harness.user(language_code=lang)
    (reply,) = await user.send(question)
    shown = plain(reply.text)
    assert result_mark(lang) in shown
    assert says in shown
    result = estimate(understand(question).request)
    assert result.speculative is not None
    low = f"{result.speculative.speedup_low:.1f}"
    assert (low.replace(".", ",") if lang == "ru" else low) in shown, "the speed-up range is said"
    assert result.speculative.cite in shown, "with its source"
    assert_no_failed_calls(harness.sandbox)


@pytest.mark.parametrize(
    ("question", "lang", "says"),
    [
        ("qwen3-next 80b 128k контекст на h100", "ru", "KV-кэш только у 12 из 48 слоёв"),
        ("jamba 1.5 mini 256k", "ru", "KV-кэш только у 4 из 32 слоёв"),
        ("jamba 1.5 mini 256k context", "en", "only 4 of 32 layers keep a KV cache"),
        ("qwen3 next 80b on h200, 64k", "en", "only 12 of 48 layers keep a KV cache"),
    ],
)
async def test_a_hybrid_model_keeps_a_kv_cache_in_its_attention_layers_only(
    harness: Harness, question: str, lang: str, says: str
) -> None:
    user = harness.user(language_code=lang)
    (reply,) = await user.send(question)
    shown = plain(reply.text)
    assert result_mark(lang) in shown and says in shown
    result = estimate(understand(question).request)
    state = next(a for a in result.assumptions if a.code == "hybrid_state")
    assert plain(format_bytes(float(state.params["per_sequence_bytes"]), lang)) in shown
    assert_no_failed_calls(harness.sandbox)


@pytest.mark.parametrize(
    ("query", "lang", "says"),
    [
        ("eagle3 для llama 3.1 8b", "ru", "Спекулятивное декодирование"),
        ("jamba 1.5 mini 256k", "en", "Hybrid model"),
    ],
)
async def test_inline_answers_say_it_too(harness: Harness, query: str, lang: str, says: str) -> None:
    user = harness.user(language_code=lang)
    article = the_article(await user.inline(query))
    assert says in plain(article["shown_text"])


async def test_a_model_picked_among_several_keeps_the_speculative_method(harness: Harness) -> None:
    """'eagle3 для llama 8b' names two Llamas of 8B: the user picks one, the answer still speculates."""
    user = harness.user(language_code="ru")
    (ask,) = await user.send("eagle3 для llama 8b")
    assert "Llama 3.1 8B" in [b.text for row in ask.buttons for b in row]
    picked = await user.click("Llama 3.1 8B")
    shown = plain(picked.messages[-1].text)
    assert result_mark("ru") in shown and "голова EAGLE-3" in shown


@pytest.mark.parametrize(("lang", "says"), [("ru", "Гибридные модели"), ("en", "Hybrid models")])
async def test_about_says_what_is_answered_and_how_accurately(harness: Harness, lang: str, says: str) -> None:
    user = harness.user(language_code=lang)
    replies = await user.send("/about")  # two messages, each under Telegram's limit (test_about.py)
    shown = "\n".join(r.text or "" for r in replies)
    assert says in shown and "Leviathan" in shown and all(len(r.text or "") < 4096 for r in replies)


@pytest.mark.parametrize(
    ("first", "then", "lang", "says"),
    [
        ("llama 3.1 8b на h100", "а с eagle3?", "ru", "голова EAGLE-3"),
        ("llama 3.1 70b on 2 h100", "and with draft model llama 3.2 1b?", "en", "draft model Llama 3.2 1B"),
    ],
)
async def test_a_follow_up_adds_speculative_decoding(
    harness: Harness, first: str, then: str, lang: str, says: str
) -> None:
    user = harness.user(language_code=lang)
    await user.send(first)
    (changed,) = await user.send(then)
    assert says in plain(changed.text)
    (kept,) = await user.send("а в int4?" if lang == "ru" else "and in int4?")
    assert says in plain(kept.text), "a later follow-up keeps it"
