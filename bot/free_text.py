"""Free text answered directly: parsed by the core once, then an answer, a follow-up's changed answer,
a comparison, or the wizard's model step when the model is missing, unknown or ambiguous. Used by the
quick router (text outside the wizard) and by the wizard's steps (a question typed at a step)."""

from __future__ import annotations

from html import escape
from typing import Any

from aiogram.types import Message

from bot import flow, keyboards, presenter
from bot.asides import answer_aside
from bot.context import Ctx
from bot.dialog import ensure_models, model_hub, show_result
from bot.dialog_steps import forget_answers, go_to_step, open_dialog
from core.contract import Assumption, Request, SolveFor
from core.errors import CoreError, ParseError
from core.inverse.comparison import compare
from core.language import words as core_texts
from core.language.answer import CARD_READ
from core.language.phrases import render_parse_error
from core.parse import Comparison, FollowUp, understand, understand_message

ASK_MODEL = ("missing_model", "ambiguous_model", "unknown_model")
# the parser's notes said before the answer: words it could not use, a task the model does not do
SAID_FIRST = ("parse_unread", "parse_task_not_for_model")


async def on_free_text(message: Message, ctx: Ctx) -> None:
    assert message.text is not None
    text, catalog = message.text, ctx.catalog
    previous = ctx.dialog.state.previous_request()
    await forget_answers(ctx)  # a new question is a new dialog; the previous message keeps its text
    try:
        understood = understand_message(text, previous, catalog)  # the text read once
        if isinstance(understood, Comparison):
            await _compare(message, ctx, understood.request, understood.configs)
            return
        await _say_unread(message, ctx, understood.notes)
        if isinstance(understood, FollowUp):
            answers = flow.answers_from_request(understood.request, catalog)
            await open_dialog(ctx, answers.task or "")
            await show_result(ctx, answers, message=message, notes=understood.notes, compare=True)
            return
    except ParseError as err:
        if await answer_aside(message, ctx, err):  # thanks, rendering, payment, speech: said so
            return
        explanation = escape(render_parse_error(err, ctx.lang, catalog))
        if err.code not in ASK_MODEL:
            await message.answer(ctx.tr("quick-not-understood", reason=explanation))
            return
        answers = flow.answers_from_fields(dict(err.partial), catalog, quick=True).setting("model", None)
        read = next((n for n in err.notes if n.code == CARD_READ), None)
        if read is not None:  # "на две 4090": said with the answer, once the model is chosen
            answers = answers.model_copy(update={"card_read": dict(read.params)})
        await open_dialog(ctx, answers.task or "")
        options = flow.model_choice(err.candidates, catalog) or None
        note = None if err.code == "missing_model" else explanation  # the step asks "which model?" itself
        await go_to_step(ctx, "model", answers, message=message, note=note, options=options)
        return
    answers = flow.answers_from_request(understood.request, catalog)
    await show_result(ctx, answers, message=message, notes=understood.notes)


async def _say_unread(message: Message, ctx: Ctx, notes: list[Assumption]) -> None:
    """Words the parser could not use are said before the answer, not only in its details."""
    for unread in (n for n in notes if n.code in SAID_FIRST):
        await message.answer(escape(core_texts.t(f"assumption-{unread.code}", ctx.lang, **unread.params)))


async def answered_elsewhere(message: Message, ctx: Ctx, step_name: str) -> bool:
    """Text typed at a dialog step that answers no step: thanks, a question sized elsewhere, a speech
    model (said so), or at the model step a question of its own ("какая самая большая модель влезет
    в h100?": answered as typed, not taken as a model named "*"). False: the step reads it."""
    assert message.text is not None
    try:
        request = understand(message.text, ctx.catalog).request
    except ParseError as err:
        return await answer_aside(message, ctx, err)
    if step_name == "model" and request.solve_for is SolveFor.MODEL:
        await on_free_text(message, ctx)
        return True
    return False


async def _compare(message: Message, ctx: Ctx, request: Request, configs: Any) -> None:
    if not await ensure_models(ctx, request.model_dump(mode="json"), message=message):
        return  # a Hugging Face id that could not be read: said, as for any answer
    try:
        rows = compare(request, configs, ctx.catalog, hub=model_hub())
    except CoreError as e:
        await message.answer(presenter.render_core_error(e, ctx.tr, ctx.lang))
        return
    source = ctx.dialog.state.source
    markup = keyboards.comparison_keyboard(rows, ctx.tr, ctx.settings.contact_url, campaign=source)
    await message.answer(presenter.render_comparison(rows, ctx.lang, ctx.currency), reply_markup=markup)
    # "сравни с b200" next compares against the first card of this comparison
    gpu, count = configs[0]
    first = request.model_copy(update={"gpus": [gpu], "num_gpus": count})
    ctx.dialog.update(last_request=first.model_dump(mode="json"))
