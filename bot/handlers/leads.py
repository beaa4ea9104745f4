"""The quote form: "✉️ Request a quote" under every result, `/contact`, and free text asking for a
manager (`bot/data/quote_intents.toml`) open it at any time. Two questions — how to reach you
(Telegram @username, a phone shared with `request_contact`, or a typed e-mail / phone) and an optional
comment — then the lead is written (bot.db.leads, de-duplicated), the user sees what was sent, and the
outbox (bot.outbox) delivers it to the sales chat. The lead carries the last answer's configuration.
Then two optional one-tap questions (bot.qualify; answered in bot.handlers.claims, as is "Беру" on
the sales card).
"""

from __future__ import annotations

import logging
from html import escape
from typing import Any

from aiogram import F, Router
from aiogram.filters import Command, StateFilter
from aiogram.fsm.state import State, StatesGroup
from aiogram.types import (
    CallbackQuery,
    KeyboardButton,
    Message,
    ReplyKeyboardMarkup,
    ReplyKeyboardRemove,
)
from aiogram.types import User as TelegramUser
from aiogram.utils.callback_answer import CallbackAnswer
from aiogram.utils.keyboard import InlineKeyboardBuilder
from sqlalchemy.ext.asyncio import AsyncSession

from bot import dialog, leads
from bot.callbacks import Quote, QuoteCB, SalesCB
from bot.context import Ctx
from bot.db import leads as lead_db
from bot.db import repository
from bot.db.models import CONTACT_USERNAME, LEAD_RESERVATION, Lead, utc_now
from bot.dialog_state import DialogHolder, DialogState, LeadDraft
from bot.outbox import LeadOutbox
from bot.qualify import ask_need
from core.catalogue.catalog import Catalog
from core.contract import Result
from core.errors import CoreError
from core.language.answer import headline_settings
from core.language.cards import config_text

log = logging.getLogger(__name__)


class QuoteForm(StatesGroup):
    contact = State()
    comment = State()
    hold = State()  # a reservation: when and for how long, before the contact


FORM_STATES = (QuoteForm.contact.state, QuoteForm.comment.state, QuoteForm.hold.state)
MAX_HOLD = 200
"""Characters of a reservation's typed "when and for how long" kept."""


def _sized(request: dict[str, Any] | None, catalog: Catalog) -> Result | None:
    """The last answer sized again as the dialog sizes it (the catalogue in force, the Hugging Face
    models looked up; remembered, so usually not sized again); None without one."""
    if not request:
        return None
    try:
        return dialog.estimate(request, catalog)
    except CoreError:
        return None


def _config_line(ctx: Ctx, state: DialogState) -> str:
    result = _sized(state.last_request, ctx.catalog)
    if result is None:
        return ctx.tr("lead-no-config")
    config = escape(headline_settings(result, ctx.lang), quote=False)
    return leads.render(ctx.tr, "lead-config", config=config)


def _contact_keyboard(ctx: Ctx, user: TelegramUser) -> ReplyKeyboardMarkup:
    rows = []
    if user.username:
        rows.append([KeyboardButton(text=ctx.tr("btn-lead-username", username=user.username))])
    rows.append([KeyboardButton(text=ctx.tr("btn-lead-phone"), request_contact=True)])
    return ReplyKeyboardMarkup(keyboard=rows, resize_keyboard=True, one_time_keyboard=True)


async def open_form(
    ctx: Ctx,
    chat_id: int,
    user: TelegramUser,
    message: Message | CallbackQuery,
    reserve: tuple[str, str] | None = None,
) -> None:
    """Ask how to reach the user; the state to return to and the dialog are kept in the draft.
    `reserve` (offer id, its configuration): a reservation, asked first when and for how long."""
    state = ctx.dialog.state
    current = await ctx.state.get_state()
    back = state.lead.back_state if state.lead is not None and current in FORM_STATES else current
    await ctx.work.write(lead_db.mark_quote_requested, state.dialog_id)
    offer = reserve[0] if reserve else None
    ctx.dialog.update(lead=LeadDraft(back_state=back, dialog_id=state.dialog_id, reserve_offer=offer))
    assert message.bot is not None
    if reserve is not None:
        await ctx.state.set_state(QuoteForm.hold)
        builder = InlineKeyboardBuilder()
        for choice in (Quote.HOURS, Quote.MONTHS):
            builder.button(text=ctx.tr(f"btn-hold-{choice}"), callback_data=QuoteCB(action=choice).pack())
        builder.adjust(1)
        config = escape(reserve[1], quote=False)
        text = leads.render(ctx.tr, "reserve-ask-hold", config=config, offer=escape(reserve[0]))
        await message.bot.send_message(chat_id, text, reply_markup=builder.as_markup())
        return
    await _ask_contact(ctx, chat_id, user, message, state)


async def _ask_contact(
    ctx: Ctx, chat_id: int, user: TelegramUser, message: Message | CallbackQuery, state: DialogState
) -> None:
    await ctx.state.set_state(QuoteForm.contact)
    assert message.bot is not None
    await message.bot.send_message(
        chat_id,
        leads.render(ctx.tr, "lead-ask-contact", config=_config_line(ctx, state)),
        reply_markup=_contact_keyboard(ctx, user),
    )


async def on_quote_button(query: CallbackQuery, ctx: Ctx, callback_answer: CallbackAnswer) -> None:
    state = ctx.dialog.state
    if not isinstance(query.message, Message) or query.message.message_id != state.msg_id:
        callback_answer.text = ctx.tr("stale-button")
        return
    await open_form(ctx, query.message.chat.id, query.from_user, query)


async def on_reserve_button(query: CallbackQuery, ctx: Ctx, callback_answer: CallbackAnswer) -> None:
    """ "📅 Reserve" under a result: a hold request for the offer the last answer recommends (sized
    again: with the availability in force now, so a server taken since is not the one held)."""
    state = ctx.dialog.state
    if not isinstance(query.message, Message) or query.message.message_id != state.msg_id:
        callback_answer.text = ctx.tr("stale-button")
        return
    result = _sized(state.last_request, ctx.catalog)
    rec = result.recommendation if result is not None else None
    if rec is None or rec.offer_id is None:
        await open_form(ctx, query.message.chat.id, query.from_user, query)
        return
    config = config_text(rec.count, rec.gpu_name, ctx.lang)
    await open_form(ctx, query.message.chat.id, query.from_user, query, reserve=(rec.offer_id, config))


async def on_hold_choice(
    query: CallbackQuery, ctx: Ctx, callback_data: QuoteCB, callback_answer: CallbackAnswer
) -> None:
    if await ctx.state.get_state() != QuoteForm.hold.state or not isinstance(query.message, Message):
        callback_answer.text = ctx.tr("stale-button")
        return
    await query.message.edit_reply_markup(reply_markup=None)
    hold = ctx.tr(f"btn-hold-{callback_data.action}")
    await _held(ctx, query.message.chat.id, query.from_user, query, hold)


async def on_hold_text(message: Message, ctx: Ctx) -> None:
    assert message.text is not None and message.from_user is not None
    hold = leads.clip(leads.clean(message.text), MAX_HOLD) or ctx.tr(f"btn-hold-{Quote.HOURS}")
    await _held(ctx, message.chat.id, message.from_user, message, hold)


async def _held(
    ctx: Ctx, chat_id: int, user: TelegramUser, event: Message | CallbackQuery, hold: str
) -> None:
    """The reservation's when and how long taken: on to the contact, as the quote form asks it."""
    state = ctx.dialog.state
    ctx.dialog.update(lead=(state.lead or LeadDraft()).model_copy(update={"hold": hold}))
    await _ask_contact(ctx, chat_id, user, event, state)


async def cmd_contact(message: Message, ctx: Ctx) -> None:
    assert message.from_user is not None
    await open_form(ctx, message.chat.id, message.from_user, message)


async def on_intent(message: Message, ctx: Ctx) -> None:
    assert message.from_user is not None
    await open_form(ctx, message.chat.id, message.from_user, message)


async def is_intent(message: Message, dialog: DialogHolder, catalog: Catalog) -> bool:
    """Filter: free text asking for a manager or a quote (not a question the estimator answers).
    (Filters run before the inner middleware that makes `ctx`, after the one reading `dialog`.)"""
    if not message.text or message.text.startswith("/"):
        return False
    previous = dialog.state.previous_request()
    return leads.wants_quote(message.text, catalog, previous)


async def on_contact_text(message: Message, ctx: Ctx) -> None:
    assert message.text is not None and message.from_user is not None
    user = message.from_user
    if user.username and message.text == ctx.tr("btn-lead-username", username=user.username):
        contact: leads.Contact | None = leads.Contact(CONTACT_USERNAME, f"@{user.username}")
    else:
        contact = leads.read_contact(message.text)
    if contact is None:
        await message.answer(ctx.tr("lead-bad-contact"), reply_markup=_contact_keyboard(ctx, user))
        return
    await _ask_comment(message, ctx, contact)


async def on_contact_shared(message: Message, ctx: Ctx) -> None:
    assert message.contact is not None and message.from_user is not None
    shared = message.contact
    contact = leads.read_phone(shared.phone_number) if shared.user_id == message.from_user.id else None
    if contact is None:
        await message.answer(
            ctx.tr("lead-foreign-contact"), reply_markup=_contact_keyboard(ctx, message.from_user)
        )
        return
    await _ask_comment(message, ctx, contact)


async def on_contact_other(message: Message, ctx: Ctx) -> None:
    assert message.from_user is not None
    await message.answer(ctx.tr("lead-bad-contact"), reply_markup=_contact_keyboard(ctx, message.from_user))


async def _ask_comment(message: Message, ctx: Ctx, contact: leads.Contact) -> None:
    state = ctx.dialog.state
    draft = (state.lead or LeadDraft()).model_copy(
        update={"contact_kind": contact.kind, "contact": contact.value}
    )
    ctx.dialog.update(lead=draft)
    await ctx.state.set_state(QuoteForm.comment)
    builder = InlineKeyboardBuilder()
    builder.button(text=ctx.tr("btn-lead-skip"), callback_data=QuoteCB(action=Quote.SKIP).pack())
    await message.answer(ctx.tr("lead-ask-comment"), reply_markup=builder.as_markup())


async def on_comment(message: Message, ctx: Ctx, lead_outbox: LeadOutbox | None = None) -> None:
    assert message.text is not None and message.from_user is not None
    await finish(ctx, message.chat.id, message.from_user, message, message.text, lead_outbox)


async def on_skip(
    query: CallbackQuery, ctx: Ctx, callback_answer: CallbackAnswer, lead_outbox: LeadOutbox | None = None
) -> None:
    if await ctx.state.get_state() != QuoteForm.comment.state or not isinstance(query.message, Message):
        callback_answer.text = ctx.tr("stale-button")
        return
    await query.message.edit_reply_markup(reply_markup=None)
    await finish(ctx, query.message.chat.id, query.from_user, query, None, lead_outbox)


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
    result = _sized(request, ctx.catalog)
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
        db_user = await repository.get_user(session, ctx.telegram_id)
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


async def cmd_cancel_form(message: Message, ctx: Ctx) -> None:
    """/cancel inside the form: the form goes, the dialog it was opened from stays."""
    state = ctx.dialog.state
    back = state.lead.back_state if state.lead is not None else None
    ctx.dialog.update(lead=None)
    await ctx.state.set_state(back if back not in FORM_STATES else None)
    await message.answer(ctx.tr("lead-cancelled"), reply_markup=ReplyKeyboardRemove())


async def on_sales_quote(query: CallbackQuery, ctx: Ctx) -> None:
    """ "Ask for a price" under the price list, a comparison or the "other task" note: the form, with the
    last answer's configuration when there is one."""
    if not isinstance(query.message, Message):
        return
    await open_form(ctx, query.message.chat.id, query.from_user, query)


def make_router() -> Router:
    """A fresh router per Dispatcher; before the commands' and the wizard's (its states and intents
    come first), after the groups' (nothing from a group reaches it)."""
    router = Router(name="leads")
    text = F.text & ~F.text.startswith("/")
    router.message.register(cmd_cancel_form, StateFilter(*FORM_STATES), Command("cancel"))
    router.message.register(cmd_contact, Command("contact"))
    router.message.register(on_contact_shared, StateFilter(QuoteForm.contact), F.contact)
    router.message.register(on_contact_text, StateFilter(QuoteForm.contact), text)
    router.message.register(on_contact_other, StateFilter(QuoteForm.contact), ~F.text)
    router.message.register(on_comment, StateFilter(QuoteForm.comment), text)
    router.message.register(on_hold_text, StateFilter(QuoteForm.hold), text)
    router.message.register(on_intent, text, is_intent)
    router.callback_query.register(on_quote_button, QuoteCB.filter(F.action == Quote.OPEN))
    router.callback_query.register(on_skip, QuoteCB.filter(F.action == Quote.SKIP))
    router.callback_query.register(on_reserve_button, QuoteCB.filter(F.action == Quote.RESERVE))
    router.callback_query.register(on_hold_choice, QuoteCB.filter(F.action.in_({Quote.HOURS, Quote.MONTHS})))
    router.callback_query.register(on_sales_quote, SalesCB.filter())
    return router
