"""The answer's picture in the chat: after the text answer of a private chat's result, a 1280×720 PNG
whose caption is one line; drawn once per answer, re-sent by Telegram's file id; a failed
render leaves the text answer alone."""

from __future__ import annotations

import asyncio
import io
from collections.abc import AsyncIterator, Callable
from pathlib import Path

import pytest
from matplotlib.image import imread

from bot import dialog, pictures
from bot.db.models import DIALOG_COMPLETED
from core.language.answer import build_answer
from core.layouts.picture import caption, layout
from core.parse import understand
from core.sizing.estimate import estimate
from tests.bot.e2e.conftest import (
    REPLY_TIMEOUT_S,
    Harness,
    assert_no_failed_calls,
    core,
    result_mark,
    running_bot,
    text,
)
from tests.bot.picture_renders import crash_on_russian, fail_always
from tgsandbox import ChatMessage


@pytest.fixture
async def harness(
    tmp_path: Path, template_db: Path, monkeypatch: pytest.MonkeyPatch
) -> AsyncIterator[Harness]:
    """The bot with pictures on (as in production), and a renderer and cache of its own (a test may put
    another in place before its first picture), its worker started with the bot, stopped afterwards."""
    # the give-up time of a render is not what these tests check: a busy machine may take longer for
    # the first one (the worker's matplotlib import)
    renderer = pictures.Pictures(timeout_s=30.0)
    monkeypatch.setattr(dialog, "PICTURES", renderer)
    monkeypatch.setattr(pictures, "PICTURES", renderer)  # the one the bot starts and stops with it
    try:
        async with running_bot(tmp_path, template_db, answer_pictures=True) as h:
            yield h
    finally:
        await dialog.PICTURES.close()


def expected_caption(question: str, lang: str) -> list[str]:
    understood = understand(question)
    return caption(layout(build_answer(estimate(understood.request), lang, understood.notes)))


def uploaded(photo: object) -> bool:
    """Whether sendPhoto's `photo` was the file itself (multipart, 'attach://…'), not an id."""
    return str(photo).startswith("attach://")


def png_of(harness: Harness, message: ChatMessage) -> bytes:
    assert message.has_photo
    png = harness.sandbox.upload(message.photos[0])
    assert png is not None, "the photo was uploaded, not sent by a URL"
    return png


@pytest.mark.parametrize(
    ("question", "lang"),
    [("llama 3.1 8b int4 32k 4 пользователя", "ru"), ("llama 3.1 70b fp16 on 3090", "en")],
)
async def test_a_quick_answer_is_followed_by_its_picture(harness: Harness, question: str, lang: str) -> None:
    user = harness.user(language_code=lang)
    replies = await user.send(question)
    answer, photo = replies
    assert result_mark(lang) in (answer.text or "") and not answer.has_photo  # the text answer first
    pixels = imread(io.BytesIO(png_of(harness, photo)), format="png")
    assert pixels.shape[:2] == (720, 1280)
    # the caption is one line, what was sized (the lead is the text's first line and the title)
    lines = expected_caption(question, lang)
    assert len(lines) == 1
    assert (photo.text or "").splitlines() == lines
    assert photo.source_text is not None and photo.source_text.startswith("<b>")
    # the buttons stay on the text answer
    assert answer.buttons and not photo.buttons
    assert_no_failed_calls(harness.sandbox)


async def test_the_caption_is_one_line_and_not_the_headline(harness: Harness) -> None:
    """The headline was on the screen three times (text, picture, caption): the caption is the settings
    line of the text answer, whole, and only that."""
    user = harness.user(language_code="ru")
    answer, photo = await user.send("llama 3.1 8b int4 32k 4 пользователя")
    lead, _, settings = (answer.text or "").splitlines()[:3]
    assert photo.text == settings
    assert lead not in (photo.text or "")


async def test_the_dialogs_result_has_its_picture_too(harness: Harness) -> None:
    user = harness.user(language_code="en")
    await user.send("/start")
    for button in (text("task-inference", "en"), "Llama 3.1 8B", core("precision", "bf16", "en"), "4K"):
        await user.click(button)
    result = await user.click("1")
    assert [m.has_photo for m in result.messages] == [False, True]  # the result edited in, its picture
    assert "bf16" in (result.messages[1].text or "")
    # another precision: the result is edited in place again, and the new answer has its own picture
    await user.click(text("btn-change-precision", "en"))
    changed = await user.click(core("precision", "int4", "en"))
    assert [m.has_photo for m in changed.messages] == [False, True]
    first, second = (m for m in user.bot_messages() if m.has_photo)
    assert first.photos != second.photos and "int4" in (second.text or "")
    assert_no_failed_calls(harness.sandbox)


async def test_a_repeated_answer_is_resent_by_file_id_not_drawn_again(harness: Harness) -> None:
    question = "qwen2.5 7b int4 8k"
    ann, bob = harness.user(language_code="en"), harness.user(language_code="en")
    _, first = await ann.send(question)
    _, second = await bob.send(question)
    assert dialog.PICTURES.rendered == 1
    sent = harness.sandbox.sent("sendPhoto")
    assert [uploaded(request.params["photo"]) for request in sent] == [True, False]  # then by id
    assert second.photos == first.photos and second.text == first.text


@pytest.mark.parametrize("render", [fail_always, crash_on_russian], ids=["raises", "worker dies"])
async def test_a_failed_render_keeps_the_text_answer(
    harness: Harness, monkeypatch: pytest.MonkeyPatch, render: Callable[..., tuple[bytes, list[str]]]
) -> None:
    monkeypatch.setattr(dialog, "PICTURES", pictures.Pictures(render=render))
    user = harness.user(language_code="ru")
    replies = await user.send("llama 3.1 8b int4 32k 4 пользователя")
    assert [m.has_photo for m in replies] == [False]
    assert result_mark("ru") in (replies[0].text or "")
    assert not harness.sandbox.sent("sendPhoto")
    (row,) = await harness.dialogs(user.id)
    assert row.status == DIALOG_COMPLETED  # the dialog is recorded whatever the picture did


async def test_a_telegram_refusal_of_the_photo_keeps_the_text_answer(harness: Harness) -> None:
    harness.sandbox.fail(400, "Bad Request: PHOTO_INVALID_DIMENSIONS", methods=["sendPhoto"])
    user = harness.user(language_code="en")
    replies = await user.send("llama 3.1 8b int4")
    assert [m.has_photo for m in replies] == [False]
    assert result_mark("en") in (replies[0].text or "")


async def test_the_worker_is_started_with_the_bot_and_draws_the_first_picture(harness: Harness) -> None:
    async with asyncio.timeout(REPLY_TIMEOUT_S):  # the harness polls in a task: its startup is due soon
        while not dialog.PICTURES.workers_started:  # begun by the bot's start, before any answer
            await asyncio.sleep(0.01)
    _, photo = await harness.user(language_code="en").send("llama 3.1 8b int4")
    assert photo.has_photo
    assert dialog.PICTURES.workers_started == 1 and dialog.PICTURES.skipped == 0


async def test_no_picture_when_turned_off(
    tmp_path: Path, template_db: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    renderer = pictures.Pictures()
    monkeypatch.setattr(dialog, "PICTURES", renderer)
    monkeypatch.setattr(pictures, "PICTURES", renderer)
    async with running_bot(tmp_path, template_db, answer_pictures=False) as h:
        replies = await h.user().send("llama 3.1 8b int4")
        assert [m.has_photo for m in replies] == [False]
    assert renderer.workers_started == 0  # no worker started, at the bot's start or since


async def test_users_asking_the_same_at_once_share_one_render_and_one_upload(harness: Harness) -> None:
    question = "qwen2.5 7b int4 8k"
    users = [harness.user(language_code="en") for _ in range(3)]
    replies = await asyncio.gather(*(user.send(question) for user in users))
    assert [[m.has_photo for m in r] for r in replies] == [[False, True]] * 3
    assert dialog.PICTURES.rendered == 1
    photos = [request.params["photo"] for request in harness.sandbox.sent("sendPhoto")]
    assert len(photos) == 3 and sum(uploaded(photo) for photo in photos) == 1  # the others by its id
    assert len({tuple(r[1].photos) for r in replies}) == 1


async def test_the_users_next_question_does_not_wait_for_the_last_answers_picture(harness: Harness) -> None:
    """The picture goes out once its update is finished, apart from it: while Telegram holds the
    photo, the same user's next question is answered (the update held the user's lock until its
    photo was sent, so a press right after an answer waited for the drawing and the upload)."""
    photos = harness.sandbox.hold(["sendPhoto"])
    user = harness.user(language_code="ru")
    await user.post("llama 3.1 8b int4 32k 4 пользователя")
    await harness.sandbox.wait_for(lambda: photos.held == 1, "the first answer's picture on its way")
    await user.post("qwen2.5 7b fp16 8k")
    await harness.sandbox.wait_for(
        lambda: sum(result_mark("ru") in (m.text or "") for m in user.bot_messages()) == 2,
        "the second answer",
    )
    assert not any(m.has_photo for m in user.bot_messages())
    app = harness.app
    assert app is not None
    # Both updates finish (their work committed) while the first photo is still held: the second
    # answer is sent before its commit, so it is the inbox that says when.
    await harness.sandbox.wait_for(lambda: not app.inbox_dp.handling, "both updates finished")
    (row, second) = await harness.dialogs(user.id)
    assert row.status == second.status == DIALOG_COMPLETED
    photos.release()
    await harness.sandbox.wait_for(
        lambda: sum(m.has_photo for m in user.bot_messages()) == 2, "both pictures, once let through"
    )
    assert_no_failed_calls(harness.sandbox)
