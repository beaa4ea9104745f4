"""Edges that used to crash or misbehave: groups (anonymous admins, "send as channel"), forged callback
data, the bot's own inline results posted back, and a flood from one user (per-user throttling).

Silence is checked by waiting for the event "the bot has finished this update" (its de-duplication
row marked handled), never for a quiet period.
"""

from __future__ import annotations

import asyncio
import logging
import time

import pytest
from aiogram.types import Chat

from bot.callbacks import StepCB
from bot.db import processed_updates
from bot.db.engine import create_sessionmaker
from bot.throttle import THROTTLE_KEY, Limits, Throttle
from tests.bot.e2e.conftest import Harness, assert_no_failed_calls, buttons, result_mark, text
from tgsandbox import SandboxUser
from tgsandbox.driver import CHANNEL_BOT, GROUP_ANONYMOUS_BOT

QUESTION = "llama 3.1 8b int4"
FORGED = [
    "n:page:²",  # a digit to str.isdigit(), not to int()
    "n:page:-1",
    "n:page:1:2",
    "n:page:99999999999999999999999",
    "n:goto:task",  # a known step, but not one a result can change
    "n:goto:model",
    "n:goto:nonsense",
    "n:back:x",
    "n:bogus:",
    "n",
    "s:model:",
    "s:nope:1",
    "s:task:inference:extra",
    "l:xx",
    "zzz",
]


async def finished(harness: Harness, *update_ids: int, timeout: float = 10.0) -> None:
    """Wait until the bot has finished handling these updates (marked handled in its database)."""
    assert harness.app is not None
    sessionmaker = create_sessionmaker(harness.app.engine)
    bot_id = harness.app.bot.id
    deadline = time.monotonic() + timeout
    left = set(update_ids)
    while left:
        async with sessionmaker() as session:
            for update_id in list(left):
                if await processed_updates.update_is_handled(session, bot_id=bot_id, update_id=update_id):
                    left.discard(update_id)
        if not left:
            return
        if time.monotonic() > deadline:
            raise AssertionError(f"updates {sorted(left)} not handled within {timeout} s")
        await asyncio.sleep(0.02)


async def silent(harness: Harness, user: SandboxUser, message: str, **kwargs: object) -> None:
    """Send ``message`` and check the bot finished it without a word to that chat."""
    before = len(harness.sandbox.requests_for(user.chat.chat.id))
    update_id = await user.send_nowait(message, **kwargs)  # type: ignore[arg-type]
    await finished(harness, update_id)
    assert harness.sandbox.requests_for(user.chat.chat.id)[before:] == [], message


def no_errors(caplog: pytest.LogCaptureFixture) -> None:
    errors = [r for r in caplog.records if r.levelno >= logging.ERROR]
    assert not errors, [(r.getMessage(), r.exc_info and r.exc_info[0]) for r in errors]


def private_chat_link(harness: Harness) -> str:
    return f"https://t.me/{harness.sandbox.bot_user.username}?start=group"


# ---------------------------------------------------------------- groups


@pytest.mark.parametrize("kind", ["group", "supergroup"])
async def test_group_answers_only_what_is_addressed_to_it(
    harness: Harness, caplog: pytest.LogCaptureFixture, kind: str
) -> None:
    member = harness.user().in_group(chat_id=-4000 if kind == "group" else -1004000, type=kind)
    bot = harness.sandbox.bot_user.username
    await silent(harness, member, QUESTION)  # a plain question between people
    await silent(harness, member, "/start@some_other_bot")
    await silent(harness, member, f"ask @{bot}x about it")  # another bot's name
    replies = await member.send(f"/start@{bot}")
    assert len(replies) == 1
    assert replies[0].text == text("group-private-only", bot=bot)
    [[button]] = replies[0].buttons
    assert button.url == private_chat_link(harness)
    replies = await member.send("/help")  # a command without a name goes to every bot: ours answers
    assert replies[0].text == text("group-private-only", bot=bot)
    # a mention is answered in the group, briefly, with the offer and a link to the private chat
    replies = await member.send(f"@{bot} {QUESTION}")
    assert len(replies) == 1 and "8B" in (replies[0].text or ""), replies[0].text
    assert text("btn-open-bot") in buttons(replies[0])
    assert all(b.url for row in replies[0].buttons for b in row)  # no dialog in a group
    # so is a reply to the bot's message
    replies = await member.send("llama 3.1 70b int4", reply_to=replies[0])
    assert len(replies) == 1 and "70B" in (replies[0].text or ""), replies[0].text
    # a mention without a question: where to ask
    replies = await member.send(f"@{bot}")
    assert replies[0].text == text("group-private-only", bot=bot)
    # nothing was kept as a dialog for the group
    assert await harness.dialogs(member.id) == []
    assert_no_failed_calls(harness.sandbox)
    no_errors(caplog)


async def test_anonymous_admin_and_channel_in_a_group_never_raise(
    harness: Harness, caplog: pytest.LogCaptureFixture
) -> None:
    member = harness.user().in_group(chat_id=-1004100, title="Sales")
    group = member.chat.chat
    channel = Chat(id=-1004200, type="channel", title="News")
    bot = harness.sandbox.bot_user.username
    for sender, sender_chat in ((GROUP_ANONYMOUS_BOT, group), (CHANNEL_BOT, channel)):
        await silent(harness, member, QUESTION, sender=sender, sender_chat=sender_chat)
        await silent(harness, member, "/new@some_other_bot", sender=sender, sender_chat=sender_chat)
        for command in (f"/start@{bot}", f"/new@{bot}", f"/cancel@{bot}", f"/lang@{bot}", "/about"):
            replies = await member.send(command, sender=sender, sender_chat=sender_chat)
            assert [r.text for r in replies] == [text("group-private-only", bot=bot)], command
        replies = await member.send(f"@{bot} {QUESTION}", sender=sender, sender_chat=sender_chat)
        assert len(replies) == 1 and "8B" in (replies[0].text or "")
    assert_no_failed_calls(harness.sandbox)
    no_errors(caplog)


async def test_a_button_pressed_in_a_group_is_stale(
    harness: Harness, caplog: pytest.LogCaptureFixture
) -> None:
    member = harness.user().in_group(chat_id=-1004300)
    await member.send(f"/start@{harness.sandbox.bot_user.username}")
    answer = await member.press(StepCB(step="task", value="inference").pack())
    assert answer.text == text("stale-button")
    assert answer.messages == []
    no_errors(caplog)


# ---------------------------------------------------------------- forged callback data


async def test_forged_callback_data_is_a_stale_button(
    harness: Harness, caplog: pytest.LogCaptureFixture
) -> None:
    assert harness.app is not None
    harness.app.dp[THROTTLE_KEY] = Throttle(buttons=Limits(1000, 1000.0))  # many presses, at once
    user = harness.user()
    await user.send("/start")
    await user.click(text("task-inference"))  # the model step: pages of models
    dialog = user.last_message()
    for data in FORGED:
        answer = await user.press(data, message=dialog)
        assert answer.text == text("stale-button"), data
        assert answer.messages == [], data
    # the dialog goes on where it was
    await user.click("Llama 3.1 8B")
    for data in FORGED:
        answer = await user.press(data)
        assert answer.text == text("stale-button"), data
    await user.click(text("btn-typical"))  # precision
    await user.click("4K")  # context
    await user.click("1")  # users
    assert result_mark() in (user.last_message().text or "")
    assert_no_failed_calls(harness.sandbox)
    no_errors(caplog)


async def test_goto_task_from_the_result_does_not_break_the_dialog(
    harness: Harness, caplog: pytest.LogCaptureFixture
) -> None:
    """Used to move to the task step "changing an answer"; a task button then had no model (KeyError)."""
    user = harness.user()
    await user.send(QUESTION)
    result = user.last_message()
    assert result_mark() in (result.text or "")
    answer = await user.press("n:goto:task", message=result)
    assert answer.text == text("stale-button")
    assert answer.messages == []
    answer = await user.press(StepCB(step="task", value="inference").pack(), message=result)
    assert answer.text == text("stale-button")
    # the result's own buttons still work
    await user.click(text("btn-change-precision"), message=result)
    await user.click(text("btn-typical"))
    assert result_mark() in (user.last_message().text or "")
    no_errors(caplog)


async def test_every_button_the_bot_makes_still_works(harness: Harness) -> None:
    """The typed factories pack what the old ones did: pages, steps and changes from the result."""
    user = harness.user()
    await user.send("/start")
    await user.click(text("task-inference"))
    assert text("btn-next-page") in buttons(user.last_message())
    await user.click(text("btn-next-page"))
    await user.click(text("btn-prev-page"))
    await user.click("Llama 3.1 8B")
    for button in (text("btn-typical"), "8K", "1"):
        await user.click(button)
    assert result_mark() in (user.last_message().text or "")
    await user.click(text("btn-change-context_length"))
    await user.click("4K")
    assert result_mark() in (user.last_message().text or "")
    await user.click(text("btn-details"))
    assert_no_failed_calls(harness.sandbox)


# ---------------------------------------------------------------- the bot's own inline results


async def test_own_inline_result_posted_back_is_not_a_question(
    harness: Harness, caplog: pytest.LogCaptureFixture
) -> None:
    user = harness.user()
    answer = await user.inline(QUESTION)
    posted = answer.results[0]["input_message_content"]["message_text"]
    await silent(harness, user, posted, via_bot=harness.sandbox.bot_user)
    member = harness.user().in_group(chat_id=-1004400)
    await silent(harness, member, posted, via_bot=harness.sandbox.bot_user)
    # the same text typed by hand is a question
    replies = await user.send(QUESTION)
    assert replies and result_mark() in (replies[-1].text or "")
    no_errors(caplog)


# ---------------------------------------------------------------- flood


class FakeClock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


async def test_a_flood_gets_one_notice_and_a_few_answers(harness: Harness) -> None:
    assert harness.app is not None
    clock = FakeClock()  # frozen unless a test moves it: no token comes back by itself
    throttle = Throttle(clock=clock)
    harness.app.dp[THROTTLE_KEY] = throttle
    burst, rate = throttle.messages.burst, throttle.messages.rate
    flooder, other = harness.user(), harness.user()
    ids = [await flooder.send_nowait(QUESTION) for _ in range(200)]
    replies = await other.send(QUESTION)  # meanwhile, someone else is answered as usual
    assert replies and result_mark() in (replies[-1].text or "")
    await finished(harness, *ids, timeout=60)
    sent = [m.text or "" for m in flooder.bot_messages()]
    assert sent.count(text("throttled")) == 1
    assert len([t for t in sent if result_mark() in t]) == burst
    assert len(sent) == burst + 1
    # time passes: a token back every 1 / rate seconds; a request passing re-arms the notice
    clock.now += 1 / rate
    replies = await flooder.send(QUESTION)
    assert len(replies) == 1 and result_mark() in (replies[0].text or "")
    replies = await flooder.send(QUESTION)
    assert [r.text for r in replies] == [text("throttled")]
    await silent(harness, flooder, QUESTION)
    # a full bucket later, everything is as before
    clock.now += burst / rate
    replies = await flooder.send(QUESTION)
    assert len(replies) == 1 and result_mark() in (replies[0].text or "")


async def test_a_flood_of_button_presses_is_answered_not_handled(harness: Harness) -> None:
    assert harness.app is not None
    clock = FakeClock()
    throttle = Throttle(clock=clock)
    harness.app.dp[THROTTLE_KEY] = throttle
    user = harness.user()
    await user.send("/start")

    def button(press: int) -> str:  # restart and the task, in turn: each press changes the message
        return text("task-inference") if press % 2 == 0 else text("btn-restart")

    for press in range(throttle.buttons.burst):
        answer = await user.click(button(press))
        assert answer.text is None and answer.messages, press
    # the bucket is empty: the press is answered (no spinner), with the notice, and changes nothing
    shown = user.last_message().text
    answer = await user.click(button(throttle.buttons.burst))
    assert answer.text == text("throttled") and answer.messages == []
    assert user.last_message().text == shown
    clock.now += 1 / throttle.buttons.rate
    answer = await user.click(button(throttle.buttons.burst))
    assert answer.text is None and answer.messages


def test_throttle_buckets() -> None:
    clock = FakeClock()
    throttle = Throttle(messages=Limits(3, 0.5), buttons=Limits(1, 1.0), max_tracked=3, clock=clock)
    assert [throttle.check(1) for _ in range(5)] == ["allow"] * 3 + ["notice", "drop"]
    assert throttle.check(1, "button") == "allow"  # a bucket per kind of request
    assert throttle.check(2) == "allow"  # and per user
    clock.now += 2  # one token
    assert [throttle.check(1) for _ in range(3)] == ["allow", "notice", "drop"]
    clock.now -= 100  # a clock going back gives nothing
    assert throttle.check(1) == "drop"
    throttle.check(3)  # a fourth bucket: the least recently seen goes (memory stays bounded)
    assert len(throttle) == 3
    with pytest.raises(ValueError):
        Limits(0, 1.0)
