"""Replies to text that asks no sizing question (issue 25): thanks and greetings, questions the company
answers elsewhere (rendering and simulation servers, buying hardware, payment and documents), and
models of a kind not sized yet (speech). The parser says which (`ParseError` codes chit_chat, off_topic,
unsized_model); each gets a short honest reply in the user's language, never "unknown model", and
those a manager answers carry the quote-form button."""

from __future__ import annotations

from aiogram.types import InlineKeyboardMarkup, Message

from bot import keyboards
from bot.context import Ctx
from core.errors import ParseError

ASIDES = ("chit_chat", "off_topic", "unsized_model")


def reply_key(err: ParseError) -> str:
    """The bot.ftl message answering `err`: understand-chit-chat, understand-off-topic-render, …"""
    if err.code == "chit_chat":
        return "understand-chit-chat"
    kind = "off-topic" if err.code == "off_topic" else "unsized"
    return f"understand-{kind}-{err.value}"


async def answer_aside(message: Message, ctx: Ctx, err: ParseError) -> bool:
    """Answer `err` when it says the text asks no sizing question; False when it is another error."""
    if err.code not in ASIDES:
        return False
    markup = None
    if err.code != "chit_chat":
        markup = InlineKeyboardMarkup(inline_keyboard=[[keyboards.quote_button(ctx.tr)]])
    sent = await message.answer(ctx.tr(reply_key(err)), reply_markup=markup)
    if markup is not None:  # the quote button answers only under the dialog's message
        ctx.dialog.update(msg_id=sent.message_id)
    return True
