"""The guided dialog: one generic mechanism for every step (flow.STEPS), one message edited in place."""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from aiogram import F, Router
from aiogram.exceptions import TelegramBadRequest
from aiogram.filters import StateFilter
from aiogram.fsm.state import State, StatesGroup
from aiogram.types import CallbackQuery, InlineKeyboardMarkup, Message
from aiogram.utils.callback_answer import CallbackAnswer

from bot import flow, keyboards, presenter
from bot.callbacks import Nav, NavCB, StepCB
from bot.context import Ctx
from bot.db import repository
from core.contract import Assumption, Result
from core.errors import CoreError
from core.estimate import estimate

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


LAST_REQUEST = "last_request"  # FSM data: the request of the last answer (follow-ups, details, changes)
LAST_NOTES = "last_notes"  # … and what the parser assumed for it

INPUT_STATES = [state_of(name) for name in flow.STEPS if name != "task"]


@dataclass
class Screen:
    text: str
    markup: InlineKeyboardMarkup | None


# ---------------------------------------------------------------- showing screens


async def show(
    ctx: Ctx, screen: Screen, *, query: CallbackQuery | None = None, message: Message | None = None
) -> None:
    """Edit the dialog message in place (a button was pressed) or send a new one (text was typed)."""
    if query is not None and isinstance(query.message, Message):
        try:
            await query.message.edit_text(screen.text, reply_markup=screen.markup)
        except TelegramBadRequest as e:
            if "not modified" in e.message:
                return
            log.info("could not edit the dialog message (%s); sending a new one", e.message)
        else:
            await ctx.state.update_data(msg_id=query.message.message_id)
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
    sent = await bot.send_message(chat_id, screen.text, reply_markup=screen.markup)
    # Older dialog messages keep their buttons: URL buttons stay useful, the others answer "stale".
    await ctx.state.update_data(msg_id=sent.message_id)


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
    await ctx.state.update_data(answers=answers)
    await show(
        ctx, step_screen(ctx, step_name, answers, note=note, options=options), query=query, message=message
    )


async def forget_answers(ctx: Ctx) -> None:
    """Drop the dialog's data; keep what outlives a dialog (the deep-link source, the dialog message)."""
    data = await ctx.state.get_data()
    kept = ("msg_id", "source", LAST_REQUEST, LAST_NOTES)
    await ctx.state.set_data({key: data[key] for key in kept if key in data})


async def open_dialog(ctx: Ctx, task: str) -> int:
    """A new dialog row (the user's unfinished ones count as abandoned), remembered in the FSM data."""
    source = (await ctx.state.get_data()).get("source")
    dialog_id = await repository.start_dialog(ctx.db, telegram_id=ctx.telegram_id, task=task, source=source)
    await ctx.state.update_data(dialog_id=dialog_id)
    return dialog_id


async def current_dialog(ctx: Ctx, task: str) -> int:
    """The dialog row being answered; a new one if there is none, or if the FSM data names one that a
    failed update rolled back (RedisStorage writes are not part of the database transaction)."""
    dialog_id = (await ctx.state.get_data()).get("dialog_id")
    if dialog_id is not None and await repository.get_dialog(ctx.db, dialog_id) is not None:
        return int(dialog_id)
    return await open_dialog(ctx, task)


async def start_wizard(
    ctx: Ctx, *, message: Message | None = None, query: CallbackQuery | None = None, greet: bool = False
) -> None:
    """A fresh dialog at the task question; unfinished ones are abandoned."""
    await repository.abandon_dialogs(ctx.db, ctx.telegram_id)
    await forget_answers(ctx)
    note = ctx.tr("greeting") if greet else None
    await go_to_step(ctx, "task", {}, message=message, query=query, note=note)


async def show_result(
    ctx: Ctx,
    answers: flow.Answers,
    *,
    query: CallbackQuery | None = None,
    message: Message | None = None,
    notes: Sequence[Assumption] = (),
    compare: bool = False,
) -> None:
    """Estimate, present, record the dialog as completed. `notes`: what a quick answer's parser assumed;
    `compare`: the answer changes the previous one (another precision, a follow-up), so it says how."""
    data = await ctx.state.get_data()
    await ctx.state.set_state(Wizard.result)
    await ctx.state.update_data(answers=answers, editing=None)
    request = flow.build_request(answers)
    try:
        result = estimate(request, ctx.catalog)
    except CoreError as e:
        log.info("estimate failed: %s (field %s)", e.message, e.field)
        await show(
            ctx,
            Screen(presenter.render_core_error(e, ctx.tr, ctx.lang), keyboards.error_keyboard(ctx.tr)),
            query=query,
            message=message,
        )
        return
    previous = _previous_result(ctx, data.get(LAST_REQUEST), request) if compare else None
    await ctx.state.update_data(
        {LAST_REQUEST: request, LAST_NOTES: [n.model_dump(mode="json") for n in notes]}
    )
    text = presenter.render_result(result, ctx.tr, ctx.lang, notes=notes, previous=previous)
    await show(
        ctx,
        Screen(text, keyboards.result_keyboard(result, answers, ctx.tr, ctx.settings.contact_url)),
        query=query,
        message=message,
    )
    rec = result.recommendation
    await repository.complete_dialog(
        ctx.db,
        await current_dialog(ctx, answers["task"]),
        answers=answers,
        summary=presenter.summary(result),
        verdict=rec.verdict if rec else "does_not_fit",
        offer_id=rec.offer_id if rec else None,
    )


def _previous_result(ctx: Ctx, previous: Any, request: dict[str, Any]) -> Result | None:
    """The answer being changed, sized again (the catalogue may have changed since: same rules)."""
    if not isinstance(previous, dict) or previous == request:
        return None
    try:
        return estimate(previous, ctx.catalog)
    except CoreError:
        return None


async def answer_step(
    ctx: Ctx,
    step_name: str,
    value: Any,
    *,
    query: CallbackQuery | None = None,
    message: Message | None = None,
) -> None:
    """Record an answer and move on: the next step, or the result."""
    data = await ctx.state.get_data()
    answers: flow.Answers = dict(data.get("answers") or {})
    if step_name == "task":
        answers = {"task": value}
        await open_dialog(ctx, value)
    else:
        answers[step_name] = value
        answers = flow.forget_after(answers, step_name)
        await repository.save_answers(ctx.db, await current_dialog(ctx, answers["task"]), answers)
    editing = data.get("editing")
    if editing is not None:  # changing answers from the result: only the steps that depend on it
        remaining = [s for s in editing if s != step_name and s in flow.path(answers)]
        await ctx.state.update_data(editing=remaining)
        following = remaining[0] if remaining else flow.RESULT
    else:
        following = flow.next_step(answers, step_name)
    if following == flow.RESULT:
        await show_result(ctx, answers, query=query, message=message, compare=editing is not None)
    else:
        await go_to_step(ctx, following, answers, query=query, message=message)


# ---------------------------------------------------------------- handlers


async def current_step(query: CallbackQuery, ctx: Ctx) -> str | None:
    """The step this button belongs to, or None when the button is stale (an old message)."""
    data = await ctx.state.get_data()
    if not isinstance(query.message, Message) or query.message.message_id != data.get("msg_id"):
        return None
    return step_of(await ctx.state.get_state())


def stale(callback_answer: CallbackAnswer, ctx: Ctx) -> None:
    callback_answer.text = ctx.tr("stale-button")
    callback_answer.show_alert = False


async def on_step_button(
    query: CallbackQuery, callback_data: StepCB, ctx: Ctx, callback_answer: CallbackAnswer
) -> None:
    if await current_step(query, ctx) != callback_data.step or callback_data.step not in flow.STEPS:
        stale(callback_answer, ctx)
        return
    if callback_data.step == "task" and callback_data.value == "other":
        await show(
            ctx,
            Screen(
                presenter.render_other_task(ctx.tr),
                keyboards.other_task_keyboard(ctx.settings.contact_url, ctx.tr),
            ),
            query=query,
        )
        await ctx.state.set_state(Wizard.result)  # Back from the note returns to the task question
        await ctx.state.update_data(answers={})
        return
    step = flow.STEPS[callback_data.step]
    answers: flow.Answers = dict((await ctx.state.get_data()).get("answers") or {})
    if not flow.accepts(step, callback_data.value, answers, ctx.catalog):
        stale(callback_answer, ctx)
        return
    value = flow.decode(step, callback_data.value)
    await answer_step(ctx, callback_data.step, value, query=query)


async def on_restart(query: CallbackQuery, ctx: Ctx, callback_answer: CallbackAnswer) -> None:
    if await current_step(query, ctx) is None:
        stale(callback_answer, ctx)
        return
    await start_wizard(ctx, query=query)


async def on_back(query: CallbackQuery, ctx: Ctx, callback_answer: CallbackAnswer) -> None:
    step = await current_step(query, ctx)
    if step is None:
        stale(callback_answer, ctx)
        return
    data = await ctx.state.get_data()
    answers: flow.Answers = dict(data.get("answers") or {})
    if data.get("editing") is not None:
        await show_result(ctx, answers, query=query)
        return
    previous = flow.previous_step(answers, step)
    if previous is None or previous == "task":
        await start_wizard(ctx, query=query)
        return
    await go_to_step(ctx, previous, answers, query=query)


async def on_page(
    query: CallbackQuery, callback_data: NavCB, ctx: Ctx, callback_answer: CallbackAnswer
) -> None:
    step = await current_step(query, ctx)
    if step != "model" or not callback_data.arg.isdigit():
        stale(callback_answer, ctx)
        return
    answers: flow.Answers = dict((await ctx.state.get_data()).get("answers") or {})
    await show(ctx, step_screen(ctx, step, answers, page=int(callback_data.arg)), query=query)


async def on_change(
    query: CallbackQuery, callback_data: NavCB, ctx: Ctx, callback_answer: CallbackAnswer
) -> None:
    """From the result: change one answer, then straight back to the result."""
    data = await ctx.state.get_data()
    answers: flow.Answers = dict(data.get("answers") or {})
    if await current_step(query, ctx) != flow.RESULT or callback_data.arg not in flow.path(answers):
        stale(callback_answer, ctx)
        return
    await ctx.state.update_data(editing=flow.affected_steps(callback_data.arg))
    await go_to_step(ctx, callback_data.arg, answers, query=query)


async def on_details(query: CallbackQuery, ctx: Ctx, callback_answer: CallbackAnswer) -> None:
    """The rest of the result as a new message, so the short answer with its buttons stays above."""
    data = await ctx.state.get_data()
    request = data.get(LAST_REQUEST)
    if await current_step(query, ctx) != flow.RESULT or not isinstance(request, dict):
        stale(callback_answer, ctx)
        return
    try:
        result = estimate(request, ctx.catalog)
    except CoreError:
        stale(callback_answer, ctx)
        return
    notes = [Assumption.model_validate(n) for n in data.get(LAST_NOTES) or []]
    text = presenter.render_details(result, ctx.tr, ctx.lang, notes=notes)
    assert query.message is not None and query.bot is not None
    await query.bot.send_message(query.message.chat.id, text)


async def on_typed_answer(message: Message, ctx: Ctx) -> None:
    """A typed answer to the current step: accepted, narrowed to a choice, or answered with a hint."""
    step_name = step_of(await ctx.state.get_state())
    assert step_name is not None and message.text is not None
    step = flow.STEPS[step_name]
    data = await ctx.state.get_data()
    answers = flow.with_typed_fields(step_name, message.text, dict(data.get("answers") or {}), ctx.catalog)
    outcome: flow.StepInput = step.read(message.text, answers, ctx.catalog) if step.read else flow.Rejected()
    if isinstance(outcome, flow.Accepted):
        await ctx.state.update_data(answers=answers)
        await answer_step(ctx, step_name, outcome.value, message=message)
    elif isinstance(outcome, flow.Choose):
        await go_to_step(
            ctx, step_name, answers, message=message, note=ctx.tr("choose-one"), options=outcome.options
        )
    else:
        await message.answer(ctx.tr(f"hint-{step_name}"))


async def on_wrong_input(message: Message, ctx: Ctx) -> None:
    """Stickers, photos, voice… in a step: say what the step expects."""
    step_name = step_of(await ctx.state.get_state())
    await message.answer(ctx.tr(f"hint-{step_name}"))


def make_router() -> Router:
    """A fresh router per Dispatcher (a router attaches to one parent only)."""
    router = Router(name="wizard")
    router.callback_query.register(on_step_button, StepCB.filter())
    router.callback_query.register(on_restart, NavCB.filter(F.action == Nav.RESTART))
    router.callback_query.register(on_back, NavCB.filter(F.action == Nav.BACK))
    router.callback_query.register(on_page, NavCB.filter(F.action == Nav.PAGE))
    router.callback_query.register(on_change, NavCB.filter(F.action == Nav.GOTO))
    router.callback_query.register(on_details, NavCB.filter(F.action == Nav.DETAILS))
    router.message.register(on_typed_answer, StateFilter(*INPUT_STATES), F.text)
    router.message.register(on_wrong_input, StateFilter(*INPUT_STATES))
    return router
