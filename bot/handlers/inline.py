"""Inline mode: `@bot llama 3.1 70b int4 32k` typed in any chat answers with one article, the verdict in
its title and the breakdown in its description; picked, it posts a compact answer with the rental offer
and a link to the full dialog in the bot. An empty query, or one the core cannot size, gets a single
"how to use" article instead. No dialog is kept: an inline message has no conversation behind it.
"""

from __future__ import annotations

import logging

from aiogram import Bot, Router
from aiogram.types import (
    InlineQuery,
    InlineQueryResultArticle,
    InlineQueryResultsButton,
    InputTextMessageContent,
)
from aiogram.utils.deep_linking import create_start_link
from aiogram_i18n import I18nContext

from bot import keyboards
from bot.config import Settings
from bot.context import user_currency
from bot.db.middleware import INLINE_SOURCE
from bot.db.models import User
from bot.db.work import UpdateWork
from bot.dialog import size_question
from bot.routing import FeatureRouter
from core.catalogue.catalog import Catalog

log = logging.getLogger(__name__)

CACHE_TIME_S = 30  # the catalogue and offers can change; a stale answer should not live long


async def on_inline_query(
    query: InlineQuery,
    bot: Bot,
    i18n: I18nContext,
    catalog: Catalog,
    settings: Settings,
    work: UpdateWork,
    db_user: User | None = None,
) -> None:
    tr, lang = i18n.get, i18n.locale
    bot_link = await create_start_link(bot, INLINE_SOURCE)
    username = (await bot.me()).username or ""
    currency = user_currency(db_user, query.from_user.language_code, settings.default_currency)
    async with work.session() as db:  # a cached Hugging Face model's config, read
        article, result = await size_question(query.query, catalog, tr, lang, username, db, currency)
    await query.answer(
        [
            InlineQueryResultArticle(
                id="estimate" if result is not None else "help",
                title=article.title,
                description=article.description,
                input_message_content=InputTextMessageContent(message_text=article.text),
                reply_markup=keyboards.inline_keyboard(result, tr, settings.contact_url, bot_link),
            )
        ],
        cache_time=CACHE_TIME_S,
        is_personal=True,  # in the user's language
        button=InlineQueryResultsButton(text=tr("btn-open-bot"), start_parameter=INLINE_SOURCE),
    )


def make_router() -> Router:
    """A fresh router per Dispatcher (a router attaches to one parent only)."""
    router = FeatureRouter(name="inline")
    router.inline_query.register(on_inline_query)
    return router
