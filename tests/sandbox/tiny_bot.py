"""A tiny aiogram bot, built only to drive the sandbox the way a real bot would."""

from __future__ import annotations

from aiogram import F, Router
from aiogram.filters import Command, CommandObject, CommandStart
from aiogram.methods import SendMessage
from aiogram.types import (
    CallbackQuery,
    InlineKeyboardButton,
    InlineKeyboardMarkup,
    InlineQuery,
    InlineQueryResultArticle,
    InputTextMessageContent,
    Message,
)


def start_keyboard() -> InlineKeyboardMarkup:
    return InlineKeyboardMarkup(
        inline_keyboard=[
            [
                InlineKeyboardButton(text="Yes", callback_data="answer:yes"),
                InlineKeyboardButton(text="No", callback_data="answer:no"),
            ],
            [InlineKeyboardButton(text="Docs", url="https://example.com/docs")],
        ]
    )


def make_router() -> Router:
    router = Router(name="tiny")

    @router.message(CommandStart(deep_link=True))
    async def start_with_payload(message: Message, command: CommandObject) -> None:
        await message.answer(f"Deep link: <code>{command.args}</code>")

    @router.message(CommandStart())
    async def start(message: Message) -> None:
        await message.answer("<b>Hello</b>, do you like GPUs?", reply_markup=start_keyboard())

    @router.message(Command("fast"))
    async def fast(message: Message) -> SendMessage:
        # Returned, not awaited: aiogram puts it in the webhook response (or calls it when polling).
        return message.answer("answered in the response")

    @router.message(Command("silent"))
    async def silent(message: Message) -> None:
        return None

    @router.callback_query(F.data.startswith("answer:"))
    async def answered(query: CallbackQuery) -> None:
        choice = (query.data or "").removeprefix("answer:")
        if not isinstance(query.message, Message):  # older than 48 hours: Telegram hides it
            await query.answer("This message is too old", show_alert=True)
            return
        await query.message.edit_text(f"You said <i>{choice}</i>")
        await query.answer(f"Noted: {choice}", show_alert=choice == "no")

    @router.inline_query()
    async def inline(query: InlineQuery) -> None:
        result = InlineQueryResultArticle(
            id="1",
            title=f"Echo {query.query}",
            input_message_content=InputTextMessageContent(message_text=query.query or "empty"),
        )
        await query.answer([result], cache_time=1, is_personal=True)

    @router.message(F.text)
    async def echo(message: Message) -> None:
        quoted = message.reply_to_message
        suffix = f" (re: {quoted.html_text})" if quoted else ""
        await message.answer(f"echo: {message.html_text}{suffix}")

    return router
