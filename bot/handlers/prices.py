"""Prices: `/prices` (every offer) and free-text price questions ("сколько стоит аренда h100?",
"прайс", "how much is an H100 per hour", read by `core.parse.price`) answered with the price list
from the offers in force (`core.language.prices`), a rent button and the quote form's ("Ask for the price"
where a price listed is on request). The router comes before the quote form's free-text intents
("сколько стоит", "прайс" open the form there) and the quick answers (which would size it).
"""

from __future__ import annotations

from html import escape

from aiogram import F, Router
from aiogram.filters import Command, StateFilter
from aiogram.types import Message

from bot import keyboards
from bot.context import Ctx
from bot.dialog_steps import Wizard
from bot.routing import FeatureRouter
from core.catalogue.catalog import Catalog
from core.language.prices import PriceList, price_list
from core.parse.price import PriceQuestion, price_question, words


def render_prices(prices: PriceList) -> str:
    """The price list as Telegram HTML: the title in bold, a line per GPU, the notes in italics."""
    lines = [f"<b>{escape(prices.title)}</b>", *map(escape, prices.lines)]
    if prices.notes:
        lines += ["", *(f"<i>{escape(n)}</i>" for n in prices.notes)]
    return "\n".join(lines)


async def answer_prices(message: Message, ctx: Ctx, question: PriceQuestion | None) -> None:
    prices = price_list(question, ctx.catalog, ctx.lang, ctx.currency)
    source = ctx.dialog.state.source
    markup = keyboards.sales_keyboard(
        prices.rent, ctx.tr, ctx.settings.contact_url, campaign=source, ask_price=prices.on_request
    )
    await message.answer(render_prices(prices), reply_markup=markup)


async def cmd_prices(message: Message, ctx: Ctx) -> None:
    await answer_prices(message, ctx, None)


async def on_price_question(message: Message, ctx: Ctx) -> None:
    assert message.text is not None
    await answer_prices(message, ctx, price_question(message.text, ctx.catalog))


async def is_price_question(message: Message, catalog: Catalog) -> bool:
    """Filter: free text asking what renting costs (filters run before the middleware makes `ctx`)."""
    return bool(message.text) and price_question(message.text or "", catalog) is not None


def make_router() -> Router:
    """A fresh router per Dispatcher (a router attaches to one parent only)."""
    words()  # the price words are checked when the bot starts: a bad core/data/prices.toml stops it
    router = FeatureRouter(name="prices")
    router.message.register(cmd_prices, Command("prices"))
    router.message.register(
        on_price_question,
        StateFilter(None, Wizard.task, Wizard.result),
        F.text,
        ~F.text.startswith("/"),
        is_price_question,
    )
    return router
