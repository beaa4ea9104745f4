""" "Купить или арендовать?" / "rent or buy?" (read by `core.parse.price.rent_buy_question`): the rent
of a server for the user's workload against buying it, from the operator's purchase file
(`PURCHASE_FILE`, computed by `core.inverse.purchase.rent_or_buy`), with the break-even month.

The server: the cards the question names ("…8×H100"), else the last answer's recommended offer,
else the bot asks for one. The workload: the hours a month the question says, else around the
clock (and the answer says so). Without a purchase file, or without that server in it, the answer
says it has no purchase prices and offers the quote form. Amounts in the purchase row's currency,
the user's first where the file has it.
"""

from __future__ import annotations

from pathlib import Path

from aiogram import F, Router
from aiogram.filters import StateFilter
from aiogram.types import Message

from bot import keyboards
from bot.context import Ctx
from bot.dialog_steps import Wizard
from bot.routing import FeatureRouter
from core.catalogue.catalog import Catalog
from core.catalogue.offers import RentalOffer
from core.errors import CoreError
from core.inverse.purchase import HOURS_PER_MONTH, Purchases, RentBuy, load_purchases, rent_or_buy
from core.language.cards import config_text
from core.language.words import label
from core.parse.price import RentBuyQuestion, rent_buy_question
from core.sizing.estimate import estimate

_loaded: dict[tuple[Path, float, int], Purchases] = {}  # the purchase file by path, mtime, catalogue


def purchases(path: Path | None, catalog: Catalog) -> Purchases | None:
    """The purchase file (checked at start, `bot.config.check_purchase_file`), read again when it
    changes; None without one."""
    if path is None:
        return None
    key = (path, path.stat().st_mtime, id(catalog))
    if key not in _loaded:
        _loaded.clear()
        _loaded[key] = load_purchases(path, catalog)
    return _loaded[key]


async def _offer(question: RentBuyQuestion, ctx: Ctx) -> RentalOffer | None:
    offers = ctx.catalog.offers
    if question.gpus:
        named = [o for o in offers if o.gpu in question.gpus]
        exact = [o for o in named if question.count is None or o.count == question.count]
        return next(iter(exact or named), None)
    state = ctx.dialog.state
    if state.last_request is None:
        return None
    try:
        rec = estimate(state.last_request, ctx.catalog).recommendation
    except CoreError:
        return None
    return next((o for o in offers if rec is not None and o.id == rec.offer_id), None)


def render(found: RentBuy, config: str, ctx: Ctx) -> str:
    sign = label("currency", found.currency, ctx.lang)
    hours = round(found.hours_per_month)
    lines = [
        ctx.tr("currency-rentbuy-title", config=config),
        ctx.tr(
            "currency-rentbuy-workload"
            if found.hours_per_month < HOURS_PER_MONTH
            else "currency-rentbuy-around-the-clock",
            hours=hours,
        ),
        ctx.tr("currency-rentbuy-rent", amount=round(found.rent_per_month), currency=sign),
        ctx.tr(
            "currency-rentbuy-buy",
            price=round(found.purchase_price),
            running=round(found.running_per_month),
            currency=sign,
        ),
    ]
    if found.break_even_months is None:
        lines.append(ctx.tr("currency-rentbuy-never"))
    else:
        months = round(found.break_even_months, 1)
        lines.append(ctx.tr("currency-rentbuy-break-even", months=months))
    return "\n".join(lines)


async def on_rent_buy(message: Message, ctx: Ctx) -> None:
    assert message.text is not None
    question = rent_buy_question(message.text, ctx.catalog) or RentBuyQuestion()
    hours = question.hours_per_month
    if hours is not None and not 0 < hours <= HOURS_PER_MONTH:
        await message.answer(ctx.tr("currency-rentbuy-hours", most=round(HOURS_PER_MONTH)))
        return
    offer = await _offer(question, ctx)
    if offer is None:
        await message.answer(ctx.tr("currency-rentbuy-which"))
        return
    gpu = ctx.catalog.gpus[offer.gpu]
    config = config_text(offer.count, gpu.name, ctx.lang)
    source = ctx.dialog.state.source
    markup = keyboards.sales_keyboard(
        offer, ctx.tr, ctx.settings.contact_url, campaign=source, ask_price=True
    )
    known = purchases(ctx.settings.purchase_file, ctx.catalog)
    if known is None:
        await message.answer(ctx.tr("currency-rentbuy-no-file", config=config), reply_markup=markup)
        return
    found = rent_or_buy(offer, known, hours or HOURS_PER_MONTH, ctx.currency)
    if found is None:
        await message.answer(ctx.tr("currency-rentbuy-no-row", config=config), reply_markup=markup)
        return
    await message.answer(render(found, config, ctx), reply_markup=markup)


async def is_rent_buy_question(message: Message, catalog: Catalog) -> bool:
    """Filter: free text asking "rent or buy?" (filters run before the middleware makes `ctx`)."""
    return bool(message.text) and rent_buy_question(message.text or "", catalog) is not None


def make_router() -> Router:
    """A fresh router per Dispatcher (a router attaches to one parent only)."""
    router = FeatureRouter(name="rentbuy")
    router.message.register(
        on_rent_buy,
        StateFilter(None, Wizard.task, Wizard.result),
        F.text,
        ~F.text.startswith("/"),
        is_rent_buy_question,
    )
    return router
