"""A pasted log (a CUDA OOM, nvidia-smi, a vLLM or llama.cpp start-up log) answered from what it
measured (`core.logs`): the card, what was in use, what failed, what to change, what to rent; and a
button to store the measurement as a calibration candidate for the operator — only when pressed
(the numbers wait in the dialog state, never the text; a new question drops them).

The router comes before the price and quote intents and the quick answers: a log holds words those
would read ("vllm", "llama", sizes) as a question. Text that looks like a log but is none this reader
knows gets one clear sentence saying what it reads.

A log sent as a file (a Telegram document, `.txt` / `.log`, up to `core.logs.files.MAX_LOG_FILE_BYTES`)
is downloaded (getFile and the file URL) and answered the same way; a bigger file is refused before
it is downloaded, a binary one after, each saying what is read.
"""

from __future__ import annotations

from html import escape
from typing import Literal

from aiogram import Bot, F, Router
from aiogram.filters import StateFilter
from aiogram.filters.callback_data import CallbackData
from aiogram.types import CallbackQuery, InlineKeyboardButton, InlineKeyboardMarkup, Message
from aiogram.utils.callback_answer import CallbackAnswer

from bot import keyboards
from bot.context import Ctx
from bot.db import measurements
from bot.dialog_steps import Wizard
from bot.routing import FeatureRouter
from core.language.phrases import format_bytes
from core.logs import is_pasted_log
from core.logs.advice import record
from core.logs.files import MAX_LOG_FILE_BYTES, decode_log_file, is_log_file_name
from core.logs.words import answer_log


class MeasurementCB(CallbackData, prefix="ms"):
    """ "💾 Store the measurement" under a log's answer."""

    action: Literal["store"] = "store"


def _markup(ctx: Ctx, answer_offer: object, source: str | None, store: bool) -> InlineKeyboardMarkup:
    offer = answer_offer if answer_offer is not None else keyboards.first_offer(ctx.catalog)
    rows = keyboards.sales_rows(
        offer,  # type: ignore[arg-type]
        ctx.tr,
        ctx.settings.contact_url,
        campaign=source,
        ask_price=offer is None or getattr(offer, "price_per_hour", None) is None,
    )
    if store:
        rows = [
            *rows,
            [InlineKeyboardButton(text=ctx.tr("log-store-button"), callback_data=MeasurementCB().pack())],
        ]
    return InlineKeyboardMarkup(inline_keyboard=rows)


async def on_log(message: Message, ctx: Ctx) -> None:
    assert message.text is not None
    await answer_text(message, ctx, message.text)


async def on_log_file(message: Message, ctx: Ctx, bot: Bot) -> None:
    """A document: read as a log when it is a text file within the cap, else one clear sentence."""
    document = message.document
    assert document is not None
    name = escape((document.file_name or "")[:64])
    if not is_log_file_name(document.file_name, document.mime_type):
        await message.answer(ctx.tr("log-file-not-text", name=name))
        return
    size = document.file_size
    if size is None or size > MAX_LOG_FILE_BYTES:
        limit = format_bytes(MAX_LOG_FILE_BYTES, ctx.lang)
        shown = format_bytes(size, ctx.lang) if size is not None else "?"
        await message.answer(ctx.tr("log-file-too-big", name=name, size=shown, limit=limit))
        return
    data = await bot.download(document)
    text = decode_log_file(data.read()) if data is not None else None
    if text is None:
        await message.answer(ctx.tr("log-file-not-text", name=name))
        return
    await answer_text(message, ctx, text)


async def answer_text(message: Message, ctx: Ctx, text: str) -> None:
    """The answer to a log's text (pasted or from a file), with the store button when it was read."""
    answer = answer_log(text, ctx.catalog, ctx.lang, ctx.currency)
    state = ctx.dialog.state
    if answer.advice is None:
        await message.answer(escape(answer.text))
        return
    kept = record(answer.advice)
    ctx.dialog.update(measurement=kept)
    text = escape(answer.text) + "\n\n" + ctx.tr("log-store-offer")
    await message.answer(text, reply_markup=_markup(ctx, answer.offer, state.source, store=True))


async def on_store(query: CallbackQuery, ctx: Ctx, callback_answer: CallbackAnswer) -> None:
    """The user agreed: the measurement kept with the answer is stored, the button goes (a second
    press, or one after a new question dropped the numbers, is told there is nothing to store)."""
    state = ctx.dialog.state
    if state.measurement is None or not isinstance(query.message, Message):
        callback_answer.text = ctx.tr("log-store-expired")
        return
    ctx.dialog.update(measurement=None)
    await ctx.dialog.save(ctx.state)  # the measurement dropped from the state in the same commit
    # Stored before the user is told so: committed when this returns.
    number = await ctx.work.commit_with(measurements.add, ctx.user_id, state.measurement)
    callback_answer.text = ctx.tr("log-stored", id=number)
    await query.message.answer(ctx.tr("log-stored", id=number))
    markup = query.message.reply_markup
    if markup is not None:  # the store button goes; rent and quote stay
        store = MeasurementCB().pack()
        rows = [[b for b in row if b.callback_data != store] for row in markup.inline_keyboard]
        await query.message.edit_reply_markup(
            reply_markup=InlineKeyboardMarkup(inline_keyboard=[r for r in rows if r])
        )


async def is_log(message: Message) -> bool:
    """Filter: a pasted log, read or of an unknown format (`core.logs.is_pasted_log`)."""
    return bool(message.text) and is_pasted_log(message.text or "")


def make_router() -> Router:
    """A fresh router per Dispatcher (a router attaches to one parent only)."""
    router = FeatureRouter(name="pasted_logs")
    router.message.register(
        on_log, StateFilter(None, Wizard.task, Wizard.result), F.text, ~F.text.startswith("/"), is_log
    )
    router.message.register(on_log_file, F.document)
    router.callback_query.register(on_store, MeasurementCB.filter())
    return router
