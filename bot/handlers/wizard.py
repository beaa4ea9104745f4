"""The guided dialog's handlers: one generic mechanism for every step (flow.STEPS), one message edited
in place. The dialog itself (its states, its message, its row, the result) is `bot.dialog`."""

from __future__ import annotations

from functools import partial
from html import escape
from typing import Any

from aiogram import F, Router
from aiogram.filters import StateFilter
from aiogram.types import CallbackQuery, Message
from aiogram.utils.callback_answer import CallbackAnswer

from bot import flow, keyboards, presenter
from bot.callbacks import CardCB, GotoCB, Nav, NavCB, PageCB, StepCB
from bot.context import Ctx
from bot.db import dialogs
from bot.dialog import details, models_sizeable, out_of_range, show_result
from bot.dialog_steps import (
    Screen,
    Wizard,
    go_to_step,
    open_dialog,
    show,
    start_wizard,
    state_of,
    step_of,
    step_screen,
    write_dialog,
)
from bot.free_text import answered_elsewhere
from bot.routing import FeatureRouter

INPUT_STATES = [state_of(name) for name in flow.STEPS if name != "task"]


async def answer_step(
    ctx: Ctx,
    step_name: str,
    value: Any,
    *,
    query: CallbackQuery | None = None,
    message: Message | None = None,
) -> None:
    """Record an answer and move on: the next step, or the result."""
    state = ctx.dialog.state
    answers = flow.answered(state.answers, step_name, value, ctx.catalog)
    if step_name == "task":
        await open_dialog(ctx, value)
    else:
        record = partial(dialogs.save_answers, ctx.work, answers=answers.record())
        await write_dialog(ctx, answers.task or "", record)
    editing = state.editing if step_name != "task" else None  # a new task is a new dialog
    if editing is not None:  # changing answers from the result: only the steps that depend on it
        remaining = [s for s in editing if s != step_name and s in flow.path(answers)]
        ctx.dialog.update(editing=remaining)
        following = remaining[0] if remaining else flow.RESULT
    else:
        if state.editing is not None:
            ctx.dialog.update(editing=None)
        following = flow.next_step(answers, step_name)
    if following == flow.RESULT and answers.get("model") is None:  # state from an older version, or forged
        ctx.dialog.update(editing=None)
        following = "model"
    if following == flow.RESULT:
        await show_result(ctx, answers, query=query, message=message, compare=editing is not None)
    else:
        await go_to_step(ctx, following, answers, query=query, message=message)


# ---------------------------------------------------------------- handlers


async def current_step(query: CallbackQuery, ctx: Ctx) -> str | None:
    """The step this button belongs to, or None when the button is stale (an old message)."""
    msg_id = ctx.dialog.state.msg_id
    if not isinstance(query.message, Message) or query.message.message_id != msg_id:
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
        source = ctx.dialog.state.source
        rent = keyboards.first_offer(ctx.catalog)
        markup = keyboards.other_task_keyboard(rent, ctx.tr, ctx.settings.contact_url, campaign=source)
        await show(ctx, Screen(presenter.render_other_task(ctx.tr), markup), query=query)
        await ctx.state.set_state(Wizard.result)  # Back from the note returns to the task question
        ctx.dialog.update(answers=flow.Answers())
        return
    step = flow.STEPS[callback_data.step]
    answers = ctx.dialog.state.answers
    if not flow.accepts(step, callback_data.value, answers, ctx.catalog):
        stale(callback_answer, ctx)
        return
    value = flow.decode(step, callback_data.value)
    await answer_step(ctx, callback_data.step, value, query=query)


async def on_nav(
    query: CallbackQuery, callback_data: NavCB, ctx: Ctx, callback_answer: CallbackAnswer
) -> None:
    """Back, start over, the result's details (`NavCB.action`)."""
    actions = {Nav.DETAILS: on_details, Nav.BACK: on_back, Nav.RESTART: on_restart}
    await actions[callback_data.action](query, ctx, callback_answer)


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
    state = ctx.dialog.state
    answers = state.answers
    if state.editing is not None:
        await show_result(ctx, answers, query=query)
        return
    previous = flow.previous_step(answers, step)
    if previous is None or previous == "task":
        await start_wizard(ctx, query=query)
        return
    await go_to_step(ctx, previous, answers, query=query)


async def on_page(
    query: CallbackQuery, callback_data: PageCB, ctx: Ctx, callback_answer: CallbackAnswer
) -> None:
    step = await current_step(query, ctx)
    if step != "model":
        stale(callback_answer, ctx)
        return
    answers = ctx.dialog.state.answers
    await show(ctx, step_screen(ctx, step, answers, page=callback_data.page), query=query)


async def on_change(
    query: CallbackQuery, callback_data: GotoCB, ctx: Ctx, callback_answer: CallbackAnswer
) -> None:
    """From the result: change one answer, then straight back to the result. Only an answer the
    result's buttons offer, of a dialog that has a model (not the "other task" note, not an error)."""
    answers = ctx.dialog.state.answers
    step = str(callback_data.step)
    if (
        await current_step(query, ctx) != flow.RESULT
        or answers.get("model") is None
        or step not in flow.path(answers)
    ):
        stale(callback_answer, ctx)
        return
    ctx.dialog.update(editing=flow.affected_steps(step))
    await go_to_step(ctx, step, answers, query=query)


async def on_card_switch(
    query: CallbackQuery, callback_data: CardCB, ctx: Ctx, callback_answer: CallbackAnswer
) -> None:
    """From a result whose card was named without its memory ("4090"): the same request on the other
    card of that chip ("RTX 4090 48 GB"), the answer saying what changed."""
    answers = ctx.dialog.state.answers
    gpu = str(callback_data.gpu)
    if (
        await current_step(query, ctx) != flow.RESULT
        or answers.get("model") is None
        or gpu not in ctx.catalog.gpus
        or not answers.get("gpus")
    ):
        stale(callback_answer, ctx)
        return
    answers = answers.setting("gpus", [gpu])
    await show_result(ctx, answers, query=query, compare=True)


async def on_details(query: CallbackQuery, ctx: Ctx, callback_answer: CallbackAnswer) -> None:
    """The rest of the result as a new message, so the short answer with its buttons stays above."""
    state = ctx.dialog.state
    text = None
    if await current_step(query, ctx) == flow.RESULT and state.last_request is not None:
        await models_sizeable(ctx, state.last_request)  # a Hugging Face model, after a restart
        text = details(ctx, state)
    if text is None:
        stale(callback_answer, ctx)
        return
    assert query.message is not None and query.bot is not None
    await query.bot.send_message(query.message.chat.id, text)


async def on_typed_answer(message: Message, ctx: Ctx) -> None:
    """A typed answer to the current step: accepted, narrowed to a choice, or answered with a hint."""
    step_name = step_of(await ctx.state.get_state())
    assert step_name is not None and message.text is not None
    if await answered_elsewhere(message, ctx, step_name):  # thanks, off-topic, a question of its own
        return
    step = flow.STEPS[step_name]
    stored = ctx.dialog.state.answers
    answers = flow.with_typed_fields(step_name, message.text, stored, ctx.catalog)
    outcome: flow.StepInput = step.read(message.text, answers, ctx.catalog) if step.read else flow.Rejected()
    if isinstance(outcome, flow.Accepted):
        ctx.dialog.update(answers=answers)
        await answer_step(ctx, step_name, outcome.value, message=message)
    elif isinstance(outcome, flow.Choose):
        await go_to_step(
            ctx, step_name, answers, message=message, note=ctx.tr("choose-one"), options=outcome.options
        )
    else:
        await message.answer(refusal(ctx, step_name, outcome, answers))


def refusal(ctx: Ctx, step_name: str, outcome: flow.Rejected, answers: flow.Answers) -> str:
    """Why a typed answer is refused, in a sentence naming what is wrong and what is allowed; the
    step's hint when there is nothing more to say."""
    args = outcome.args
    if outcome.reason == "wrong_kind":
        model = escape(args["model"])
        return ctx.tr("step-wrong-kind", model=model, kind=args["kind"], wanted=args["wanted"])
    if outcome.reason == "size_not_allowed":
        return ctx.tr("step-size-not-allowed", kind=args["kind"])
    if outcome.reason == "out_of_range":
        said = out_of_range(ctx, args["field"], args["value"])
        if said is not None:
            return said
    return ctx.tr(flow.prompt_key("hint", step_name, answers))


async def on_wrong_input(message: Message, ctx: Ctx) -> None:
    """Stickers, photos, voice… in a step: say what the step expects."""
    step_name = step_of(await ctx.state.get_state())
    await message.answer(ctx.tr(f"hint-{step_name}"))


def make_router() -> Router:
    """A fresh router per Dispatcher (a router attaches to one parent only)."""
    router = FeatureRouter(name="wizard")
    router.callback_query.register(on_step_button, StepCB.filter())
    # One filter for the three actions of NavCB: aiogram unpacks (validates) the data once per
    # filter tried, and "📋 Details", the press a result gets most, came after four others.
    router.callback_query.register(on_nav, NavCB.filter())
    router.callback_query.register(on_page, PageCB.filter())
    router.callback_query.register(on_change, GotoCB.filter())
    router.callback_query.register(on_card_switch, CardCB.filter())
    router.message.register(on_typed_answer, StateFilter(*INPUT_STATES), F.text)
    router.message.register(on_wrong_input, StateFilter(*INPUT_STATES))
    return router
