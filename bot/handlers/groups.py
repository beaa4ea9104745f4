"""Groups and supergroups: the dialog lives in private chats; in a group the bot speaks only when spoken to.

In a group a message is for the bot when it is a command for it (`/start@bot`, or `/start` without a
name, which Telegram gives every bot), mentions it (`@bot llama 3 70b int4`) or replies to one of its
messages (`bot.group_messages.addressed_to_bot`, which the gate checks before any throttling). A question so
asked gets the compact answer of inline mode (the verdict, the breakdown, the offer and a link to the
full dialog in the private chat); a command, or a mention without a question, gets "I work in private
chats" with a button to open that chat. Anything else said in a group gets no word and no work.
Nothing in a group touches the dialog state or rows: the sender may be no person at all (an anonymous
administrator: ``from`` GroupAnonymousBot, ``sender_chat`` the group; "send as channel": ``from``
Channel_Bot), and one group conversation is no user's dialog.
"""

from __future__ import annotations

from aiogram import Bot, Router
from aiogram.enums import ChatType
from aiogram.types import CallbackQuery, InlineKeyboardButton, InlineKeyboardMarkup, Message
from aiogram.utils.callback_answer import CallbackAnswer
from aiogram.utils.deep_linking import create_start_link
from aiogram_i18n import I18nContext

from bot import keyboards
from bot.config import Settings
from bot.db.work import UpdateWork
from bot.dialog import size_question
from bot.group_messages import addressed_to_bot, command_for, in_group, question_of
from bot.routing import FeatureRouter
from core.catalogue.catalog import Catalog

GROUP_SOURCE = "group"
"""The deep-link source of the private-chat links the bot posts in groups."""


async def private_only(message: Message, bot: Bot, i18n: I18nContext) -> None:
    username = (await bot.me()).username or ""
    link = await create_start_link(bot, GROUP_SOURCE)
    markup = InlineKeyboardMarkup(
        inline_keyboard=[[InlineKeyboardButton(text=i18n.get("btn-open-private"), url=link)]]
    )
    await message.reply(i18n.get("group-private-only", bot=username), reply_markup=markup)


async def on_group_message(
    message: Message, bot: Bot, i18n: I18nContext, catalog: Catalog, settings: Settings, work: UpdateWork
) -> None:
    """A message the gate let through in a group: addressed to the bot (see the module doc)."""
    me = await bot.me()
    username = me.username or ""
    text = message.text or message.caption or ""
    if not addressed_to_bot(message, username, me.id):
        return  # somebody else's conversation (the gate lets none of these through)
    if command_for(text, username) is not None:
        await private_only(message, bot, i18n)
        return
    question = question_of(message, username, me.id)
    async with work.session() as db:  # a cached Hugging Face model's config, read
        article, result = await size_question(question, catalog, i18n.get, i18n.locale, username, db)
    if result is None:
        await private_only(message, bot, i18n)
        return
    link = await create_start_link(bot, GROUP_SOURCE)
    await message.reply(
        article.text, reply_markup=keyboards.inline_keyboard(result, i18n.get, settings.contact_url, link)
    )


async def on_group_button(query: CallbackQuery, i18n: I18nContext, callback_answer: CallbackAnswer) -> None:
    """The bot puts no dialog buttons in groups: a callback from one is forged or very old."""
    callback_answer.text = i18n.get("stale-button")


def _from_group(query: CallbackQuery) -> bool:
    return query.message is not None and query.message.chat.type != ChatType.PRIVATE


def make_router() -> Router:
    """A fresh router per Dispatcher (a router attaches to one parent only). Before every other one:
    what comes from a group stops here."""
    router = FeatureRouter(name="groups")
    router.message.register(on_group_message, in_group)
    router.callback_query.register(on_group_button, _from_group)
    return router
