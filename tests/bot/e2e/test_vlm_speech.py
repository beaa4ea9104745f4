"""Vision-language and speech questions through the real bot (issue 22 items 3, 4), in Russian and
English, typed as users type them: Whisper is sized (never answered with embedding models), a
vision model's images count, and the answer names what it sized."""

from __future__ import annotations

import pytest

from tests.bot.e2e.conftest import Harness, assert_no_failed_calls, result_mark


def plain(message_text: str | None) -> str:
    return (message_text or "").replace("\xa0", " ")


@pytest.mark.parametrize(
    ("phrase", "lang", "said"),
    [
        ("whisper large v3", "ru", "Whisper large-v3"),
        ("whisper large v3", "en", "Whisper large-v3"),
        ("whisper large v3 int8 на t4", "ru", "T4"),
        ("сколько памяти нужно для распознавания речи whisper", "ru", "Whisper large-v3"),
        ("speech recognition with whisper turbo, batch 8", "en", "Whisper large-v3-turbo"),
    ],
)
async def test_whisper_is_sized_not_turned_away(harness: Harness, phrase: str, lang: str, said: str) -> None:
    user = harness.user(language_code=lang)
    reply = (await user.send(phrase))[-1]
    body = plain(reply.text)
    assert result_mark(lang) in body, body
    assert said in body
    assert "BGE" not in body and "E5" not in body  # never embedding models
    assert ("beam 5" in body) or ("beam 1" in body)
    assert_no_failed_calls(harness.sandbox)


@pytest.mark.parametrize(
    ("phrase", "lang", "images"),
    [
        ("qwen2.5-vl 7b на 4090 с 4 картинками", "ru", "4 картинки в запросе"),
        ("llama 4 scout vision on h100", "en", "1 image per prompt"),
        ("qwen2.5-vl 7b with 2 images on a100", "en", "2 images per prompt"),
    ],
)
async def test_a_vision_model_counts_its_images(
    harness: Harness, phrase: str, lang: str, images: str
) -> None:
    user = harness.user(language_code=lang)
    reply = (await user.send(phrase))[-1]
    body = plain(reply.text)
    assert result_mark(lang) in body, body
    assert images in body
    assert_no_failed_calls(harness.sandbox)


@pytest.mark.parametrize(
    ("phrase", "lang", "said"),
    [
        ("whisper large v3 int8 на t4", "ru", "beam 5"),
        ("whisper large v3 turbo", "en", "beam 5"),
        ("qwen2.5-vl 7b на 4090 с 4 картинками", "ru", "4 картинки в запросе"),
        ("llama 4 scout vision on h100", "en", "1 image per prompt"),
    ],
)
async def test_inline_answers_size_speech_and_vision(
    harness: Harness, phrase: str, lang: str, said: str
) -> None:
    """Inline mode (`@bot …` in any chat) answers the same questions with one article."""
    user = harness.user(language_code=lang)
    answer = await user.inline(phrase)
    (article,) = answer.results
    assert article["title"].startswith(("✅", "⚠️", "❌")), article["title"]
    body = plain(article["input_message_content"]["message_text"])
    assert said in body
    assert "BGE" not in body
    assert not user.bot_messages()
    assert_no_failed_calls(harness.sandbox)


@pytest.mark.parametrize(("lang", "decimal"), [("ru", ","), ("en", ".")])
async def test_about_says_what_speech_and_vision_answers_are_worth(
    harness: Harness, lang: str, decimal: str
) -> None:
    from bot.handlers.commands import MULTIMODAL_ACCURACY
    from core.sizing.accuracy_multimodal import about_figures

    assert about_figures() == MULTIMODAL_ACCURACY
    user = harness.user(language_code=lang)
    shown = "\n".join(plain(r.text) for r in await user.send("/about"))
    assert "Whisper" in shown and "Qwen2.5-VL" in shown and "TTS" in shown
    for name in ("speech_median", "speech_max", "vision_max"):
        assert f"{MULTIMODAL_ACCURACY[name]:.1f}%".replace(".", decimal) in shown, name


@pytest.mark.parametrize("lang", ["ru", "en"])
async def test_whisper_typed_in_the_guided_dialog_is_sized(harness: Harness, lang: str) -> None:
    """/start → run a model → "whisper large v3" typed at the model step: taken (not "wrong kind"),
    and the dialog ends in a speech answer (its batch step read as windows at once)."""
    from tests.bot.e2e.conftest import core, text

    user = harness.user(language_code=lang)
    await user.send("/start")
    await user.click(text("task-inference", lang))
    reply = (await user.send("whisper large v3"))[-1]
    assert "Whisper large-v3" in plain(reply.text), reply.text  # taken: the precision step follows
    await user.click(core("precision", "bf16", lang))
    answer = plain((await user.send("2"))[-1].text)  # the windows at once: no context step
    assert result_mark(lang) in answer and "Whisper large-v3" in answer and "beam 5" in answer
    assert_no_failed_calls(harness.sandbox)


@pytest.mark.parametrize(
    ("first", "then", "lang", "said"),
    [
        ("whisper large v3", "а в int8?", "ru", "int8"),
        ("qwen2.5-vl 7b with 2 images", "and with 4 images?", "en", "4 images per prompt"),
    ],
)
async def test_follow_ups_change_a_speech_or_vision_answer(
    harness: Harness, first: str, then: str, lang: str, said: str
) -> None:
    user = harness.user(language_code=lang)
    await user.send(first)
    answer = plain((await user.send(then))[-1].text)
    assert result_mark(lang) in answer or "↔" in answer, answer
    assert said in answer, answer
    assert_no_failed_calls(harness.sandbox)
