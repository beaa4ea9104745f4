"""The guided dialog's steps say what fits them (issue 25, issue 19 item 6): a generation model is
never asked for by size, "Typical" only where it adds a choice, the LLMs most asked first, and a
model of the wrong kind or a number out of the contract's bounds gets a sentence saying so."""

from __future__ import annotations

from tests.bot.e2e.conftest import Harness, assert_no_failed_calls, buttons, core, text


async def test_a_video_model_is_asked_by_name_and_a_size_is_refused(harness: Harness) -> None:
    user = harness.user(language_code="ru")
    await user.send("/start")
    asked = (await user.click(text("task-video"))).messages[-1].text or ""
    assert text("ask-model-generation").splitlines()[1] in asked and "13B" not in asked
    refused = await user.send("13B")
    assert refused[-1].text == text("step-size-not-allowed", kind="video")
    assert_no_failed_calls(harness.sandbox)


async def test_an_image_model_at_the_llm_step_is_refused_naming_both_kinds(harness: Harness) -> None:
    user = harness.user(language_code="ru")
    await user.send("/start")
    await user.click(text("task-inference"))
    refused = await user.send("sdxl")
    expected = text("step-wrong-kind", model="Stable Diffusion XL 1.0", kind="image", wanted="llm")
    assert refused[-1].text == expected and "языковая модель" in expected
    # still at the model step: an LLM is taken
    asked = await user.send("qwen3 8b")
    assert text("ask-precision").splitlines()[0] in (asked[-1].text or "")


async def test_too_many_users_then_a_model_is_a_sentence_with_the_bounds(harness: Harness) -> None:
    user = harness.user(language_code="ru")
    await user.send("10^10 пользователей")
    shown = (await user.click("Llama 3.1 8B")).messages[-1].text or ""
    what = text("field-concurrency", value=10**10)
    assert shown.startswith(text("step-out-of-range", what=what, low=1, high=100_000))
    assert "Input should" not in shown
    assert_no_failed_calls(harness.sandbox)


async def test_the_llm_list_starts_with_what_people_run_now(harness: Harness) -> None:
    """Not Mistral 7B v0.1 of 2023 on page 1: the catalogue's `popularity`, most asked first."""
    user = harness.user(language_code="ru")
    await user.send("/start")
    first_page = buttons((await user.click(text("task-inference"))).messages[-1])
    assert first_page[:2] == ["Qwen3 8B", "Qwen3 30B-A3B"]  # the most asked family, by rank
    assert {"GPT-OSS 20B", "Llama 3.1 8B"} <= set(first_page)
    assert not any(name.startswith("Mistral 7B") for name in first_page)


async def test_typical_only_where_it_is_not_one_of_the_buttons(harness: Harness) -> None:
    """ "Типично" is the core's default: offered for the precision (the checkpoint's own format), not
    for the context (the default, 4K, is a button) nor the users (1 is a button)."""
    user = harness.user(language_code="ru")
    await user.send("/start")
    await user.click(text("task-inference"))
    precision = (await user.click("Qwen3 8B")).messages[-1]
    assert text("btn-typical") in buttons(precision)
    context = (await user.click(core("precision", "bf16"))).messages[-1]
    assert text("btn-typical") not in buttons(context) and "4K" in buttons(context)
    users = (await user.click("4K")).messages[-1]
    assert text("btn-typical") not in buttons(users) and "1" in buttons(users)


async def test_the_sequence_button_says_what_it_changes(harness: Harness) -> None:
    """`Change sequence` meant nothing: the fine-tuning result offers 'Change sequence length'."""
    user = harness.user(language_code="en")
    await user.send("/start")
    await user.click(text("task-finetune", "en"))
    await user.send("llama 3.1 8b")
    await user.click(core("method", "lora", "en"))
    await user.click(core("precision", "bf16", "en"))
    await user.click("1")
    result = (await user.click("2K")).messages[-1]
    assert "Change sequence length" in buttons(result)
    assert "Change sequence" not in buttons(result)
