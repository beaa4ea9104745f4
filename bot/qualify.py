"""The two optional one-tap questions after a lead (when the server is needed, for how long): their
buttons and the first question. Answers are handled by bot.handlers.claims; nothing waits for them."""

from __future__ import annotations

from aiogram import Bot
from aiogram.types import InlineKeyboardMarkup
from aiogram.utils.keyboard import InlineKeyboardBuilder

from bot.callbacks import NeedCB
from bot.context import Ctx
from bot.db.models import NEED_FOR, NEED_WHEN

NEED_VALUES = {"when": NEED_WHEN, "for": NEED_FOR}
NEED_COLUMNS = {"when": "need_when", "for": "need_for"}
SKIP = "skip"


def need_keyboard(ctx: Ctx, lead_id: int, question: str) -> InlineKeyboardMarkup:
    builder = InlineKeyboardBuilder()
    for value in NEED_VALUES[question]:
        builder.button(
            text=ctx.tr(f"btn-need-{question}-{value}"),
            callback_data=NeedCB(lead_id=lead_id, question=question, value=value),
        )
    skip = NeedCB(lead_id=lead_id, question=question, value=SKIP)
    builder.button(text=ctx.tr("btn-need-skip"), callback_data=skip)
    builder.adjust(len(NEED_VALUES[question]), 1)
    return builder.as_markup()


async def ask_need(bot: Bot, chat_id: int, ctx: Ctx, lead_id: int, question: str) -> None:
    """One optional question under the stored lead: nothing waits for it (no form state)."""
    await bot.send_message(
        chat_id, ctx.tr(f"need-ask-{question}"), reply_markup=need_keyboard(ctx, lead_id, question)
    )
