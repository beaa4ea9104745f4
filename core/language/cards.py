"""The words of a GPU configuration: its short name and count, its price, its verdict."""

from __future__ import annotations

from functools import lru_cache

from core.catalogue.catalog import default_catalog
from core.catalogue.offers import RentalOffer
from core.contract import Recommendation, Verdict
from core.language.phrases import format_bytes
from core.language.words import label, t

VERDICT_ICONS = {"fits": "✅", "tight": "⚠️", "does_not_fit": "❌"}


def short_gpu_name(name: str) -> str:
    """'NVIDIA GeForce RTX 4090 48 GB (modded)' → 'RTX 4090 48 GB': the catalogue's `short_name`, what
    people call the card (GPUs come from the shipped catalogue only; OFFERS_FILE replaces offers)."""
    return _short_names().get(name, name)


@lru_cache(maxsize=1)
def _short_names() -> dict[str, str]:
    return {g.name: g.short_name or g.name for g in default_catalog().gpus.values()}


def config_text(count: int, gpu_name: str, lang: str) -> str:
    return t("config", lang, count=count, gpu=short_gpu_name(gpu_name))


def price_of(rec: Recommendation, lang: str, currency: str | None = None) -> str:
    """The recommendation's price, in `currency` where the operator priced the offer in it, else in
    the offer's main currency."""
    if not rec.in_offers:
        return t("price-not-offered", lang)
    hour, month, shown = rec.price_per_hour, rec.price_per_month, rec.currency
    if currency is not None and currency in rec.prices:
        (hour, month), shown = rec.prices[currency], currency
    return hourly_price(hour, shown, lang, is_from=rec.price_is_from, monthly=month)


def offer_price(offer: RentalOffer, lang: str, currency: str | None = None) -> str:
    """`price_of` for an offer of the file."""
    hour, month, shown = offer.price_in(currency)
    return hourly_price(hour, shown, lang, is_from=offer.price_is_from, monthly=month)


def hourly_price(
    price: float | None,
    currency: str | None,
    lang: str,
    *,
    is_from: bool = False,
    monthly: float | None = None,
) -> str:
    """'149 ₽/ч' ('от 149 ₽/ч' for a starting price; '· 80 000 ₽/мес' where a monthly price is known),
    or 'price on request' for an offer without a price."""
    if currency is None or (price is None and monthly is None):
        return t("price-on-request", lang)
    sign = label("currency", currency, lang)
    parts = []
    if price is not None:
        key = "price-from-per-hour" if is_from else "price-per-hour"
        parts.append(t(key, lang, price=price, currency=sign))
    if monthly is not None:
        parts.append(t("price-per-month", lang, price=monthly, currency=sign))
    return " · ".join(parts)


def shown_kind(v: Verdict) -> str:
    """The verdict as words tell it: a configuration that does not fit although its need is within
    the card (beyond the tight band: no margin left) "does not fit reliably" (`no_margin`)."""
    if v.verdict == "does_not_fit" and v.bytes_per_gpu <= v.usable_bytes:
        return "no_margin"
    return v.verdict


def verdict_line(v: Verdict, lang: str) -> str:
    """'✅ 1× RTX 4090 48 GB: fits, 26.9 of 48.0 GB'."""
    return t(
        "answer-verdict",
        lang,
        icon=VERDICT_ICONS[v.verdict],
        config=config_text(v.count, v.gpu_name, lang),
        verdict=label("verdict", shown_kind(v), lang),
        need=format_bytes(v.bytes_per_gpu, lang),
        usable=format_bytes(v.usable_bytes, lang),
    )
