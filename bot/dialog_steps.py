"""The dialog's steps: the wizard's states (one per step), its one message edited in place, moving to a
step, and its database row (opened, written, abandoned for a fresh start at the task question);
the handlers and ``bot.dialog`` import them from here."""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import cast

from aiogram.exceptions import TelegramBadRequest
from aiogram.fsm.state import State, StatesGroup
from aiogram.types import CallbackQuery, InlineKeyboardMarkup, Message

from bot import flow, keyboards, presenter
from bot.context import Ctx
from bot.db import dialogs
from bot.dialog_calls import Acknowledged, EditDialogMessage, SendDialogMessage

log = logging.getLogger(__name__)


class Wizard(StatesGroup):
    """One state per step; the state's name is the step's name (see `bot.flow.STEPS`)."""

    task = State()
    model = State()
    method = State()
    precision = State()
    context_length = State()
    concurrency = State()
    batch_size = State()
    seq_len = State()
    resolution = State()
    images = State()
    frames = State()
    result = State()


def state_of(step: str) -> State:
    state = getattr(Wizard, step)
    assert isinstance(state, State)
    return state


def step_of(state: str | None) -> str | None:
    if not state or not state.startswith(f"{Wizard.__full_group_name__}:"):
        return None
    return state.split(":", 1)[1]


@dataclass
class Screen:
    text: str
    markup: InlineKeyboardMarkup | None


# ---------------------------------------------------------------- showing screens


async def show(
    ctx: Ctx, screen: Screen, *, query: CallbackQuery | None = None, message: Message | None = None
) -> None:
    """Edit the dialog message in place (a button was pressed) or send a new one (text was typed)."""
    if query is not None and isinstance(query.message, Message) and query.bot is not None:
        shown = query.message
        try:
            await EditDialogMessage(
                chat_id=shown.chat.id, message_id=shown.message_id, text=screen.text,
                business_connection_id=shown.business_connection_id, reply_markup=screen.markup,
            ).as_(query.bot)  # fmt: skip
        except TelegramBadRequest as e:
            if "not modified" in e.message:
                return
            log.info("could not edit the dialog message (%s); sending a new one", e.message)
        else:
            ctx.dialog.update(msg_id=shown.message_id)
            return
    event = message or query
    assert event is not None and event.bot is not None
    bot = event.bot
    if message is not None:
        chat_id = message.chat.id
    elif query is not None and query.message is not None:
        chat_id = query.message.chat.id
    else:
        chat_id = ctx.telegram_id
    sent = cast(
        Acknowledged,
        await bot(SendDialogMessage(chat_id=chat_id, text=screen.text, reply_markup=screen.markup)),
    )
    # Older dialog messages keep their buttons: URL buttons stay useful, the others answer "stale".
    ctx.dialog.update(msg_id=sent.message_id)


def step_screen(
    ctx: Ctx,
    step_name: str,
    answers: flow.Answers,
    *,
    page: int = 0,
    note: str | None = None,
    options: list[flow.Option] | None = None,
) -> Screen:
    step = flow.STEPS[step_name]
    text = presenter.render_step(step_name, answers, ctx.tr, ctx.lang, ctx.catalog, note=note)
    markup = keyboards.step_keyboard(step, answers, ctx.catalog, ctx.tr, ctx.lang, page=page, options=options)
    return Screen(text, markup)


async def go_to_step(
    ctx: Ctx,
    step_name: str,
    answers: flow.Answers,
    *,
    query: CallbackQuery | None = None,
    message: Message | None = None,
    note: str | None = None,
    options: list[flow.Option] | None = None,
) -> None:
    await ctx.state.set_state(state_of(step_name))
    ctx.dialog.update(answers=answers)
    await show(
        ctx, step_screen(ctx, step_name, answers, note=note, options=options), query=query, message=message
    )


# ---------------------------------------------------------------- the dialog's row and answers


async def forget_answers(ctx: Ctx) -> None:
    """Drop the dialog's data; keep what outlives a dialog (see `DialogState.forget_answers`)."""
    ctx.dialog.set(ctx.dialog.state.forget_answers())


async def open_dialog(ctx: Ctx, task: str) -> int:
    """A new dialog row (the user's unfinished ones count as abandoned), remembered in the FSM data."""
    source = ctx.dialog.state.source
    dialog_id = await dialogs.start_dialog(
        ctx.db, telegram_id=ctx.telegram_id, task=task, source=source, user_id=ctx.user_id
    )
    ctx.dialog.update(dialog_id=dialog_id)
    return dialog_id


async def write_dialog(ctx: Ctx, task: str, write: Callable[[int], Awaitable[None]]) -> None:
    """``write`` (an update of one dialog row, bot.db.dialogs) on the dialog being answered; on a new one
    if there is none, or if the FSM data names one that a failed update rolled back (RedisStorage
    writes are not part of the database transaction). The row is not read first: the update itself
    finds it missing (LookupError), one statement an answer instead of two."""
    dialog_id = ctx.dialog.state.dialog_id
    if dialog_id is not None:
        with contextlib.suppress(LookupError):
            await write(dialog_id)
            return
    await write(await open_dialog(ctx, task))


async def start_wizard(
    ctx: Ctx, *, message: Message | None = None, query: CallbackQuery | None = None, greet: bool = False
) -> None:
    """A fresh dialog at the task question; unfinished ones are abandoned."""
    await dialogs.abandon_dialogs(ctx.db, ctx.telegram_id, user_id=ctx.user_id)
    await forget_answers(ctx)
    note = ctx.tr("greeting") if greet else None
    await go_to_step(ctx, "task", flow.Answers(), message=message, query=query, note=note)
