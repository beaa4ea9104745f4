"""Inline keyboards, all built from the CallbackData factories in `bot.callbacks`."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

from aiogram.types import InlineKeyboardButton, InlineKeyboardMarkup, WebAppInfo
from aiogram.utils.keyboard import InlineKeyboardBuilder
from cachetools import LRUCache

from bot import flow
from bot.callbacks import (
    TYPICAL,
    CardCB,
    Change,
    GotoCB,
    LangCB,
    LaunchCB,
    Nav,
    NavCB,
    PageCB,
    Quote,
    QuoteCB,
    SalesCB,
    StepCB,
    fits_callback,
)
from core.catalogue.catalog import Catalog
from core.catalogue.offers import RentalOffer
from core.contract import Result
from core.inverse.comparison import Compared
from core.language import words as core_texts
from core.language.cards import short_gpu_name
from core.language.words import LANGUAGES

Tr = Callable[..., str]
"""A translator: `tr(key, **args)` (aiogram-i18n's `I18nContext.get`)."""


def _label(option: flow.Option, tr: Tr, lang: str) -> str:
    if option.label is not None:
        return option.label
    if option.core_group is not None:
        return core_texts.label(option.core_group, option.value, lang)
    return tr(option.label_key or option.value)


def _nav_row(tr: Tr, *, back: bool = True) -> list[InlineKeyboardButton]:
    row = []
    if back:
        row.append(InlineKeyboardButton(text=tr("btn-back"), callback_data=NavCB(action=Nav.BACK).pack()))
    row.append(InlineKeyboardButton(text=tr("btn-restart"), callback_data=NavCB(action=Nav.RESTART).pack()))
    return row


def step_keyboard(
    step: flow.Step,
    answers: flow.Answers,
    catalog: Catalog,
    tr: Tr,
    lang: str,
    *,
    page: int = 0,
    options: Sequence[flow.Option] | None = None,
) -> InlineKeyboardMarkup:
    """The buttons of a step: its options (paged; a model family on rows of its own), "typical", then
    Back / Start over. The same buttons are built once per language (`STEP_KEYBOARDS`)."""
    choices = list(options if options is not None else step.options(answers, catalog))
    pages = flow.paginate(choices) if options is None else [choices]
    page = min(max(page, 0), len(pages) - 1)
    key = (step.name, tuple(pages[page]), page, len(pages), lang)
    if (markup := _step_keyboards.get(key)) is not None:  # a hit is the most recently used
        return markup
    markup = _step_keyboards[key] = _build_step_keyboard(step, pages, page, tr, lang)
    return markup


STEP_KEYBOARDS = 4096
"""Step keyboards kept (least recently used dropped): a step's buttons depend on the step, the
options shown (a model's precisions, a page of models) and the language, so a crowd walking the
dialog shares a few hundred; building one is ~0.3 ms of aiogram's builder and pydantic models. A
kept markup is only ever read (serialised into each call)."""
_step_keyboards: LRUCache[tuple[Any, ...], InlineKeyboardMarkup] = LRUCache(STEP_KEYBOARDS)


def _build_step_keyboard(
    step: flow.Step, pages: list[list[flow.Option]], page: int, tr: Tr, lang: str
) -> InlineKeyboardMarkup:
    builder = InlineKeyboardBuilder()
    for run in flow.groups(pages[page]):  # a model family starts its own row
        buttons = [
            InlineKeyboardButton(text=_label(o, tr, lang), callback_data=data.pack())
            for o in run
            if fits_callback(data := StepCB(step=step.name, value=o.value))
        ]
        for i in range(0, len(buttons), step.row_width):
            builder.row(*buttons[i : i + step.row_width])
    if len(pages) > 1:
        nav = []
        if page > 0:
            nav.append(
                InlineKeyboardButton(text=tr("btn-prev-page"), callback_data=PageCB(page=page - 1).pack())
            )
        if page < len(pages) - 1:
            nav.append(
                InlineKeyboardButton(text=tr("btn-next-page"), callback_data=PageCB(page=page + 1).pack())
            )
        builder.row(*nav)
    if step.typical:
        builder.row(
            InlineKeyboardButton(
                text=tr("btn-typical"), callback_data=StepCB(step=step.name, value=TYPICAL).pack()
            )
        )
    if step.name != "task":
        builder.row(*_nav_row(tr))
    return builder.as_markup()


def other_task_keyboard(
    rent: RentalOffer | None, tr: Tr, contact_url: str, *, campaign: str | None = None
) -> InlineKeyboardMarkup:
    """Under the "other task" note: rent, request a quote (the form), Back / Start over."""
    rows = sales_rows(rent, tr, contact_url, campaign=campaign, ask_price=False)
    return InlineKeyboardMarkup(inline_keyboard=[*rows, _nav_row(tr)])


_SALES_DATA = SalesCB().pack()


def sales_rows(
    rent: RentalOffer | None, tr: Tr, contact_url: str, *, campaign: str | None, ask_price: bool
) -> list[list[InlineKeyboardButton]]:
    """The rent button (`rent`'s page, UTM-tagged; a contact link without one) and the quote form's:
    "Ask for the price" where a price shown is on request (`ask_price`), else "Request a quote"."""
    if rent is not None:
        url = with_utm(rent.url, campaign=campaign, content=rent.id)
        gpu = short_gpu_name(_gpu_name(rent.gpu))
        first = InlineKeyboardButton(text=tr("btn-rent", gpu=gpu, count=rent.count), url=url)
    else:
        first = InlineKeyboardButton(text=tr("btn-contact"), url=contact_url)
    label = tr("btn-ask-price" if ask_price else "btn-quote")
    quote = InlineKeyboardButton(text=label, callback_data=_SALES_DATA)
    return [[first], [quote]]


def sales_keyboard(
    rent: RentalOffer | None, tr: Tr, contact_url: str, *, campaign: str | None, ask_price: bool
) -> InlineKeyboardMarkup:
    return InlineKeyboardMarkup(
        inline_keyboard=sales_rows(rent, tr, contact_url, campaign=campaign, ask_price=ask_price)
    )


def comparison_keyboard(
    rows: Sequence[Compared], tr: Tr, contact_url: str, *, campaign: str | None
) -> InlineKeyboardMarkup:
    """Under a comparison: the cheapest priced offer among the cards that fit (else the first that
    fits, else the first offer compared; never a sold-out one), and the quote form."""
    free = [(r, r.offer) for r in rows if r.offer is not None and r.offer.availability != "sold_out"]
    offers = [o for _, o in free]
    fitting = [o for r, o in free if r.verdict.verdict != "does_not_fit"]
    priced = [o for o in fitting if o.price_per_hour is not None and o.availability == "available"]
    if priced:
        rent: RentalOffer | None = min(priced, key=lambda o: o.price_per_hour or 0.0)
    else:
        rent = next(iter(fitting or offers), None)
    ask_price = rent is None or rent.price_per_hour is None
    return sales_keyboard(rent, tr, contact_url, campaign=campaign, ask_price=ask_price)


def first_offer(catalog: Catalog) -> RentalOffer | None:
    """The offer a rent button shows when no workload picks one: the cheapest priced, else the first
    (a sold-out one never; `bot.db.availability`)."""
    free = [o for o in catalog.offers if o.availability != "sold_out"]
    priced = [o for o in free if o.price_per_hour is not None and o.availability == "available"]
    if priced:
        return min(priced, key=lambda o: o.price_per_hour or 0.0)
    return next(iter(free), None)


def _gpu_name(gpu: str) -> str:
    from core.catalogue.catalog import default_catalog  # GPUs come from the shipped catalogue only

    spec = default_catalog().gpus.get(gpu)
    return spec.name if spec else gpu


def error_keyboard(tr: Tr) -> InlineKeyboardMarkup:
    return InlineKeyboardMarkup(inline_keyboard=[_nav_row(tr)])


# Which step the result's workload button (change context / sequence / resolution) opens for each
# task; its label is `btn-change-<step>`.
WORKLOAD_STEP: dict[str, Change] = {
    "inference": Change.CONTEXT_LENGTH,
    "finetune": Change.SEQ_LEN,
    "pretrain": Change.SEQ_LEN,
    "image": Change.RESOLUTION,
    "video": Change.RESOLUTION,
}


UTM_CAMPAIGN_DIRECT = "direct"
"""utm_campaign of users who came without a deep-link source."""


def with_utm(url: str, *, campaign: str | None, content: str) -> str:
    """The offer URL tagged for the company's web analytics (its own query parameters kept; utm_* ones
    already there are replaced): utm_source=telegram, utm_medium=bot, utm_campaign=<link source>,
    utm_content=<offer id>."""
    parts = urlsplit(url)
    query = [(k, v) for k, v in parse_qsl(parts.query, keep_blank_values=True) if not k.startswith("utm_")]
    query += [
        ("utm_source", "telegram"),
        ("utm_medium", "bot"),
        ("utm_campaign", campaign or UTM_CAMPAIGN_DIRECT),
        ("utm_content", content),
    ]
    return urlunsplit(parts._replace(query=urlencode(query)))


def shown_offer(result: Result) -> str | None:
    """The id of the offer whose rent button a result shows (None: the contact button instead)."""
    rec = result.recommendation
    return rec.offer_id if rec is not None and rec.offer_id is not None and rec.url else None


def offer_button(
    result: Result, tr: Tr, contact_url: str, *, campaign: str | None = None
) -> InlineKeyboardButton:
    """The rental offer of the recommended configuration (UTM-tagged, `campaign`: the link source),
    or "contact us" when we do not rent it."""
    rec = result.recommendation
    if rec is not None and rec.url and (offer_id := shown_offer(result)) is not None:
        gpu = short_gpu_name(rec.gpu_name)
        url = with_utm(rec.url, campaign=campaign, content=offer_id)
        return InlineKeyboardButton(text=tr("btn-rent", gpu=gpu, count=rec.count), url=url)
    return InlineKeyboardButton(text=tr("btn-contact"), url=contact_url)


def quote_button(tr: Tr) -> InlineKeyboardButton:
    return InlineKeyboardButton(text=tr("btn-quote"), callback_data=_QUOTE_DATA)


def asks_price(result: Result) -> bool:
    """Whether the recommended offer has no price: its quote button then asks for it."""
    rec = result.recommendation
    unpriced = rec is not None and rec.price_per_hour is None and rec.price_per_month is None
    return rec is not None and rec.in_offers and unpriced


def inline_keyboard(result: Result | None, tr: Tr, contact_url: str, bot_link: str) -> InlineKeyboardMarkup:
    """Under an inline-mode answer (URL buttons only: there is no dialog behind an inline message):
    the offer (none for the "how to use" article), then the full dialog in the bot."""
    builder = InlineKeyboardBuilder()
    if result is not None:
        builder.row(offer_button(result, tr, contact_url))
    builder.row(InlineKeyboardButton(text=tr("btn-open-bot"), url=bot_link))
    return builder.as_markup()


# The result's callback data, packed once: every answer carries these buttons.
_GOTO_DATA = {change: GotoCB(step=change).pack() for change in Change}
_DETAILS_DATA = NavCB(action=Nav.DETAILS).pack()
_QUOTE_DATA = QuoteCB(action=Quote.OPEN).pack()
_RESERVE_DATA = QuoteCB(action=Quote.RESERVE).pack()
_RESTART_DATA = NavCB(action=Nav.RESTART).pack()
_LAUNCH_DATA = LaunchCB().pack()


def result_keyboard(
    result: Result,
    answers: flow.Answers,
    tr: Tr,
    contact_url: str,
    *,
    campaign: str | None = None,
    card_switch: tuple[str, str] | None = None,
    calculator_url: str | None = None,
) -> InlineKeyboardMarkup:
    """The rental offer (or a contact button when none fits), then change precision / workload /
    method, then Details, Request a quote and Start over. `card_switch` (id, name): a card named
    without its memory was read as one card; a button sizes the same request on the other.
    `calculator_url`: the Mini App opening on this answer's request ("🎛 Калькулятор", last)."""
    task = answers.task or ""
    steps = flow.path(answers)
    changes: list[InlineKeyboardButton] = []
    if "precision" in steps:
        changes.append(
            InlineKeyboardButton(text=tr("btn-change-precision"), callback_data=_GOTO_DATA[Change.PRECISION])
        )
    workload = WORKLOAD_STEP.get(task)
    if workload in steps:
        changes.append(
            InlineKeyboardButton(text=tr(f"btn-change-{workload}"), callback_data=_GOTO_DATA[workload])
        )
    if "method" in steps:
        changes.append(
            InlineKeyboardButton(text=tr("btn-change-method"), callback_data=_GOTO_DATA[Change.METHOD])
        )
    rows = [[offer_button(result, tr, contact_url, campaign=campaign)]]
    if shown_offer(result) is not None:  # a hold request for that offer (bot.handlers.leads)
        rows[0].append(InlineKeyboardButton(text=tr("btn-reserve"), callback_data=_RESERVE_DATA))
    if card_switch is not None:
        gpu, name = card_switch
        data = CardCB(gpu=gpu).pack()
        rows.append([InlineKeyboardButton(text=tr("btn-card-switch", gpu=name), callback_data=data)])
    if changes:  # two a row
        rows += [changes[:2], *([changes[2:]] if len(changes) > 2 else [])]
    if result.launch_commands:  # the command that runs what was sized (bot.handlers.launch)
        rows.append([InlineKeyboardButton(text=tr("btn-launch"), callback_data=_LAUNCH_DATA)])
    rows.append(
        [
            InlineKeyboardButton(text=tr("btn-details"), callback_data=_DETAILS_DATA),
            InlineKeyboardButton(
                text=tr("btn-ask-price" if asks_price(result) else "btn-quote"), callback_data=_QUOTE_DATA
            ),
            InlineKeyboardButton(text=tr("btn-restart"), callback_data=_RESTART_DATA),
        ]
    )
    if calculator_url is not None:
        rows.append([InlineKeyboardButton(text=tr("btn-calculator"), web_app=WebAppInfo(url=calculator_url))])
    # Built as the markup directly: aiogram's builder checks and copies each row again (a third of
    # the keyboard's time), for rows this short and fixed.
    return InlineKeyboardMarkup(inline_keyboard=rows)


def language_keyboard(tr: Tr) -> InlineKeyboardMarkup:
    builder = InlineKeyboardBuilder()
    builder.row(
        *[
            InlineKeyboardButton(text=tr(f"lang-{lang}"), callback_data=LangCB(lang=lang).pack())
            for lang in LANGUAGES
        ]
    )
    return builder.as_markup()
