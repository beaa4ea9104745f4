"""Text the bot did not understand never becomes a confident answer to something else (issue 25),
through the real bot: a message naming another model is a new question, /new clears what follow-ups
attach to, thanks and greetings get a friendly reply, questions sized elsewhere and speech models are
said plainly with the quote form, Russian spellings are read, a misspelt model offers the closest."""

from __future__ import annotations

import pytest

from bot.presenter import core_error_reason
from core.errors import EstimateError
from core.language import words as core_texts
from tests.bot.e2e.conftest import Harness, assert_no_failed_calls, buttons, result_mark, text

ENGLISH_ERROR = "task must be"  # the core's English message, once shown to Russian users


def plain(message_text: str | None) -> str:
    return (message_text or "").replace("\xa0", " ")


def change_line(message_text: str | None) -> list[str]:
    return [line for line in plain(message_text).splitlines() if line.startswith("↔")]


async def test_an_image_model_after_a_language_model_answer_is_a_new_question(harness: Harness) -> None:
    user = harness.user(language_code="ru")
    await user.send("qwen2.5 32b awq vllm 16 пользователей")
    answer = (await user.send("стейбл диффужн хл 1024 батч 4"))[-1]
    assert result_mark("ru") in (answer.text or "")
    assert "Stable Diffusion XL" in (answer.text or "") and "1024×1024" in (answer.text or "")
    assert "Qwen" not in (answer.text or "") and not change_line(answer.text)  # not "Было → стало"
    for other in ("сдхл 1024", "хуньюань", "flux 1024 картинки"):
        reply = (await user.send(other))[-1]
        assert result_mark("ru") in (reply.text or ""), reply.text
        assert ENGLISH_ERROR not in (reply.text or "") and not change_line(reply.text)
    assert_no_failed_calls(harness.sandbox)


async def test_an_unknown_image_model_after_an_answer_is_not_applied_to_it(harness: Harness) -> None:
    user = harness.user(language_code="ru")
    await user.send("llama 3.1 70b int4")
    reply = (await user.send("абракадабра картинки 1024"))[-1]
    assert "Llama" not in (reply.text or "") and ENGLISH_ERROR not in (reply.text or "")
    assert core_texts.t("parse-error-unknown_model", "ru", name="абракадабра") in plain(reply.text)


def test_a_core_error_is_never_shown_in_english_to_a_russian_user() -> None:
    error = EstimateError("Llama 3.1 70B is a language model: task must be inference or training", "task")
    assert ENGLISH_ERROR not in core_error_reason(error, "ru")
    assert "задача" in core_error_reason(error, "ru")
    assert ENGLISH_ERROR in core_error_reason(error, "en")


async def test_new_clears_what_follow_ups_change(harness: Harness) -> None:
    user = harness.user(language_code="ru")
    await user.send("llama 3.1 70b bf16")
    await user.send("/new")
    reply = (await user.send("а в int4?"))[-1]
    assert result_mark("ru") not in (reply.text or "") and not change_line(reply.text)
    assert text("ask-model", "ru") in (reply.text or "")  # a new question: which model?


async def test_a_new_inverse_question_inherits_nothing_from_the_last_one(harness: Harness) -> None:
    user = harness.user(language_code="ru")
    await user.send("qwen2.5 32b awq vllm 8k 16 пользователей")
    reply = (await user.send("какая самая большая модель влезет в 4090 48?"))[-1]
    shown = plain(reply.text)
    assert result_mark("ru") in shown
    for inherited in ("AWQ", "8 192", "16 пользовател", "Qwen2.5 32B"):
        assert inherited not in shown, inherited


@pytest.mark.parametrize(
    ("phrase", "lang"),
    [("спасибо!", "ru"), ("привет", "ru"), ("Добрый день", "ru"), ("как дела?", "ru"), ("thanks!", "en")],
)
async def test_thanks_and_greetings_get_a_friendly_reply_and_a_hint(
    harness: Harness, phrase: str, lang: str
) -> None:
    user = harness.user(language_code=lang)
    replies = await user.send(phrase)
    assert [r.text for r in replies] == [text("understand-chit-chat", lang)]
    assert core_texts.t("parse-error-missing_model", lang) not in (replies[0].text or "")


async def test_thanks_after_an_answer_and_at_a_dialog_step(harness: Harness) -> None:
    user = harness.user(language_code="ru")
    answer = (await user.send("llama 3.1 8b int4"))[-1]
    thanks = await user.send("спасибо!")
    assert [r.text for r in thanks] == [text("understand-chit-chat", "ru")]
    kept = [m for m in user.messages() if m.message_id == answer.message_id]
    assert [m.text for m in kept] == [answer.text]  # the answer is left as it was
    user = harness.user(language_code="ru")
    await user.send("/start")
    await user.click(text("task-inference", "ru"))
    hello = await user.send("привет")
    assert [r.text for r in hello] == [text("understand-chit-chat", "ru")]
    assert text("hint-model", "ru") not in (hello[-1].text or "")


async def test_a_new_question_at_the_model_step_is_answered_as_asked(harness: Harness) -> None:
    user = harness.user(language_code="ru")
    await user.send("/start")
    await user.click(text("task-inference", "ru"))
    reply = (await user.send("какая самая большая модель влезет в h100?"))[-1]
    assert "«*»" not in (reply.text or "") and "· *" not in (reply.text or "")
    assert result_mark("ru") in (reply.text or "") and "H100" in (reply.text or "")


# Whisper, Bark, XTTS-v2 and F5-TTS are sized since issue 22 (tests/bot/e2e/test_vlm_speech.py,
# test_tts.py); other text-to-speech is not yet.
@pytest.mark.parametrize(
    ("phrase", "lang"), [("озвучка текста silero", "ru"), ("text to speech with silero", "en")]
)
async def test_a_speech_model_is_said_to_be_not_sized_with_the_quote_form(
    harness: Harness, phrase: str, lang: str
) -> None:
    user = harness.user(language_code=lang)
    reply = (await user.send(phrase))[-1]
    assert reply.text == text("understand-unsized-speech", lang)
    assert buttons(reply) == [text("btn-quote", lang)]  # never offered embedding models
    form = await user.click(text("btn-quote", lang))
    asked = text("lead-ask-contact", lang, config=text("lead-no-config", lang))
    assert asked in (form.messages[-1].text or "")


@pytest.mark.parametrize(
    ("phrase", "topic"),
    [
        ("нужен сервер для 3d рендеринга", "render"),
        ("хочу купить сервер с 4090", "hardware"),
        ("можно оплатить по безналу? нужны закрывающие документы", "billing"),
    ],
)
async def test_a_question_outside_sizing_gets_an_honest_answer_and_the_quote_form(
    harness: Harness, phrase: str, topic: str
) -> None:
    user = harness.user(language_code="ru")
    reply = (await user.send(phrase))[-1]
    assert reply.text == text(f"understand-off-topic-{topic}", "ru")
    assert buttons(reply) == [text("btn-quote", "ru")]
    assert text("ask-model", "ru") not in (reply.text or "")


async def test_russian_spellings_are_read(harness: Harness) -> None:
    user = harness.user(language_code="ru")
    answer = plain((await user.send("ллама3 8b инт4"))[-1].text)
    assert "Llama 3 8B" in answer and "int4" in answer
    answer = plain((await user.send("джипити осс 20б на т4"))[-1].text)
    assert "GPT-OSS 20B" in answer and "T4" in answer
    user = harness.user(language_code="ru")
    wan = (await user.send("ван 2.1"))[-1]  # the Wan video model, not a 14B language model
    assert text("task-video", "ru") in (wan.text or "") and "14B" not in (wan.text or "").split("\n")[0]
    assert any(b.startswith("Wan 2.1") for b in buttons(wan)), buttons(wan)
    user = harness.user(language_code="ru")
    ask = (await user.send("мне нужно запустить лламу 70б на 2х 4090 по 48, влезет?"))[-1]
    assert "Llama 3.1 70B" in buttons(ask)
    result = (await user.click("Llama 3.1 70B")).messages[-1]
    assert "2× RTX 4090 48 GB" in plain(result.text).splitlines()[0]  # the 48 GB card, two of them


async def test_a_misspelt_model_is_named_with_the_closest_choices(harness: Harness) -> None:
    user = harness.user(language_code="ru")
    ask = (await user.send("lamma 3.1 8b"))[-1]
    assert "«lamma 3.1 8b»" in (ask.text or "")  # which part was not understood, as typed
    assert buttons(ask)[0] == "Llama 3.1 8B"  # the closest first
    result = (await user.click("Llama 3.1 8B")).messages[-1]
    assert result_mark("ru") in (result.text or "") and "Llama 3.1 8B" in (result.text or "")


async def test_a_card_the_catalogue_lacks_is_said_not_read_as_a_context(harness: Harness) -> None:
    user = harness.user(language_code="ru")
    said, answer = [plain(m.text) for m in await user.send("llama 3.1 8b на 4060")]
    assert said == core_texts.t("assumption-parse_unread", "ru", words="4060")  # said, not dropped
    assert result_mark("ru") in answer and "4 060 токен" not in answer  # not a 4,060-token context


async def test_which_model_is_asked_once(harness: Harness) -> None:
    user = harness.user(language_code="ru")
    ask = (await user.send("сколько памяти нужно?"))[-1]
    assert plain(ask.text).count("Какая модель?") == 1
