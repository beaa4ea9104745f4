"""Whisper in the guided dialog (issue 22 item 4): a speech model named at the model step is asked
only what it is sized by (`core.sizing.defaults_multimodal`): the precisions the speech engines run (no GGUF,
no 4-bit) and the 30-second windows at once, never a context length (Whisper's windows are fixed)."""

from __future__ import annotations

import pytest

from core.contract import Precision
from core.sizing.defaults_multimodal import SPEECH_PRECISIONS
from tests.bot.e2e.conftest import Harness, assert_no_failed_calls, buttons, core, result_mark, text


def plain(message_text: str | None) -> str:
    return (message_text or "").replace("\xa0", " ")


@pytest.mark.parametrize(("lang", "windows"), [("ru", "8 окон"), ("en", "8 windows")])
async def test_whisper_dialog_asks_speech_precisions_then_windows(
    harness: Harness, lang: str, windows: str
) -> None:
    user = harness.user(language_code=lang)
    await user.send("/start")
    await user.click(text("task-inference", lang))
    precision_step = (await user.send("whisper large v3 turbo"))[-1]
    offered = buttons(precision_step)
    for p in SPEECH_PRECISIONS:
        assert core("precision", p.value, lang) in offered, p
    for p in (Precision.Q4_K_M, Precision.INT4, Precision.AWQ_INT4, Precision.FP8):
        assert core("precision", p.value, lang) not in offered, p
    batch_step = (await user.click(core("precision", "int8", lang))).messages[-1]
    shown = plain(batch_step.text)
    assert text("ask-batch_size-speech", lang).split("(")[0].strip() in shown
    assert text("ask-context_length", lang).split("?")[0] not in shown
    result = (await user.click("8", message=batch_step)).messages[-1]
    body = plain(result.text)
    assert result_mark(lang) in body and "Whisper large-v3-turbo" in body, body
    details = (await user.click(text("btn-details", lang), message=result)).messages[-1]
    assert windows in plain(details.text) or windows in body
    assert_no_failed_calls(harness.sandbox)


async def test_back_from_whisper_to_an_llm_asks_the_llm_steps(harness: Harness) -> None:
    """Changing the model back to a language model: its precisions and the context step return."""
    user = harness.user(language_code="ru")
    await user.send("/start")
    await user.click(text("task-inference", "ru"))
    await user.send("whisper large v3")
    model_step = (await user.click(text("btn-back", "ru"))).messages[-1]
    precision_step = (await user.send("llama 3.1 8b"))[-1]
    assert core("precision", "q4_k_m", "ru") in buttons(precision_step), model_step.text
    context_step = (await user.click(core("precision", "bf16", "ru"))).messages[-1]
    assert text("ask-context_length", "ru").split("?")[0] in plain(context_step.text)
    assert_no_failed_calls(harness.sandbox)


@pytest.mark.parametrize("lang", ["ru", "en"])
async def test_another_precision_after_a_typed_whisper_question(harness: Harness, lang: str) -> None:
    """A quick answer to "whisper large v3" refined with "Another precision": the speech precisions."""
    user = harness.user(language_code=lang)
    result = (await user.send("whisper large v3"))[-1]
    assert result_mark(lang) in plain(result.text)
    precision_step = (await user.click(text("btn-change-precision", lang), message=result)).messages[-1]
    offered = buttons(precision_step)
    assert core("precision", "int8", lang) in offered and core("precision", "q4_k_m", lang) not in offered
    again = (await user.click(core("precision", "int8", lang), message=precision_step)).messages[-1]
    assert result_mark(lang) in plain(again.text) and "Whisper large-v3" in plain(again.text)
    assert_no_failed_calls(harness.sandbox)
