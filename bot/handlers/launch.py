""" "⌨️ Launch command" under a result: the commands that run what it sized, as a new message (so the
answer with its buttons stays above), like "📋 Details". A press on an answer no longer current (the
dialog moved on, or the request no longer sizes) is answered as a stale button."""

from __future__ import annotations

from aiogram import Router
from aiogram.types import CallbackQuery, Message
from aiogram.utils.callback_answer import CallbackAnswer

from bot.callbacks import LaunchCB
from bot.context import Ctx
from bot.dialog import models_sizeable
from bot.dialog_steps import step_of
from bot.flow import RESULT
from bot.launch_view import render_launch
from bot.routing import FeatureRouter
from core.errors import CoreError
from core.sizing.estimate import estimate


async def on_launch(query: CallbackQuery, ctx: Ctx, callback_answer: CallbackAnswer) -> None:
    state = ctx.dialog.state
    current = isinstance(query.message, Message) and query.message.message_id == state.msg_id
    text = None
    if current and step_of(await ctx.state.get_state()) == RESULT and state.last_request is not None:
        await models_sizeable(ctx, state.last_request)  # a Hugging Face model, after a restart
        try:
            text = render_launch(estimate(state.last_request, ctx.catalog), ctx.lang)
        except CoreError:
            text = None
    if text is None:  # an old message's button, or a request that no longer sizes
        callback_answer.text = ctx.tr("stale-button")
        callback_answer.show_alert = False
        return
    assert query.message is not None and query.bot is not None
    await query.bot.send_message(query.message.chat.id, text)


def make_router() -> Router:
    router = FeatureRouter(name="launch")
    router.callback_query.register(on_launch, LaunchCB.filter())
    return router
