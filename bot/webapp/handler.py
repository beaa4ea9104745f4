"""The page's "Оставить заявку" and "В чат" in the chat: the update `bot.webapp.routes.relay` makes
(a private message carrying `web_app_data`: {"action": "lead" | "chat", "request": {...}}) is
answered as a question would be — the answer for that request, with its buttons and picture
(`bot.dialog.show_result`) — and for "lead" the quote form follows (`bot.handlers.leads.open_form`),
so the lead carries that answer's configuration like any other."""

from __future__ import annotations

import json
import logging
from typing import Any

from aiogram import F, Router
from aiogram.types import Message

from bot import dialog, flow
from bot.context import Ctx
from bot.handlers import leads
from bot.routing import FeatureRouter
from core.errors import CoreError
from core.sizing.estimate import parse_request

log = logging.getLogger(__name__)


def read(data: str) -> tuple[str, dict[str, Any]] | None:
    """(action, request fields) of the page's message, or None when it is not one."""
    try:
        value = json.loads(data)
    except ValueError:
        return None
    if not isinstance(value, dict) or value.get("action") not in ("lead", "chat"):
        return None
    fields = value.get("request")
    return (value["action"], fields) if isinstance(fields, dict) else None


async def on_webapp_data(message: Message, ctx: Ctx) -> None:
    assert message.web_app_data is not None and message.from_user is not None
    said = read(message.web_app_data.data)
    if said is None:
        log.info("web_app_data from %s is not the page's: ignored", ctx.telegram_id)
        return
    action, fields = said
    try:
        answers = flow.answers_from_request(parse_request(fields), ctx.catalog)
    except CoreError as e:  # the page checked it: a catalogue changed since, or not the page at all
        log.info("web_app_data from %s does not size: %s", ctx.telegram_id, e.message)
        return
    await dialog.show_result(ctx, answers, message=message)
    if action != "lead":
        return
    state = ctx.dialog.state
    if state.last_request == flow.build_request(answers):  # sized and shown: its quote form follows
        await leads.open_form(ctx, message.chat.id, message.from_user, message)


def make_router() -> Router:
    """Before the quote form's states: the page's message is not an answer to its questions."""
    router = FeatureRouter(name="webapp")
    router.message.register(on_webapp_data, F.web_app_data)
    return router
