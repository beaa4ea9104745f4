"""The Bot API methods besides sending text: media uploads, chat actions, commands, chat info, queries."""

from __future__ import annotations

import asyncio

import pytest
from aiogram import Bot
from aiogram.exceptions import TelegramBadRequest, TelegramConflictError
from aiogram.types import (
    BotCommand,
    BotCommandScopeAllPrivateChats,
    BufferedInputFile,
    InlineKeyboardButton,
    InlineKeyboardMarkup,
)

from tgsandbox import Sandbox, SandboxTimeout

CHAT = 31


@pytest.fixture
def chat(sandbox: Sandbox) -> int:
    sandbox.user(id=CHAT, first_name="Eve", username="eve")
    return CHAT


async def test_photo_and_document_uploads(bot: Bot, chat: int, sandbox: Sandbox) -> None:
    photo = await bot.send_photo(chat, BufferedInputFile(b"\x89PNG...", "chart.png"), caption="<b>chart</b>")
    document = await bot.send_document(chat, BufferedInputFile(b"a,b\n1,2\n", "report.csv"))
    assert photo.photo
    uploaded_id = photo.photo[-1].file_id
    by_id = await bot.send_photo(chat, uploaded_id)  # re-sent by the id Telegram gave the upload

    assert photo.caption == "chart" and photo.caption_entities
    assert document.document and document.document.file_name == "report.csv"
    assert by_id.photo and by_id.photo[0].file_id == uploaded_id
    assert sandbox.upload(uploaded_id) == b"\x89PNG..."
    history = sandbox.chat(chat)
    assert [(m.has_photo, m.has_document, m.text) for m in history] == [
        (True, False, "chart"),
        (False, True, None),
        (True, False, None),
    ]
    uploaded = sandbox.telegram.files[history[0].photos[0]]
    assert getattr(uploaded, "content", None) == b"\x89PNG..."
    with pytest.raises(TelegramBadRequest, match="message caption is too long"):
        await bot.send_photo(chat, uploaded_id, caption="x" * 1025)
    # an id that names no upload is refused, as Telegram does
    with pytest.raises(TelegramBadRequest, match="wrong file identifier/HTTP URL specified"):
        await bot.send_photo(chat, "AgACAgIAAxkBAAIB")
    with pytest.raises(TelegramBadRequest, match="there is no text in the message to edit"):
        await bot.edit_message_text("text", chat_id=chat, message_id=photo.message_id)


async def test_chat_action(bot: Bot, chat: int) -> None:
    assert await bot.send_chat_action(chat, "typing")
    with pytest.raises(TelegramBadRequest, match="wrong parameter action in request"):
        await bot.send_chat_action(chat, "dancing")


async def test_commands_are_stored_per_scope_and_language(bot: Bot, sandbox: Sandbox) -> None:
    english = [
        BotCommand(command="start", description="Start"),
        BotCommand(command="help", description="Help"),
    ]
    russian = [BotCommand(command="start", description="Начать")]
    await bot.set_my_commands(english)
    await bot.set_my_commands(russian, language_code="ru")
    await bot.set_my_commands(english[:1], scope=BotCommandScopeAllPrivateChats())

    assert [c.command for c in await bot.get_my_commands()] == ["start", "help"]
    assert [c.description for c in await bot.get_my_commands(language_code="ru")] == ["Начать"]
    assert sandbox.commands({"type": "all_private_chats"}) == [{"command": "start", "description": "Start"}]
    with pytest.raises(TelegramBadRequest, match="BOT_COMMAND_INVALID"):
        await bot.set_my_commands([BotCommand(command="Bad-Command", description="x")])

    assert await bot.delete_my_commands(language_code="ru")
    assert await bot.get_my_commands(language_code="ru") == []


async def test_get_me_get_chat_close_log_out(bot: Bot, chat: int, sandbox: Sandbox) -> None:
    me = await bot.get_me()
    assert (me.id, me.is_bot, me.username) == (sandbox.bot_user.id, True, "sandbox_bot")
    info = await bot.get_chat(chat)
    assert (info.id, info.type, info.first_name, info.username) == (chat, "private", "Eve", "eve")
    assert (await bot.get_chat("@eve")).id == chat
    assert await bot.close() and await bot.log_out()


async def test_callback_query_is_answered_once(bot: Bot, chat: int, sandbox: Sandbox) -> None:
    query = sandbox.telegram.new_query("callback_query", chat, chat)
    assert await bot.answer_callback_query(query.query_id, text="ok")
    with pytest.raises(TelegramBadRequest, match="query is too old and response timeout expired"):
        await bot.answer_callback_query(query.query_id)


async def test_callback_query_expires(sandbox: Sandbox, bot: Bot) -> None:
    sandbox.telegram.query_ttl = 0.05
    query = sandbox.telegram.new_query("callback_query", 1, 1)
    await asyncio.sleep(0.1)
    with pytest.raises(TelegramBadRequest, match="query is too old"):
        await bot.answer_callback_query(query.query_id)


async def test_long_poll_waits_for_an_update_then_offset_confirms_it(bot: Bot, sandbox: Sandbox) -> None:
    user = sandbox.user(id=5)
    poll = asyncio.create_task(bot.get_updates(timeout=5))
    await asyncio.sleep(0.1)
    assert not poll.done()  # held, as Telegram holds a long poll
    await user.send("hi", expect_reply=False, timeout=2)
    (update,) = await asyncio.wait_for(poll, 2)
    assert update.message and update.message.text == "hi"

    again = await bot.get_updates(timeout=0)
    assert [u.update_id for u in again] == [update.update_id]  # not confirmed yet
    assert await bot.get_updates(offset=update.update_id + 1, timeout=0) == []
    assert (await bot.get_webhook_info()).pending_update_count == 0


async def test_long_poll_times_out_empty(bot: Bot) -> None:
    started = asyncio.get_running_loop().time()
    assert await bot.get_updates(timeout=1) == []
    assert asyncio.get_running_loop().time() - started >= 0.9


async def test_allowed_updates_filters_and_is_remembered(bot: Bot, sandbox: Sandbox) -> None:
    user = sandbox.user(id=5)
    assert await bot.get_updates(timeout=0, allowed_updates=["callback_query"]) == []
    with pytest.raises(SandboxTimeout, match=r"dropped by the bot's allowed_updates: \['message'\]"):
        await user.send("ignored", timeout=0.3)
    assert await bot.get_updates(timeout=0) == []  # the message update was dropped for good


async def test_updates_queued_before_allowed_updates_narrows_are_dropped(bot: Bot, sandbox: Sandbox) -> None:
    """What waits in the queue is checked again when the bot asks for fewer types: the message
    queued before the narrowing is dropped, the callback query queued with it is delivered."""
    queue = sandbox.telegram.updates
    await queue.push({"message": {"message_id": 1, "date": 0, "chat": {"id": 5, "type": "private"}}})
    await queue.push({"callback_query": {"id": "q1", "from": {"id": 5, "is_bot": False, "first_name": "A"},
                                         "chat_instance": "c", "data": "x"}})  # fmt: skip
    updates = await bot.get_updates(timeout=0, allowed_updates=["callback_query"])
    assert [u.callback_query.id for u in updates if u.callback_query] == ["q1"] and len(updates) == 1
    assert queue.dropped_types == {"message"}


async def test_a_second_long_poll_terminates_the_first(bot: Bot, sandbox: Sandbox) -> None:
    first = asyncio.create_task(bot.get_updates(timeout=5))
    await sandbox.wait_for(lambda: sandbox.polls == 1, "the first long poll")
    second = asyncio.create_task(bot.get_updates(timeout=0))
    with pytest.raises(TelegramConflictError, match="terminated by other getUpdates request"):
        await asyncio.wait_for(first, 2)
    assert await asyncio.wait_for(second, 2) == []


async def test_clicking_a_deleted_message_fails_clearly(bot: Bot, chat: int, sandbox: Sandbox) -> None:
    markup = InlineKeyboardMarkup(inline_keyboard=[[InlineKeyboardButton(text="a", callback_data="a")]])
    sent = await bot.send_message(chat, "pick", reply_markup=markup)
    await bot.delete_message(chat, sent.message_id)
    user = sandbox.user(id=CHAT)
    with pytest.raises(AssertionError, match="was deleted"):
        await user.click("a", message=sent.message_id)
    with pytest.raises(AssertionError, match="no message with buttons"):
        await user.click("a")
