"""Quick answers: free text outside the wizard, parsed by the core and answered directly.

When the model is missing, unknown or ambiguous, the one clarifying question is the wizard's model
step (with the candidates as buttons); once answered, the result follows at once.
"""

from __future__ import annotations

from html import escape

from aiogram import F, Router
from aiogram.filters import StateFilter
from aiogram.types import Message

from bot import flow
from bot.context import Ctx
from bot.handlers.wizard import Wizard, forget_answers, go_to_step, open_dialog, show_result
from core.errors import ParseError
from core.parse import understand
from core.render import render_parse_error

ASK_MODEL = ("missing_model", "ambiguous_model", "unknown_model")


async def on_free_text(message: Message, ctx: Ctx) -> None:
    assert message.text is not None
    catalog = ctx.catalog
    await forget_answers(ctx)  # a new question is a new dialog; the previous message keeps its text
    try:
        understood = understand(message.text, catalog)
    except ParseError as err:
        explanation = escape(render_parse_error(err, ctx.lang, catalog))
        if err.code not in ASK_MODEL:
            await message.answer(ctx.tr("quick-not-understood", reason=explanation))
            return
        answers = flow.answers_from_fields(dict(err.partial), catalog, quick=True)
        answers.pop("model", None)
        await open_dialog(ctx, answers["task"])
        options = flow.model_choice(err.candidates, catalog) or None
        await go_to_step(ctx, "model", answers, message=message, note=explanation, options=options)
        return
    answers = flow.answers_from_request(understood.request, catalog)
    await show_result(ctx, answers, message=message, notes=understood.notes)


def make_router() -> Router:
    """A fresh router per Dispatcher (a router attaches to one parent only)."""
    router = Router(name="quick")
    router.message.register(
        on_free_text, StateFilter(None, Wizard.task, Wizard.result), F.text, ~F.text.startswith("/")
    )
    return router
