"""The Bot API calls as JSON bodies (bot.bot_session): the same fields aiogram's form would send."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from datetime import UTC, datetime
from typing import Any

import pytest
from aiogram import Bot
from aiogram.client.default import DefaultBotProperties
from aiogram.client.session.aiohttp import AiohttpSession
from aiogram.client.session.base import BaseSession
from aiogram.enums import ParseMode
from aiogram.exceptions import ClientDecodeError, TelegramBadRequest, TelegramRetryAfter
from aiogram.methods import (
    AnswerCallbackQuery,
    AnswerInlineQuery,
    BanChatMember,
    EditMessageText,
    SendMessage,
    SendPhoto,
    TelegramMethod,
)
from aiogram.types import (
    BufferedInputFile,
    InlineQueryResultArticle,
    InputTextMessageContent,
    Message,
    MessageEntity,
    Update,
)
from aiogram.utils.keyboard import InlineKeyboardBuilder

from bot.bot_session import JsonBodySession
from bot.db.inbox import update_payload
from bot.dialog_calls import Acknowledged, EditDialogMessage, SendDialogMessage
from bot.received_updates import GetReceivedUpdates


@pytest.fixture
async def bot() -> AsyncIterator[Bot]:
    bot = Bot(
        "42:TEST", session=JsonBodySession(),
        default=DefaultBotProperties(parse_mode=ParseMode.HTML, link_preview_is_disabled=True),
    )  # fmt: skip
    try:
        yield bot
    finally:
        await bot.session.close()


def form_fields(bot: Bot, method: TelegramMethod[Any]) -> dict[str, object]:
    """What aiogram's own form sends, each field decoded from its JSON where it is JSON."""
    form = bot.session.build_form_data(bot, method)  # type: ignore[attr-defined]
    fields = {}
    for options, _, value in form._fields:
        try:
            fields[options["name"]] = json.loads(value)
        except ValueError:
            fields[options["name"]] = value
    return fields


async def test_a_message_goes_as_json_with_the_fields_the_form_would_send(bot: Bot) -> None:
    keyboard = InlineKeyboardBuilder()
    keyboard.button(text="🚀 Запустить", callback_data="s:task:inference")
    method = SendMessage(chat_id=7, text="Привет, <b>мир</b>", reply_markup=keyboard.as_markup())
    session = bot.session
    assert isinstance(session, JsonBodySession)
    body = session.json_body(bot, method)
    assert body is not None
    sent = json.loads(body)
    assert sent == form_fields(bot, method)
    assert sent["parse_mode"] == "HTML"  # the bot's defaults filled in
    assert sent["reply_markup"]["inline_keyboard"][0][0]["callback_data"] == "s:task:inference"
    assert "Привет".encode() in body  # UTF-8 as it is, not %-escaped


async def test_false_and_zero_are_sent_and_none_is_left_out(bot: Bot) -> None:
    method = AnswerCallbackQuery(callback_query_id="q1", show_alert=False, cache_time=0)
    body = bot.session.json_body(bot, method)  # type: ignore[attr-defined]
    assert json.loads(body) == form_fields(bot, method) == {
        "callback_query_id": "q1", "show_alert": False, "cache_time": 0,
    }  # fmt: skip


async def test_an_upload_keeps_aiograms_multipart_form(bot: Bot) -> None:
    method = SendPhoto(chat_id=7, photo=BufferedInputFile(b"\x89PNG", filename="answer.png"))
    assert bot.session.json_body(bot, method) is None  # type: ignore[attr-defined]


def message_answer(**fields: object) -> str:
    """Telegram's answer to a sent or edited message, as the Bot API gives it."""
    message = {
        "message_id": 5, "date": 1_700_000_000,
        "from": {"id": 42, "is_bot": True, "first_name": "Bot", "username": "fit_bot"},
        "chat": {"id": 7, "type": "private", "first_name": "Ann"},
        "text": "Привет, мир", "entities": [{"type": "bold", "offset": 8, "length": 3}],
        **fields,
    }  # fmt: skip
    return json.dumps({"ok": True, "result": message})


def aiograms_reading(bot: Bot, method: SendMessage | EditMessageText, content: str) -> object:
    """The result as aiogram's own session reads the same answer."""
    return BaseSession.check_response(bot.session, bot, method, 200, content).result


async def test_a_sent_keyboard_comes_back_as_the_object_sent_and_the_message_reads_as_aiogram_reads_it(
    bot: Bot,
) -> None:
    keyboard = InlineKeyboardBuilder()
    for step in ("inference", "lora", "full"):
        keyboard.button(text=step, callback_data=f"s:task:{step}")
    markup = keyboard.as_markup()
    method = SendMessage(chat_id=7, text="Привет, <b>мир</b>", reply_markup=markup)
    content = message_answer(reply_markup=markup.model_dump(exclude_none=True))
    message = bot.session.check_response(bot, method, 200, content).result
    assert isinstance(message, Message)
    assert message.reply_markup is markup
    assert message.model_dump() == aiograms_reading(bot, method, content).model_dump()  # type: ignore[attr-defined]
    assert message.bot is bot  # bound as aiogram binds it: message.answer(...) works


async def test_a_keyboard_not_sent_by_the_call_is_read_from_the_answer(bot: Bot) -> None:
    method = EditMessageText(chat_id=7, message_id=5, text="Привет, <b>мир</b>")
    markup = {"inline_keyboard": [[{"text": "📋", "callback_data": "n:details"}]]}
    content = message_answer(reply_markup=markup)
    message = bot.session.check_response(bot, method, 200, content).result
    assert isinstance(message, Message) and message.reply_markup is not None
    assert message.reply_markup.inline_keyboard[0][0].callback_data == "n:details"
    assert message.model_dump() == aiograms_reading(bot, method, content).model_dump()  # type: ignore[attr-defined]


async def test_the_dialog_messages_answers_are_read_as_its_id_alone(bot: Bot) -> None:
    markup = InlineKeyboardBuilder()
    markup.button(text="📋", callback_data="n:details")
    edit = EditDialogMessage(
        chat_id=7, message_id=5, text="Привет, <b>мир</b>", reply_markup=markup.as_markup()
    )
    send = SendDialogMessage(chat_id=7, text="Привет, <b>мир</b>", reply_markup=markup.as_markup())
    content = message_answer(reply_markup=markup.as_markup().model_dump(exclude_none=True))
    # this bot's session and aiogram's own read them alike: the method's answer type says what to build
    for session in (bot.session, AiohttpSession()):
        for method in (edit, send):
            assert session.check_response(bot, method, 200, content).result == Acknowledged(message_id=5)
        inline = json.dumps({"ok": True, "result": True})  # an inline message's edit
        assert session.check_response(bot, edit, 200, inline).result is True
    # sent as aiogram's own calls are: the same fields
    plain_edit = EditMessageText(**edit.model_dump())
    assert bot.session.json_body(bot, edit) == bot.session.json_body(bot, plain_edit)  # type: ignore[attr-defined]
    assert edit.__api_method__ == "editMessageText" and send.__api_method__ == "sendMessage"
    # Telegram's errors still raise what aiogram raises ("not modified" ends the dialog's edit)
    not_modified = {"ok": False, "error_code": 400, "description": "Bad Request: message is not modified"}
    with pytest.raises(TelegramBadRequest, match="not modified"):
        bot.session.check_response(bot, edit, 400, json.dumps(not_modified))
    with pytest.raises(ClientDecodeError):
        bot.session.check_response(bot, send, 200, json.dumps({"ok": True, "result": True}))


@pytest.mark.parametrize(
    ("status", "answer", "error"),
    [
        (400, {"ok": False, "error_code": 400, "description": "Bad Request: message is not modified"},
         TelegramBadRequest),
        (429, {"ok": False, "error_code": 429, "description": "Too Many Requests: retry after 3",
               "parameters": {"retry_after": 3}}, TelegramRetryAfter),
        (200, {"ok": True, "result": {"message_id": "not a message"}}, ClientDecodeError),
    ],
)  # fmt: skip
async def test_telegrams_errors_raise_what_aiogram_raises(
    bot: Bot, status: int, answer: dict[str, object], error: type[Exception]
) -> None:
    method = SendMessage(chat_id=7, text="Привет")
    with pytest.raises(error):
        bot.session.check_response(bot, method, status, json.dumps(answer))


async def test_an_answer_that_is_not_json_raises_what_aiogram_raises(bot: Bot) -> None:
    with pytest.raises(ClientDecodeError):
        bot.session.check_response(
            bot, SendMessage(chat_id=7, text="Привет"), 502, "<html>Bad Gateway</html>"
        )


async def test_nested_objects_and_defaults_go_as_the_form_would_send_them(bot: Bot) -> None:
    keyboard = InlineKeyboardBuilder()
    keyboard.button(text="🛒 Арендовать", url="https://example.com/rent?gpu=4090")
    keyboard.button(text="📋 Подробнее", callback_data="n:details")
    method = EditMessageText(
        chat_id=7, message_id=5, text="<b>24 ГБ</b>", reply_markup=keyboard.as_markup(),
        entities=[MessageEntity(type="bold", offset=0, length=5)],
    )  # fmt: skip
    sent = json.loads(bot.session.json_body(bot, method))  # type: ignore[attr-defined]
    assert sent == form_fields(bot, method)  # type: ignore[arg-type]
    assert sent["link_preview_options"] == {"is_disabled": True}  # the bot's default, its Nones left out


async def test_a_date_and_a_default_the_bot_does_not_set_go_as_the_form_would_send_them() -> None:
    bot = Bot("42:TEST", session=JsonBodySession())  # no defaults: a parse mode inside is left out
    try:
        results = [InlineQueryResultArticle(
            id="a", title="24 ГБ", input_message_content=InputTextMessageContent(message_text="24 ГБ"),
        )]  # fmt: skip
        answer = AnswerInlineQuery(inline_query_id="q", results=results, cache_time=0)
        sent = json.loads(bot.session.json_body(bot, answer))  # type: ignore[attr-defined]
        assert sent == form_fields(bot, answer)  # type: ignore[arg-type]
        assert "parse_mode" not in sent["results"][0]["input_message_content"]
        until = datetime(2030, 1, 2, tzinfo=UTC)
        ban = BanChatMember(chat_id=7, user_id=8, until_date=until)
        sent = json.loads(bot.session.json_body(bot, ban))  # type: ignore[attr-defined]
        # as aiogram's form writes a date: its seconds, as text
        assert sent == {"chat_id": 7, "user_id": 8, "until_date": str(int(until.timestamp()))}
    finally:
        await bot.session.close()


async def test_a_polled_update_keeps_the_json_telegram_sent(bot: Bot) -> None:
    sent = [
        {"update_id": 11, "message": {"message_id": 1, "date": 1_700_000_000, "text": "привет",
                                      "chat": {"id": 7, "type": "private", "first_name": "Ann"}}},
        {"update_id": 12, "callback_query": {"id": "q", "chat_instance": "c", "data": "s:task:lora",
                                             "from": {"id": 7, "is_bot": False, "first_name": "Ann"}}},
    ]  # fmt: skip
    answer = json.dumps({"ok": True, "result": sent})
    # this bot's session and aiogram's own read it alike: the method's answer type says what to build
    for session in (bot.session, AiohttpSession()):
        updates = session.check_response(bot, GetReceivedUpdates(), 200, answer).result
        assert [update.update_id for update in updates] == [11, 12]
        assert updates[0].message is not None and updates[0].message.text == "привет"
        assert updates[1].callback_query is not None and updates[1].callback_query.data == "s:task:lora"
        # What the inbox stores: the objects as they came, equal to what Telegram sent
        assert [update_payload(update) for update in updates] == sent
        assert update_payload(updates[0]) is updates[0].as_sent
    # an update built otherwise (a webhook's is stored from its body) is dumped from the model
    built = Update.model_validate(sent[1])
    assert update_payload(built) == sent[1]


def press_under(keyboard: dict[str, object], update_id: int) -> dict[str, object]:
    """Telegram's update for a press on a message of the bot's with ``keyboard``."""
    message = json.loads(message_answer(reply_markup=keyboard))["result"]
    return {"update_id": update_id, "callback_query": {
        "id": f"q{update_id}", "chat_instance": "c", "data": "s:task:lora", "message": message,
        "from": {"id": 7, "is_bot": False, "first_name": "Ann"},
    }}  # fmt: skip


async def test_a_keyboard_pressed_under_again_is_the_object_read_the_first_time(bot: Bot) -> None:
    rent = {"text": "🛒", "url": "https://example.com/rent?gpu=4090"}
    keyboard = {"inline_keyboard": [[{"text": "LoRA", "callback_data": "s:task:lora"}], [rent]]}
    sent = [press_under(keyboard, 21), press_under(json.loads(json.dumps(keyboard)), 22)]
    answer = json.dumps({"ok": True, "result": sent})
    first, second = bot.session.check_response(bot, GetReceivedUpdates(), 200, answer).result
    markups = [update.callback_query.message.reply_markup for update in (first, second)]  # type: ignore[union-attr]
    assert markups[0] is markups[1]  # read once
    # as aiogram reads the same update, and stored as it came
    for update, as_sent in zip((first, second), sent, strict=True):
        assert update.model_dump() == Update.model_validate(as_sent, context={"bot": bot}).model_dump()
        assert update_payload(update) == as_sent  # its keyboard as JSON, as it came
    # a keyboard that is not one fails the update, as aiogram's validation fails it
    broken = press_under({"inline_keyboard": [[{"text": "LoRA", "callback_data": ["not", "text"]}]]}, 23)
    with pytest.raises(ClientDecodeError):
        bot.session.check_response(
            bot, GetReceivedUpdates(), 200, json.dumps({"ok": True, "result": [broken]})
        )
