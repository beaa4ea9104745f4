"""The dialog's answers, a service the handlers share: the estimates and the result, the Hugging Face
models an answer needs, its picture, the one-line answer (its states, its message and its database row
are in ``bot.dialog_steps``; whether a group message is for the bot, ``bot.group_messages``). No
router here: the wizard, quick answers and the commands each own theirs (`bot.handlers`) and call these."""

from __future__ import annotations

import logging
from collections.abc import Sequence
from functools import partial
from html import escape
from typing import Any

from aiogram.enums import ChatType
from aiogram.types import CallbackQuery, Message
from sqlalchemy.ext.asyncio import AsyncSession

from bot import flow, keyboards, presenter
from bot.context import Ctx
from bot.db import dialogs
from bot.dialog_state import DialogState
from bot.dialog_steps import (
    Screen,
    Wizard,
    show,
    write_dialog,
)
from bot.hf_models import ANSWERS as HF_ANSWERS
from bot.hf_models import HF_MODELS
from bot.pictures import PICTURES
from core.catalogue.catalog import Catalog
from core.contract import Assumption, Request, Result
from core.errors import CoreError, ParseError
from core.language.answer import CARD_READ, Answer
from core.language.phrases import render_parse_error
from core.language.words import note
from core.model.hub import LOOKUP_BUDGET_S, MemoryHub
from core.parse import understand
from core.sizing.memo import Estimates

log = logging.getLogger(__name__)

MAX_QUESTION = 256  # Telegram's own limit for an inline query's text; a group question is cut there too
# Every estimate of the dialog (plain, inverse questions, cost: `core.inverse.solve.run`) and its answer,
# remembered: "📋 Details" and a follow-up size the last request again, a crowd asks alike.
ESTIMATES = Estimates()


def estimate(request: Request | dict[str, Any], catalog: Catalog) -> Result:
    """The request sized from the catalogue in force and the Hugging Face models looked up."""
    return ESTIMATES.run(request, catalog, hub=HF_MODELS.hub())


# ---------------------------------------------------------------- the result


def out_of_range(ctx: Ctx, field: str, value: Any) -> str | None:
    """'10 000 000 000 users: allowed from 1 to 100 000' for a number outside the contract's bounds
    (they are the contract's, `Request`); None for a field without both bounds or a value not a number."""
    bounds = flow.field_bounds(field)
    if bounds is None or not isinstance(value, int) or isinstance(value, bool):
        return None
    what = ctx.tr(f"field-{field}", value=value)
    return ctx.tr("step-out-of-range", what=what, low=bounds[0], high=bounds[1])


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
    before = ctx.dialog.state
    await ctx.state.set_state(Wizard.result)
    ctx.dialog.update(answers=answers, editing=None)
    request = flow.build_request(answers)
    notes = [*notes, *_card_read(answers, request, notes)]
    if not await ensure_models(ctx, request, query=query, message=message):
        return
    try:
        result = estimate(request, ctx.catalog)
    except CoreError as e:
        log.info("estimate failed: %s (field %s)", e.message, e.field)
        said = out_of_range(ctx, e.field, answers.get(e.field)) if e.field else None
        await show(
            ctx,
            Screen(
                said or presenter.render_core_error(e, ctx.tr, ctx.lang), keyboards.error_keyboard(ctx.tr)
            ),
            query=query,
            message=message,
        )
        return
    previous = _previous_result(ctx, before.last_request, request) if compare else None
    ctx.dialog.update(last_request=request, last_notes=list(notes))
    answer = ESTIMATES.answer(result, ctx.lang, notes, previous, ctx.currency)
    text = presenter.layout_result(answer, ctx.tr)
    await show(
        ctx,
        Screen(
            text,
            keyboards.result_keyboard(
                result,
                answers,
                ctx.tr,
                ctx.settings.contact_url,
                campaign=before.source,
                card_switch=answer.card_switch,
                calculator_url=_calculator_url(ctx, request, message=message, query=query),
            ),
        ),
        query=query,
        message=message,
    )
    rec = result.recommendation
    await write_dialog(
        ctx,
        answers.task or "",
        partial(
            dialogs.complete_dialog,
            ctx.db,
            answers=answers.record(),
            summary=presenter.summary(result),
            verdict=rec.verdict if rec else "does_not_fit",
            offer_id=rec.offer_id if rec else None,
            offer_shown=keyboards.shown_offer(result),
        ),
    )
    await _send_picture(ctx, answer, query=query, message=message)


def _calculator_url(
    ctx: Ctx, request: dict[str, Any], *, message: Message | None, query: CallbackQuery | None
) -> str | None:
    """The Mini App on this request ("🎛 Калькулятор"): with WEBAPP_URL set, in a private chat (Telegram
    refuses web_app buttons in groups)."""
    chat = message.chat if message is not None else query.message.chat if query and query.message else None
    if not ctx.settings.webapp_url or chat is None or chat.type != ChatType.PRIVATE:
        return None
    from bot.webapp.layout import link

    return link(ctx.settings.webapp_url, request)


async def ensure_models(
    ctx: Ctx, request: dict[str, Any], *, query: CallbackQuery | None = None, message: Message | None = None
) -> bool:
    """Every Hugging Face id the request names (its model, its stack's) made sizeable through
    `bot.hf_models`, so the estimates that follow size it from `model_hub()`; False (the user told
    why, in their language) when one could not be read."""
    for model in _models_of(request):
        looked_up = await _ensure(ctx, model)
        if looked_up in HF_ANSWERS:
            details = HF_MODELS.why(model)  # a refused config: which key, what value, what is allowed
            text = ctx.tr(
                HF_ANSWERS[looked_up], model=escape(str(model)), seconds=round(LOOKUP_BUDGET_S), **details
            )
            await show(ctx, Screen(text, keyboards.error_keyboard(ctx.tr)), query=query, message=message)
            return False
    return True


async def models_sizeable(ctx: Ctx, request: dict[str, Any]) -> bool:
    """`ensure_models` without a word to the user: for a request answered before (the last one, for
    its details), whose looked-up models a restart has left only in the database."""
    for model in _models_of(request):
        if await _ensure(ctx, model) in HF_ANSWERS:
            return False
    return True


def _models_of(request: dict[str, Any]) -> list[Any]:
    return [request.get("model"), *(m.get("model") for m in request.get("extra_models") or [])]


async def _ensure(ctx: Ctx, model: Any) -> str:
    return await HF_MODELS.ensure(
        model, ctx.catalog, ctx.db, endpoint=ctx.settings.hf_endpoint, enabled=ctx.settings.hf_lookup
    )


def model_hub() -> MemoryHub:
    """What estimates outside `show_result` (comparisons) size a looked-up model from."""
    return HF_MODELS.hub()


async def _send_picture(
    ctx: Ctx, answer: Answer, *, query: CallbackQuery | None, message: Message | None
) -> None:
    """The answer's picture after its text, in a private chat (see `bot.pictures` for when and why):
    started once the update is finished (committed, the user's lock released), so neither its commit
    nor the user's next update waits for the drawing."""
    event = message or query
    chat = message.chat if message is not None else query.message.chat if query and query.message else None
    if not ctx.settings.answer_pictures or event is None or event.bot is None or chat is None:
        return
    if chat.type != ChatType.PRIVATE:
        return
    ctx.work.then.append(partial(PICTURES.send_apart, event.bot, chat.id, answer))


def _card_read(
    answers: flow.Answers, request: dict[str, Any], notes: Sequence[Assumption]
) -> list[Assumption]:
    """How a card named without its memory was read ("на две 4090"), kept in the answers while the
    dialog asked for the model: said with the answer while that card is still the one sized."""
    read = answers.card_read
    if read is None or any(n.code == CARD_READ for n in notes):
        return []
    if read.get("card_id") not in (request.get("gpus") or []):
        return []
    try:
        return [note(CARD_READ, **{k: v for k, v in read.items() if isinstance(v, str | int | float)})]
    except (TypeError, ValueError):
        return []


def _previous_result(ctx: Ctx, previous: dict[str, Any] | None, request: dict[str, Any]) -> Result | None:
    """The answer being changed, sized again (the catalogue may have changed since: same rules)."""
    if previous is None or previous == request:
        return None
    try:
        return estimate(previous, ctx.catalog)
    except CoreError:
        return None


def details(ctx: Ctx, state: DialogState) -> str | None:
    """The rest of the last answer ("📋 Details"); None when there is none, or it no longer sizes."""
    if state.last_request is None:
        return None
    try:
        result = estimate(state.last_request, ctx.catalog)
    except CoreError:
        return None
    return presenter.layout_details(
        ESTIMATES.answer(result, ctx.lang, state.last_notes, currency=ctx.currency), ctx.lang
    )


# ---------------------------------------------------------------- one-line questions, and groups


async def size_question(
    text: str,
    catalog: Catalog,
    tr: presenter.Tr,
    lang: str,
    username: str,
    session: AsyncSession,
    currency: str | None = None,
) -> tuple[presenter.InlineArticle, Result | None]:
    """The compact answer to a one-line question (inline mode, a mention in a group): the article and
    the result it shows, or the "how to use" article (with the reason) and None. A Hugging Face model
    is sized from what the database keeps of earlier look-ups (these answers come at once: never
    the network)."""
    text = text.strip()[:MAX_QUESTION]
    if not text:
        return presenter.inline_help(tr, username), None
    try:
        understood = understand(text, catalog)
        for model in _models_of(understood.request.model_dump(mode="json")):
            await HF_MODELS.ensure(model, catalog, session, enabled=False)
        answers = flow.answers_from_request(understood.request, catalog)
        result = estimate(flow.build_request(answers), catalog)
    except ParseError as err:
        return presenter.inline_help(tr, username, reason=render_parse_error(err, lang, catalog)), None
    except CoreError as err:
        log.info("one-line estimate failed: %s (field %s)", err.message, err.field)
        return presenter.inline_help(tr, username, reason=presenter.core_error_reason(err, lang)), None
    return presenter.render_inline(result, tr, lang, understood.notes, currency), result
