"""What an update sent, journalled in Redis (bot.sent_calls.RedisJournal), reads back as Telegram's
answer: a replica taking the update over answers the same calls from it, in order, without making them."""

from __future__ import annotations

from typing import Any

from aiogram import Bot
from aiogram.methods import DeleteMessage, EditMessageText, SendMediaGroup, SendMessage
from aiogram.types import InputMediaPhoto, Message
from redis.asyncio import Redis

from bot.sent_calls import RedisJournal, SentCalls


def message(message_id: int, text: str, **fields: Any) -> Message:
    return Message.model_validate(
        {"message_id": message_id, "date": 1_700_000_000, "chat": {"id": 7, "type": "private"}, "text": text,
         **fields},
    )  # fmt: skip


def dump(answer: Any) -> Any:
    """An answer's fields (models compare their bot binding too)."""
    return [dump(item) for item in answer] if isinstance(answer, list) else answer.model_dump()


async def test_a_journal_read_back_answers_the_same_calls_with_the_same_answers(
    redis_url: str, redis_key_prefix: str
) -> None:
    redis = Redis.from_url(redis_url)
    bot = Bot("42:TEST")
    keyboard = {"inline_keyboard": [[{"text": "📋 Подробнее", "callback_data": "n:details"}]]}
    sent = message(5, "Llama 3.1 8B — влезает в 24 ГБ", reply_markup=keyboard)
    edited = message(5, "Шаг 2 из 6")
    album = [message(6, "a"), message(7, "b")]
    try:
        journal = RedisJournal(redis, redis_key_prefix)
        for method, answer in (
            ("sendMessage", sent), ("editMessageText", edited), ("sendMediaGroup", album),
            ("deleteMessage", True),
        ):  # fmt: skip
            await journal.record(42, 1001, method, answer)  # type: ignore[arg-type]
        again = SentCalls(journal, bot_id=42, update_id=1001)
        await again.read_journal()
        photo = InputMediaPhoto(media="file-id")
        assert dump(again.answer_for(bot, SendMessage(chat_id=7, text="…"))) == dump(sent)
        assert dump(again.answer_for(bot, EditMessageText(chat_id=7, message_id=5, text="…"))) == dump(edited)
        assert dump(again.answer_for(bot, SendMediaGroup(chat_id=7, media=[photo, photo]))) == dump(album)
        assert again.answer_for(bot, DeleteMessage(chat_id=7, message_id=5)) is True
        assert again.answer_for(bot, SendMessage(chat_id=7, text="new")) is None  # not made before
    finally:
        await bot.session.close()
        await redis.aclose()
