"""The price list: the rental offers (`Catalog.offers`, the offers file), a line per GPU, for a
price question (`core.parse.price`) or `/prices`. Prices come from the file only: an hourly price
("from" where it is a starting price), a monthly one where the file has it, "on request" where it has
none — never computed or guessed. Plain text in the user's language; layouts escape it.
"""

from __future__ import annotations

from dataclasses import dataclass

from core.catalogue.catalog import Catalog
from core.catalogue.offers import RentalOffer
from core.language.cards import offer_price, short_gpu_name
from core.language.words import normalize_lang, t
from core.parse.price import PriceQuestion


@dataclass(frozen=True)
class PriceList:
    title: str
    lines: tuple[str, ...]  # a line per GPU
    notes: tuple[str, ...]  # what was asked but is not offered, what "from" and "on request" mean
    offers: tuple[RentalOffer, ...]  # the offers listed, in the file's order
    rent: RentalOffer | None  # the offer a "rent" button opens: the cheapest priced listed, else the first
    on_request: bool  # some offer listed has no price


def price_list(
    question: PriceQuestion | None, catalog: Catalog, lang: str, currency: str | None = None
) -> PriceList:
    """The offers `question` asks about (None, or no card named: all of them); prices in `currency`
    where the operator gave them in it. The rent button's "cheapest" compares the main currency's
    prices only (one for the whole file: `core.catalogue.catalog`)."""
    lang = normalize_lang(lang)
    question = question or PriceQuestion()
    notes: list[str] = []
    offered = {o.gpu for o in catalog.offers}
    named = [g for g in question.gpus if g in offered]
    for gpu in question.gpus:
        if gpu not in offered:
            notes.append(t("prices-not-offered", lang, gpu=_gpu(catalog, gpu)))
    offers = [o for o in catalog.offers if not named or o.gpu in named]
    if question.count is not None and named:
        exact = [o for o in offers if o.count == question.count]
        for gpu in named:
            if not any(o.gpu == gpu for o in exact):
                counts = _counts([o for o in offers if o.gpu == gpu])
                config = _config(question.count, catalog, gpu, lang)
                notes.append(t("prices-no-count", lang, config=config, counts=counts))
        offers = exact or offers
    lines = tuple(
        _gpu_line(g, [o for o in offers if o.gpu == g], catalog, lang, currency) for g in _gpus(offers)
    )
    priced = [o for o in offers if _priced(o)]
    if question.monthly and not any(o.price_per_month for o in offers):
        notes.append(t("prices-no-monthly", lang))
    if any(o.price_is_from for o in priced):
        notes.append(t("prices-from-note", lang))
    on_request = any(not _priced(o) and o.availability != "sold_out" for o in offers)
    if on_request:
        notes.append(t("prices-on-request-note", lang))
    if any(o.availability == "sold_out" for o in offers):
        notes.append(t("prices-sold-out-note", lang))
    free = [o for o in offers if o.availability != "sold_out"]
    rent = min(priced, key=lambda o: o.price_per_hour or 0.0) if priced else (free[0] if free else None)
    title = (
        t("prices-title-gpu", lang, gpu=", ".join(_gpu(catalog, g) for g in named))
        if named
        else t("prices-title", lang)
    )
    return PriceList(title, lines, tuple(notes), tuple(offers), rent, on_request)


def render_price_list(prices: PriceList) -> str:
    """Plain text (the CLI): the title, a line per GPU, the notes."""
    return "\n".join([prices.title, *prices.lines, *([""] if prices.notes else []), *prices.notes])


def _gpu(catalog: Catalog, gpu: str) -> str:
    spec = catalog.gpus.get(gpu)
    return short_gpu_name(spec.name) if spec else gpu


def _config(count: int, catalog: Catalog, gpu: str, lang: str) -> str:
    return t("config", lang, count=count, gpu=_gpu(catalog, gpu))


def _gpus(offers: list[RentalOffer]) -> list[str]:
    return list(dict.fromkeys(o.gpu for o in offers))


def _counts(offers: list[RentalOffer]) -> str:
    return ", ".join(f"{o.count}×" for o in offers)


def _priced(o: RentalOffer) -> bool:
    """A price the user can act on: given in the file, and the server free (not on request, not taken)."""
    has_price = o.price_per_hour is not None or o.price_per_month is not None
    return o.availability == "available" and o.currency is not None and has_price


def _gpu_line(gpu: str, offers: list[RentalOffer], catalog: Catalog, lang: str, currency: str | None) -> str:
    """'• RTX 4090 48 GB: 1× — from 149 ₽/h; 2×, 4× — price on request; 8× — taken now'."""
    items = []
    unpriced = []
    taken = [o for o in offers if o.availability == "sold_out"]
    for o in offers:
        if o.availability == "sold_out":
            continue
        if not _priced(o) or o.currency is None:
            unpriced.append(o)
            continue
        price = offer_price(o, lang, currency)
        items.append(t("prices-item", lang, counts=f"{o.count}×", price=price))
    if unpriced:
        items.append(t("prices-item", lang, counts=_counts(unpriced), price=t("price-on-request", lang)))
    if taken:
        items.append(t("prices-item", lang, counts=_counts(taken), price=t("prices-sold-out", lang)))
    return t("prices-gpu", lang, gpu=_gpu(catalog, gpu), items="; ".join(items))
