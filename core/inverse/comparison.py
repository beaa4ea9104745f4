"""Two (or more) cards side by side for one workload: `сравни 4090 48 и h100 для llama 3.1 70b`.

Each configuration is sized by the same `estimate` with the card named (`gpus`, `num_gpus`), so a row
says what the answer for that card alone would say; the price is that configuration's own offer.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from core.catalogue.catalog import Catalog, default_catalog
from core.catalogue.offers import RentalOffer
from core.contract import Request, Result, Verdict
from core.language.answer import headline_settings
from core.language.cards import VERDICT_ICONS, config_text, offer_price, shown_kind
from core.language.phrases import format_bytes
from core.language.words import label, normalize_lang, t
from core.model.hub import Hub
from core.sizing.estimate import estimate


@dataclass(frozen=True)
class Compared:
    gpu: str
    count: int
    result: Result
    verdict: Verdict
    offer: RentalOffer | None  # the rental offer of exactly this configuration, if there is one
    tokens_per_s: float | None


@dataclass(frozen=True)
class ComparisonAnswer:
    title: str
    rows: tuple[str, ...]
    verdict: str | None  # 'Cheaper: … · Faster: …' among the configurations that fit


def compare(
    request: Request,
    configs: Sequence[tuple[str, int]],
    catalog: Catalog | None = None,
    *,
    hub: Hub | None = None,
) -> list[Compared]:
    """Each configuration sized by `estimate`; `hub`: as `estimate` takes it (a looked-up model)."""
    catalog = catalog or default_catalog()
    out = []
    for gpu, count in configs:
        sized = request.model_copy(update={"gpus": [gpu], "num_gpus": count})
        result = estimate(sized, catalog, hub=hub)
        verdict = result.target or next(v for v in result.verdicts if v.gpu == gpu)
        offer = next((o for o in catalog.offers if (o.gpu, o.count) == (gpu, count)), None)
        speed = next((s for s in result.throughput if (s.gpu, s.count) == (gpu, count)), None)
        out.append(Compared(gpu, count, result, verdict, offer, speed.tokens_per_s if speed else None))
    return out


def comparison_answer(rows: Sequence[Compared], lang: str, currency: str | None = None) -> ComparisonAnswer:
    lang = normalize_lang(lang)
    title = headline_settings(rows[0].result, lang)
    lines = []
    for row in rows:
        v = row.verdict
        speed = f" · {t('speed-short', lang, tokens=round(row.tokens_per_s))}" if row.tokens_per_s else ""
        offer = row.offer
        price = offer_price(offer, lang, currency) if offer else t("price-not-offered", lang)
        lines.append(
            t(
                "compare-row",
                lang,
                icon=VERDICT_ICONS[v.verdict],
                config=config_text(v.count, v.gpu_name, lang),
                verdict=label("verdict", shown_kind(v), lang),
                need=format_bytes(v.bytes_per_gpu, lang),
                usable=format_bytes(v.usable_bytes, lang),
                price=price,
                speed=speed,
            )
        )
    return ComparisonAnswer(title=title, rows=tuple(lines), verdict=_verdict(rows, lang))


def _verdict(rows: Sequence[Compared], lang: str) -> str | None:
    fitting = [r for r in rows if r.verdict.verdict != "does_not_fit"]
    if not fitting:
        return None
    parts = []
    priced = [r for r in fitting if r.offer and r.offer.price_per_hour is not None]
    if priced:
        # one main currency per offers file (core.catalogue.catalog): these numbers compare
        cheap = min(priced, key=lambda r: r.offer.price_per_hour or 0.0)  # type: ignore[union-attr]
        parts.append(
            t("compare-cheapest", lang, config=config_text(cheap.count, cheap.verdict.gpu_name, lang))
        )
    timed = [r for r in fitting if r.tokens_per_s]
    speeds = sorted((r.tokens_per_s or 0.0 for r in timed), reverse=True)
    if len(timed) > 1 and speeds[0] > speeds[1]:  # launch-bound eager decode: every card alike, none faster
        fast = max(timed, key=lambda r: r.tokens_per_s or 0.0)
        parts.append(t("compare-fastest", lang, config=config_text(fast.count, fast.verdict.gpu_name, lang)))
    return " · ".join(parts) or None
