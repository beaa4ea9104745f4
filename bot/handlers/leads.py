"""The quote form: "✉️ Request a quote" under every result, `/contact`, and free text asking for a
manager (`bot/data/quote_intents.toml`) open it at any time. Two questions — how to reach you
(Telegram @username, a phone shared with `request_contact`, or a typed e-mail / phone) and an optional
comment — then the lead is written (bot.db.leads, de-duplicated), the user sees what was sent, and the
outbox (bot.outbox) delivers it to the sales chat. The lead carries the last answer's configuration.
Then two optional one-tap questions (bot.qualify; answered in bot.handlers.claims, as is "Беру" on
the sales card). The form's states and its end, the lead written and the user answered, are in
bot.quote_form.
"""

from __future__ import annotations

from html import escape

from aiogram import F, Router
from aiogram.filters import Command, StateFilter
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

from bot import leads
from bot.callbacks import Quote, QuoteCB, SalesCB
from bot.context import Ctx
from bot.db import leads as lead_db
from bot.db.models import CONTACT_USERNAME
from bot.dialog_state import DialogHolder, DialogState, LeadDraft
from bot.outbox import LeadOutbox
from bot.quote_form import FORM_STATES, QuoteForm, finish, sized
from bot.routing import FeatureRouter
from core.catalogue.catalog import Catalog
from core.language.answer import headline_settings
from core.language.cards import config_text

MAX_HOLD = 200
"""Characters of a reservation's typed "when and for how long" kept."""


def _config_line(ctx: Ctx, state: DialogState) -> str:
    result = sized(state.last_request, ctx.catalog)
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
    result = sized(state.last_request, ctx.catalog)
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
    router = FeatureRouter(name="leads")
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
