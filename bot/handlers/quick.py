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
from bot.db import repository
from bot.handlers.wizard import Wizard, go_to_step, show_result
from core.errors import ParseError
from core.parse import understand
from core.render import render_parse_error

ASK_MODEL = ("missing_model", "ambiguous_model", "unknown_model")


async def on_free_text(message: Message, ctx: Ctx) -> None:
    assert message.text is not None
    state, catalog = ctx.state, ctx.catalog
    data = await state.get_data()
    # A new question is a new dialog; the previous dialog message keeps its text.
    await state.set_data({"msg_id": data.get("msg_id"), "source": data.get("source")})
    try:
        understood = understand(message.text, catalog)
    except ParseError as err:
        explanation = escape(render_parse_error(err, ctx.lang, catalog))
        if err.code not in ASK_MODEL:
            await message.answer(ctx.tr("quick-not-understood", reason=explanation))
            return
        answers = flow.answers_from_fields(dict(err.partial), catalog, quick=True)
        answers.pop("model", None)
        options = [
            flow.Option(c, label=catalog.models[c].name if c in catalog.models else c)
            for c in err.candidates[:6]
        ] or None
        dialog_id = await repository.start_dialog(
            ctx.db, telegram_id=ctx.telegram_id, task=answers["task"], source=data.get("source")
        )
        await state.update_data(dialog_id=dialog_id)
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
