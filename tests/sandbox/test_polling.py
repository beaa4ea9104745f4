"""A real aiogram bot in polling mode, driven through the sandbox."""

from __future__ import annotations

import pytest
from aiogram import Bot

from tgsandbox import Sandbox, SandboxTimeout


async def test_start_replies_with_an_inline_keyboard(sandbox: Sandbox, polling_bot: Bot) -> None:
    user = sandbox.user(id=42, first_name="Ann", language_code="ru")
    replies = await user.send("/start")

    assert [m.text for m in replies] == ["Hello, do you like GPUs?"]
    last = user.last_message()
    assert last.parse_mode == "HTML"
    assert last.source_text == "<b>Hello</b>, do you like GPUs?"
    assert [(e.type, e.offset, e.length) for e in last.entities] == [("bold", 0, 5)]
    assert [[(b.text, b.callback_data, b.url) for b in row] for row in last.buttons] == [
        [("Yes", "answer:yes", None), ("No", "answer:no", None)],
        [("Docs", None, "https://example.com/docs")],
    ]


async def test_click_waits_for_the_callback_answer_and_the_edit(sandbox: Sandbox, polling_bot: Bot) -> None:
    user = sandbox.user(id=42)
    await user.send("/start")
    answer = await user.click("No")

    assert (answer.text, answer.show_alert) == ("Noted: no", True)
    (answer_call,) = sandbox.requests_for(42, "answerCallbackQuery")
    assert (answer_call.params["text"], answer_call.params["show_alert"]) == ("Noted: no", True)
    assert [m.text for m in answer.messages] == ["You said no"]
    last = user.last_message()
    assert last.text == "You said no" and last.edit_count == 1
    assert last.buttons == []  # edit_text without reply_markup drops the keyboard, as in Telegram


async def test_stale_button_on_an_old_message_still_reaches_the_bot(
    sandbox: Sandbox, polling_bot: Bot
) -> None:
    user = sandbox.user(id=42)
    await user.send("/start")
    first = user.last_message()
    await user.send("/start")
    answer = await user.click(callback_data="answer:yes", message=first)

    assert answer.text == "Noted: yes"
    assert sandbox.chat(42)[1].text == "You said yes"  # the old message (id 2) was edited
    assert user.last_message().text == "Hello, do you like GPUs?"


async def test_button_on_a_message_older_than_48_hours(sandbox: Sandbox, polling_bot: Bot) -> None:
    user = sandbox.user(id=42)
    await user.send("/start")
    answer = await user.click("Yes", inaccessible=True)
    assert (answer.text, answer.show_alert, answer.messages) == ("This message is too old", True, [])


async def test_deep_link_payload(sandbox: Sandbox, polling_bot: Bot) -> None:
    user = sandbox.user(id=7)
    await user.send("/start promo_2024")
    assert user.last_message().text == "Deep link: promo_2024"


async def test_echo_and_recorded_requests(sandbox: Sandbox, polling_bot: Bot) -> None:
    user = sandbox.user(id=9)
    await user.send("a < b")

    assert user.last_message().text == "echo: a < b"
    sent = sandbox.requests_for(9, "sendMessage")
    assert [(r.params["chat_id"], r.params["text"], r.params["parse_mode"], r.error) for r in sent] == [
        (9, "echo: a &lt; b", "HTML", None)
    ]
    assert all(r.method != "getUpdates" for r in sandbox.requests)


async def test_user_replies_to_a_bot_message(sandbox: Sandbox, polling_bot: Bot) -> None:
    user = sandbox.user(id=9)
    await user.send("one")
    (reply,) = await user.send("two", reply_to=user.last_message())
    assert reply.text == "echo: two (re: echo: one)"


async def test_inline_query_answer(sandbox: Sandbox, polling_bot: Bot) -> None:
    answer = await sandbox.user(id=5).inline("llama 70b")
    assert [r["title"] for r in answer.results] == ["Echo llama 70b"]
    assert answer.is_personal


async def test_silent_bot_fails_fast_with_a_clear_message(sandbox: Sandbox, polling_bot: Bot) -> None:
    user = sandbox.user(id=5)
    with pytest.raises(SandboxTimeout, match=r"waiting for a reply to '/silent'"):
        await user.send("/silent", timeout=0.5)


async def test_duplicate_update_is_delivered_twice(sandbox: Sandbox, polling_bot: Bot) -> None:
    user = sandbox.user(id=5)
    await user.send("hello", update_id=500)
    await user.send("hello", update_id=500)
    assert [m.text for m in user.bot_messages()] == ["echo: hello", "echo: hello"]
