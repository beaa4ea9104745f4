"""After a lead: two optional one-tap questions for the user, and "Беру" for the sales chat.

- **Questions.** Once the lead is stored (bot.quote_form.finish), the user is asked when the server
  is needed and for how long (bot.db.models NEED_WHEN / NEED_FOR), each with "Пропустить", in one
  message edited from the first to the second to thanks. Nothing waits for them (no form state); an
  answer updates the lead row and the outbox edits its card.
- **Claim.** "Беру" on a card in the sales chat: the first press claims the lead (one conditional
  UPDATE, bot.db.leads.claim), the outbox edits the card to name the manager; a later press is told
  who has it. The hooks in workflow data ``on_lead_claimed`` run inside the claim's transaction
  (# CRM: lead.claimed).
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Sequence

from aiogram import Router
from aiogram.types import CallbackQuery, Message
from aiogram.utils.callback_answer import CallbackAnswer
from aiogram_i18n import I18nContext
from sqlalchemy.ext.asyncio import AsyncSession

from bot import leads
from bot.callbacks import ClaimCB, NeedCB
from bot.config import Settings
from bot.context import Ctx
from bot.db import leads as lead_db
from bot.db.models import Lead, utc_now
from bot.db.work import UpdateWork
from bot.outbox import LeadOutbox
from bot.qualify import NEED_COLUMNS, NEED_VALUES, SKIP, need_keyboard
from bot.routing import FeatureRouter

log = logging.getLogger(__name__)

# ---------------------------------------------------------------- qualification (after the lead)


async def _qualified(session: AsyncSession, lead_id: int, telegram_id: int, lead_outbox: LeadOutbox) -> None:
    """`lead.qualified` for the CRMs, once, when the user answered at least one question."""
    lead = await session.get(Lead, lead_id, populate_existing=True)
    if lead is not None and lead.telegram_id == telegram_id and (lead.need_when or lead.need_for):
        await lead_outbox.lead_qualified(session, lead)


async def on_need(
    query: CallbackQuery,
    callback_data: NeedCB,
    ctx: Ctx,
    callback_answer: CallbackAnswer,
    lead_outbox: LeadOutbox | None = None,
) -> None:
    """An answer (or a skip): kept on the user's lead, its card edited; the next question, or thanks,
    in the same message."""
    question, value = callback_data.question, callback_data.value
    if not isinstance(query.message, Message) or (value != SKIP and value not in NEED_VALUES[question]):
        callback_answer.text = ctx.tr("stale-button")
        return
    lead_id, telegram_id = callback_data.lead_id, ctx.telegram_id

    async def keep(session: AsyncSession) -> bool:
        if value != SKIP:
            answers = {NEED_COLUMNS[question]: value}
            if not await lead_db.set_need(session, lead_id, telegram_id, **answers):
                return False
        if question != "when" and lead_outbox is not None:  # the last question: the CRMs hear them
            await _qualified(session, lead_id, telegram_id, lead_outbox)
        return True

    if not await ctx.work.write(keep):  # committed before the outbox looks
        callback_answer.text = ctx.tr("stale-button")
        return
    if lead_outbox is not None:
        lead_outbox.wake()
    if question == "when":
        await query.message.edit_text(
            ctx.tr("need-ask-for"), reply_markup=need_keyboard(ctx, callback_data.lead_id, "for")
        )
    else:
        await query.message.edit_text(ctx.tr("need-thanks"), reply_markup=None)


# ---------------------------------------------------------------- the sales chat: "Беру"


ClaimHook = Callable[[AsyncSession, Lead], Awaitable[None]]
"""Called with the claim's session and the claimed lead, inside the claim's transaction (workflow
data ``on_lead_claimed``: a list of them)."""


async def on_claim(
    query: CallbackQuery,
    callback_data: ClaimCB,
    work: UpdateWork,
    settings: Settings,
    i18n: I18nContext,
    callback_answer: CallbackAnswer,
    lead_outbox: LeadOutbox | None = None,
    on_lead_claimed: Sequence[ClaimHook] = (),
) -> None:
    """ "Беру" on a card: the first press claims the lead (one conditional UPDATE: of two presses at
    once exactly one wins) and the outbox edits the card to name the manager; a later press is told
    who has it. Only from the sales chat (a button elsewhere is forged)."""
    lang = settings.default_language

    def tr(key: str, **args: object) -> str:
        return i18n.core.get(key, lang, **args)

    chat = query.message.chat.id if query.message is not None else None
    if settings.sales_chat_id is None or chat != settings.sales_chat_id:
        callback_answer.text = tr("stale-button")
        return
    manager = query.from_user
    name = manager.full_name or (f"@{manager.username}" if manager.username else str(manager.id))

    async def take(session: AsyncSession) -> tuple[bool, Lead | None]:
        won, lead = await lead_db.claim(
            session, callback_data.lead_id, manager_id=manager.id, manager_name=name, now=utc_now()
        )
        if won and lead is not None:
            if lead_outbox is not None:  # the CRMs' lead.claimed, in this transaction (none without one)
                await lead_outbox.lead_claimed(session, lead, by=lead.claimed_by_name or name)
            for hook in on_lead_claimed:
                await hook(session, lead)
        return won, lead

    won, lead = await work.write(take)  # committed before the outbox edits the card
    if lead is None:
        callback_answer.text = tr("stale-button")
        return
    if not won:
        mine = lead.claimed_by == manager.id
        at = lead.claimed_at.strftime("%H:%M UTC") if lead.claimed_at else "—"
        key = "lead-claim-mine" if mine else "lead-claim-taken"
        callback_answer.text = leads.render(tr, key, id=lead.id, name=lead.claimed_by_name or "—", at=at)
        callback_answer.show_alert = not mine
        return
    if lead_outbox is not None:
        lead_outbox.wake()
    log.info("lead #%s claimed by %s", lead.id, manager.id)
    callback_answer.text = leads.render(tr, "lead-claim-won", id=lead.id)


def make_sales_router() -> Router:
    """ "Беру" in the sales chat and the user's answers to the questions after a lead; before the
    groups' router (which answers any other group button)."""
    router = FeatureRouter(name="sales")
    router.callback_query.register(on_claim, ClaimCB.filter())
    router.callback_query.register(on_need, NeedCB.filter())
    return router
