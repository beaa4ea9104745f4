"""The launch command and a load question through the real bot on the sandbox, ru and en: the
"⌨️ Launch command" button under an answer sends the command as a code block; "10 rps under 2s"
is answered with the cards it takes."""

from __future__ import annotations

import pytest

from bot.presenter import MAX_MESSAGE
from core.language import words as core_texts
from tests.bot.e2e.conftest import Harness, assert_no_failed_calls, buttons, result_mark, text
from tgsandbox.formatting import format_text, utf16_length


def _code(message_text: str | None, source: str | None) -> str:
    assert source is not None and "<pre><code" in source
    return message_text or ""


@pytest.mark.parametrize(
    ("lang", "question", "program", "meaning"),
    [
        ("ru", "llama 3.1 8b q4_k_m 4 пользователя", "llama-server", "число слотов сервера"),
        (
            "en",
            "llama 3.1 70b on 4x h100 vllm 8 users",
            "vllm serve meta-llama/Llama-3.1-70B",
            "tensor parallel",
        ),
    ],
)
async def test_launch_button_sends_a_code_block(
    harness: Harness, lang: str, question: str, program: str, meaning: str
) -> None:
    user = harness.user(language_code=lang)
    result = (await user.send(question))[-1]
    assert result_mark(lang) in (result.text or "")
    assert text("btn-launch", lang) in buttons(result)
    pressed = await user.click(text("btn-launch", lang), message=result)
    sent = pressed.messages[-1]
    shown = _code(sent.text, sent.source_text)
    assert sent.message_id != result.message_id  # a new message: the answer stays above
    assert program in shown and meaning in shown
    assert any(e.type == "pre" for e in sent.entities)
    assert utf16_length(shown) <= MAX_MESSAGE
    assert core_texts.t("launch-title", lang) in shown
    assert_no_failed_calls(harness.sandbox)


async def test_the_tensor_split_in_the_command(harness: Harness) -> None:
    user = harness.user(language_code="en")
    result = (await user.send("llama 3.1 70b on 4x h100 vllm 8 users"))[-1]
    sent = (await user.click(text("btn-launch", "en"), message=result)).messages[-1]
    assert "--tensor-parallel-size 4" in (sent.text or "")
    assert "--max-model-len" in (sent.text or "")


async def test_an_old_answer_button_is_stale(harness: Harness) -> None:
    user = harness.user(language_code="ru")
    first = (await user.send("llama 3.1 8b q4_k_m"))[-1]
    await user.send("qwen 2.5 7b bf16")
    pressed = await user.click(text("btn-launch", "ru"), message=first)
    assert pressed.text == text("stale-button", "ru")
    assert not pressed.messages


async def test_no_button_without_a_command(harness: Harness) -> None:
    user = harness.user(language_code="en")
    result = (await user.send("sdxl 1024x1024"))[-1]
    assert result_mark("en") in (result.text or "")
    assert text("btn-launch", "en") not in buttons(result)


@pytest.mark.parametrize(
    ("lang", "question", "servers"),
    [
        ("en", "10 rps under 2s llama 3.1 8b", "servers of"),
        ("ru", "10 запросов в секунду, ответ быстрее 2 секунд, llama 3.1 8b", "по 1×"),
    ],
)
async def test_a_load_is_answered_with_cards(
    harness: Harness, lang: str, question: str, servers: str
) -> None:
    user = harness.user(language_code=lang)
    result = (await user.send(question))[-1]
    shown = (result.text or "").replace("\xa0", " ")
    assert result_mark(lang) in shown
    assert "⏱ 10 " in shown and servers in shown
    assert "M/D/1" in shown
    assert_no_failed_calls(harness.sandbox)


async def test_the_short_phrase_asks_which_llama_then_answers_the_load(harness: Harness) -> None:
    """ "llama 8b" names several models: the bot asks which; the load asked is kept."""
    user = harness.user(language_code="en")
    replies = await user.send("10 rps under 2s llama 8b")
    last = replies[-1]
    if result_mark("en") not in (last.text or ""):
        choice = next(b for b in buttons(last) if "3.1" in b and "8B" in b)
        last = (await user.click(choice, message=last)).messages[-1]
    assert "⏱ 10 requests a second" in (last.text or "").replace("\xa0", " ")


@pytest.mark.parametrize("lang", ["ru", "en"])
async def test_about_says_what_is_answered(harness: Harness, lang: str) -> None:
    user = harness.user(language_code=lang)
    about = (await user.send("/about"))[-1]
    assert text("about-launch", lang).split(":")[0] in (about.text or "")
    assert "M/D/1" in (about.text or "")


@pytest.mark.parametrize(
    ("lang", "question", "line"),
    [
        ("en", "10 rps under 2s llama 3.1 8b", "⏱ 10 requests a second"),
        ("ru", "10 rps до 2с llama 3.1 8b", "⏱ 10"),
    ],
)
async def test_inline_answers_the_load(harness: Harness, lang: str, question: str, line: str) -> None:
    user = harness.user(language_code=lang)
    answer = await user.inline(question)
    (article,) = answer.results
    shown = format_text(article["input_message_content"]["message_text"], "HTML").text  # valid HTML
    assert line in shown.replace("\xa0", " ")


@pytest.mark.parametrize("lang", ["ru", "en"])
async def test_details_show_the_first_token(harness: Harness, lang: str) -> None:
    user = harness.user(language_code=lang)
    result = (await user.send("llama 3.1 8b на h100 8k"))[-1]
    details = (await user.click(text("btn-details", lang), message=result)).messages[-1]
    first_token = core_texts.t(
        "latency-ttft", lang, ttft=0.1, tokens=1, config="X", prefill=0.1, mfu=1, tflops=1
    )
    assert first_token.split("~")[0] in (details.text or "")
