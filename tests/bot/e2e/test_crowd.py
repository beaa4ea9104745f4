"""Under a crowd: a button press answered before any database work when the bot is busy; "typing…"
for a slow answer; SQLite's one connection held by nobody while Telegram answers.

Every wait is for an event the sandbox recorded or a count the bot exposes, never for a quiet period.
"""

from __future__ import annotations

import asyncio

import pytest

from bot import callback_answers
from tests.bot.e2e.conftest import Harness, text


def connections_held(harness: Harness) -> int:
    """SQLite's connections checked out of the engine's pool (it has one: bot.db.engine)."""
    assert harness.app is not None
    return harness.app.engine.pool.checkedout()  # type: ignore[attr-defined]


async def test_a_button_press_is_answered_at_once_when_the_bot_is_busy(
    harness: Harness, monkeypatch: pytest.MonkeyPatch
) -> None:
    # No timer to fall back on: only the busy path can answer while the handler cannot run.
    monkeypatch.setattr(callback_answers, "EARLY_ANSWER_S", 60.0)
    assert harness.app is not None
    presser = harness.user()
    await presser.send("/start")
    gate = harness.sandbox.hold(["sendMessage", "editMessageText"])
    crowd = [harness.user() for _ in range(callback_answers.BUSY_UPDATES)]
    for user in crowd:
        await user.post("qwen3 8b int4")
    await harness.sandbox.wait_for(lambda: gate.held == len(crowd), "the crowd's answers held")
    click = asyncio.create_task(presser.click(text("task-inference")))
    await harness.sandbox.wait_for(
        lambda: bool(harness.sandbox.requests_for(presser.id, "answerCallbackQuery")), "the press answered"
    )
    # answered while its handler's edit (like everyone's answer) is still held
    assert not harness.sandbox.sent("editMessageText")
    gate.release()
    answer = await click
    assert answer.messages  # the press was handled in full afterwards
    assert len(harness.sandbox.requests_for(presser.id, "answerCallbackQuery")) == 1
    for user in crowd:
        assert harness.sandbox.requests_for(user.id, "sendMessage")


async def test_a_stale_button_keeps_its_toast_when_others_are_being_answered(
    harness: Harness, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Below BUSY_UPDATES in hand a press waits for its handler (here: for the user's previous
    update, held at Telegram), which answers with what it has to say; it is not answered empty."""
    monkeypatch.setattr(callback_answers, "EARLY_ANSWER_S", 60.0)  # only the handler or the busy path answers
    assert harness.app is not None
    dispatcher = harness.app.inbox_dp
    presser = harness.user()
    await presser.send("/start")
    old_message = presser.last_message()
    await presser.send("/start")  # the first message's buttons are outdated now
    gate = harness.sandbox.hold(["sendMessage"])
    others = [harness.user() for _ in range(callback_answers.BUSY_UPDATES // 2)]
    for user in [*others, presser]:
        await user.post("qwen3 8b int4")
    await harness.sandbox.wait_for(lambda: gate.held == len(others) + 1, "the answers held")
    click = asyncio.create_task(presser.click(text("task-inference"), message=old_message))
    # The press is in hand, waiting for the presser's question (one update per user at a time).
    await harness.sandbox.wait_for(lambda: len(dispatcher.handling) == len(others) + 2, "the press in hand")
    gate.release()
    assert (await click).text == text("stale-button")
    for user in others:
        assert harness.sandbox.requests_for(user.id, "sendMessage")


async def test_a_slow_answer_shows_typing_once(harness: Harness) -> None:
    assert harness.app is not None
    harness.app.dp.typing_after_s = 0.05  # type: ignore[attr-defined]
    gate = harness.sandbox.hold(["sendMessage"])
    user = harness.user()
    await user.post("qwen3 8b int4")
    await harness.sandbox.wait_for(
        lambda: bool(harness.sandbox.requests_for(user.id, "sendChatAction")), "typing…"
    )
    assert gate.held == 1  # shown while the answer is not out yet
    (action,) = harness.sandbox.requests_for(user.id, "sendChatAction")
    assert action.params["action"] == "typing" and action.error is None
    gate.release()
    await harness.sandbox.wait_for(lambda: not harness.app.inbox_dp.handling, "the update finished")  # type: ignore[union-attr]
    assert len(harness.sandbox.requests_for(user.id, "sendMessage")) == 1
    assert len(harness.sandbox.requests_for(user.id, "sendChatAction")) == 1


async def test_a_crowd_writes_in_turn_and_everyone_is_answered(harness: Harness) -> None:
    """Twenty users at once, their answers held so that all their updates are in hand together: none
    keeps the connection while Telegram answers, each is answered, it is free afterwards."""
    gate = harness.sandbox.hold(["sendMessage"])
    users = [harness.user() for _ in range(20)]
    for user in users:
        await user.post("llama 3.1 8b fp16")
    await harness.sandbox.wait_for(lambda: gate.held == len(users), "every answer held")
    assert connections_held(harness) == 0  # nobody keeps it while Telegram answers
    gate.release()
    assert harness.app is not None
    await harness.sandbox.wait_for(lambda: not harness.app.inbox_dp.handling, "all updates finished")  # type: ignore[union-attr]
    for user in users:
        assert len(harness.sandbox.requests_for(user.id, "sendMessage")) == 1
    assert connections_held(harness) == 0
