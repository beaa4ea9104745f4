"""The Bot API calls as JSON bodies (bot.bot_session): the same fields aiogram's form would send."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator

import pytest
from aiogram import Bot
from aiogram.client.default import DefaultBotProperties
from aiogram.enums import ParseMode
from aiogram.methods import AnswerCallbackQuery, SendMessage, SendPhoto
from aiogram.types import BufferedInputFile
from aiogram.utils.keyboard import InlineKeyboardBuilder

from bot.bot_session import JsonBodySession


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


def form_fields(bot: Bot, method: SendMessage | AnswerCallbackQuery) -> dict[str, object]:
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
