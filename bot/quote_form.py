"""The quote form's states and its end (bot.handlers.leads asks the questions): the lead is written
first and committed, whatever its text, then its card is rendered and kept with it. A repeat within
minutes is the same lead; past the user's cap of cards a request joins their last card as a note. The
user reads "saved" (the outbox edits it to "accepted" once the card is delivered)."""

from __future__ import annotations

import logging
from html import escape
from typing import Any

from aiogram.fsm.state import State, StatesGroup
from aiogram.types import CallbackQuery, Message, ReplyKeyboardRemove
from aiogram.types import User as TelegramUser
from sqlalchemy.ext.asyncio import AsyncSession

from bot import dialog, leads
from bot.context import Ctx
from bot.db import leads as lead_db
from bot.db import users
from bot.db.models import LEAD_RESERVATION, Lead, utc_now
from bot.outbox import LeadOutbox
from bot.qualify import ask_need
from core.catalogue.catalog import Catalog
from core.contract import Result
from core.errors import CoreError
from core.language.answer import headline_settings

log = logging.getLogger(__name__)


class QuoteForm(StatesGroup):
    contact = State()
    comment = State()
    hold = State()  # a reservation: when and for how long, before the contact


FORM_STATES = (QuoteForm.contact.state, QuoteForm.comment.state, QuoteForm.hold.state)


def sized(request: dict[str, Any] | None, catalog: Catalog) -> Result | None:
    """The last answer sized again as the dialog sizes it (the catalogue in force, the Hugging Face
    models looked up; remembered, so usually not sized again); None without one."""
    if not request:
        return None
    try:
        return dialog.estimate(request, catalog)
    except CoreError:
        return None


async def finish(
    ctx: Ctx,
    chat_id: int,
    user: TelegramUser,
    event: Message | CallbackQuery,
    comment: str | None,
    outbox: LeadOutbox | None,
) -> None:
    """Write the lead, whatever its text, and commit it; then its card. A repeat within minutes is
    the same lead; past the user's cap of cards it joins their last card as a note. The user reads
    "saved" (the outbox edits it to "accepted" once the card is delivered)."""
    state = ctx.dialog.state
    draft = state.lead
    if draft is None or draft.contact is None or draft.contact_kind is None:  # forged or lost state
        await ctx.state.set_state(None)
        return
    contact = leads.Contact(draft.contact_kind, draft.contact)
    comment = (leads.clean(comment) or None) if comment else None
    request = state.last_request
    result = sized(request, ctx.catalog)
    back = draft.back_state if draft.back_state not in FORM_STATES else None
    ctx.dialog.update(lead=None)
    await ctx.state.set_state(back)
    reservation = {"offer_id": draft.reserve_offer, "hold": draft.hold} if draft.reserve_offer else None
    asked = request if reservation is None else {**(request or {}), "reservation": reservation}
    key = leads.dedup_key(ctx.telegram_id, asked, contact)  # a reservation is not the quote before it
    assert event.bot is not None
    duplicate = await ctx.work.read(lead_db.find_duplicate, key)
    recent = await ctx.work.read(lead_db.recent_leads, ctx.telegram_id) if duplicate is None else []
    lead = None
    if duplicate is None and len(recent) < lead_db.MAX_LEADS_PER_WINDOW:
        # First, and committed: nothing after it (its texts, its card, the answer) can lose it.
        lead = await _store(ctx, contact, comment, request, result, key, draft.dialog_id, reservation)
    what = _what(ctx, contact, comment, result)
    if reservation is not None:
        shown = {k: escape(str(v), quote=False) for k, v in reservation.items()}
        held = leads.render(ctx.tr, "lead-what-reservation", offer=shown["offer_id"], hold=shown["hold"])
        what = f"{held}\n{what}"
    if duplicate is not None:
        delivered = duplicate.sent_at is not None
        reply = leads.render(
            ctx.tr, "lead-already-accepted" if delivered else "lead-already-saved", id=duplicate.id, what=what
        )
        await event.bot.send_message(chat_id, reply, reply_markup=ReplyKeyboardRemove())
        return
    if lead is None:
        await _join(ctx, chat_id, event, recent[-1], contact, comment, result, what, outbox)
        return
    accepted = leads.render(ctx.tr, "lead-accepted", id=lead.id, what=what)
    await _render_card(ctx, user, lead, contact, comment, accepted)
    if outbox is None or not outbox.enabled:
        log.info("lead #%s stored (SALES_CHAT_ID not set, not sent): %s", lead.id, contact.kind)
    confirmation = await event.bot.send_message(
        chat_id, leads.render(ctx.tr, "lead-saved", id=lead.id, what=what), reply_markup=ReplyKeyboardRemove()
    )
    # Committed before the outbox looks: it edits the confirmation once delivered.
    await ctx.work.write(lead_db.set_confirmation, lead.id, confirmation.message_id)
    if outbox is not None:
        outbox.wake()
    await ask_need(event.bot, chat_id, ctx, lead.id, "when")


async def _store(
    ctx: Ctx,
    contact: leads.Contact,
    comment: str | None,
    request: dict[str, Any] | None,
    result: Result | None,
    key: str,
    dialog_id: int | None,
    reservation: dict[str, str | None] | None = None,
) -> Lead:
    """The lead row, committed: nothing after it (its card, the user's answer) can roll it back."""
    summary = leads.summary(result, request, ctx.settings.default_language)
    if reservation is not None:  # the card says "Бронь" and the offer (bot.leads.card)
        summary["reservation"] = reservation

    async def store(session: AsyncSession) -> Lead:
        db_user = await users.get_user(session, ctx.telegram_id)
        lead, _ = await lead_db.create_lead(
            session,
            telegram_id=ctx.telegram_id,
            contact_kind=contact.kind,
            contact=contact.value,
            comment=comment,
            source=db_user.source if db_user is not None else None,
            dialog_id=dialog_id,
            request=request,
            summary=summary,
            dedup_key=key,
        )
        if reservation is not None:
            lead.kind = LEAD_RESERVATION
        return lead

    await ctx.dialog.save(ctx.state)  # the draft's end commits with the lead
    return await ctx.work.commit_with(store)


async def _render_card(
    ctx: Ctx, user: TelegramUser, lead: Lead, contact: leads.Contact, comment: str | None, accepted: str
) -> None:
    """The sales card and the user's "accepted" text, kept with the lead; a card the texts could not
    make is a plain one (the lead is delivered all the same)."""
    sales_lang = ctx.settings.default_language

    def tr(key: str, **args: object) -> str:
        return ctx.i18n.core.get(key, sales_lang, **args)

    who = leads.Who(
        telegram_id=ctx.telegram_id,
        first_name=user.first_name,
        username=user.username,
        language=ctx.lang,
        source=lead.source,
    )
    try:
        card = leads.card(
            tr, lead_id=lead.id, who=who, contact=contact, comment=comment, summary=lead.summary,
            created_at=lead.created_at,
        )  # fmt: skip
    except Exception:
        log.exception("lead #%s: its card could not be rendered; a plain one is sent", lead.id)
        card = leads.plain_card(lead.id, contact, comment)
    await ctx.work.write(_keep_card, lead, card, accepted)


async def _keep_card(session: AsyncSession, lead: Lead, card: str, accepted: str) -> None:
    session.add(lead)  # the lead as `_store` committed it
    await lead_db.set_card(session, lead, card, accepted=accepted)


async def _add_note(session: AsyncSession, lead: Lead, note: str) -> bool:
    session.add(lead)  # the lead as `recent_leads` read it
    return await lead_db.add_note(session, lead, note)


async def _join(
    ctx: Ctx,
    chat_id: int,
    event: Message | CallbackQuery,
    last: Lead,
    contact: leads.Contact,
    comment: str | None,
    result: Result | None,
    what: str,
    outbox: LeadOutbox | None,
) -> None:
    """Past the cap: the request joins the user's last card as a note; the user is told why."""
    sales_lang = ctx.settings.default_language
    headline = headline_settings(result, sales_lang) if result is not None else None

    def tr(key: str, **args: object) -> str:
        return ctx.i18n.core.get(key, sales_lang, **args)

    try:
        note = leads.note(tr, contact=contact, comment=comment, headline=headline, at=utc_now())
    except Exception:
        log.exception("lead #%s: a note could not be rendered; a plain one joins", last.id)
        note = leads.plain_card(last.id, contact, comment)
    if not await ctx.work.write(_add_note, last, note):
        log.warning("lead #%s has %d notes: a further one not kept", last.id, lead_db.MAX_NOTES)
    assert event.bot is not None
    await event.bot.send_message(
        chat_id,
        leads.render(ctx.tr, "lead-joined", id=last.id, limit=lead_db.MAX_LEADS_PER_WINDOW, what=what),
        reply_markup=ReplyKeyboardRemove(),
    )
    if outbox is not None:
        outbox.wake()


def _what(ctx: Ctx, contact: leads.Contact, comment: str | None, result: Result | None) -> str:
    """What the sales chat gets, in the user's language: contact, comment, configuration, answer
    (the lead row keeps them in the sales language: `leads.summary`)."""
    e = lambda value: escape(str(value), quote=False)  # noqa: E731
    kind = ctx.tr(f"lead-kind-{contact.kind}")
    lines = [leads.render(ctx.tr, "lead-what-contact", contact=f"{kind}: {e(contact.value)}")]
    if comment:
        shown = e(leads.clip(comment, leads.MAX_COMMENT))
        lines.append(leads.render(ctx.tr, "lead-what-comment", comment=shown))
    headline = headline_settings(result, ctx.lang) if result is not None else None
    if result is not None and headline:
        lines.append(leads.render(ctx.tr, "lead-what-config", config=e(headline)))
        lead_line = dialog.ESTIMATES.answer(result, ctx.lang).lead  # built once per result and language
        lines.append(leads.render(ctx.tr, "lead-what-answer", answer=e(lead_line)))
    else:
        lines.append(ctx.tr("lead-what-none"))
    return "\n".join(lines)
