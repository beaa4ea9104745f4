"""The answer's lead and the offers it names, in the user's language: line 1, the decision (does it
fit, on which card, at what price and speed), and line 2, the memory asked per card and what holds
it; `Offer`, a configuration to rent as the lead and the buttons show it; the tight line when the
ranking led with a tight priced offer (how to keep it safe, the comfortable one); the speed line of
the details. Plain text; `core.language.answer.build_answer` puts them on the `Answer`.
"""

from __future__ import annotations

from dataclasses import dataclass

from core.contract import Recommendation, Result, Throughput, Verdict
from core.language.cards import VERDICT_ICONS, config_text, price_of, shown_kind
from core.language.phrases import format_bytes, verdict_of
from core.language.words import label, t


@dataclass(frozen=True)
class Offer:
    """A configuration to rent (or, with `in_offers` false, one we do not rent)."""

    gpu: str
    gpu_name: str
    count: int
    config: str
    price: str
    url: str | None
    in_offers: bool
    offer_id: str | None
    price_per_hour: float | None
    speed: str | None


def lead_and_need(result: Result, target: Verdict | None, offer: Offer | None, lang: str) -> tuple[str, str]:
    """Line 1, the decision, and line 2: the user's cards first where they are not the offer's (then
    where to rent), else the offer and the memory it holds per card; with no offer, what to try."""
    rec = result.recommendation
    total = format_bytes(result.total_bytes, lang)
    if target is not None and (rec is None or (target.gpu, target.count) != (rec.gpu, rec.count)):
        own = t(
            f"lead-own-{shown_kind(target)}",
            lang,
            icon=VERDICT_ICONS[target.verdict],
            config=config_text(target.count, target.gpu_name, lang),
            need=format_bytes(target.bytes_per_gpu, lang),
            usable=format_bytes(target.usable_bytes, lang),
        )
        if offer is None:
            return own, t("lead-nothing-fits", lang, need=total)
        return own, _offer_sentence("lead-rent", offer, lang)
    if offer is None or rec is None:
        return t("lead-none", lang, need=total), t("lead-none-hint", lang)
    verdict = verdict_of(rec, result)
    kind = verdict.verdict if verdict else rec.verdict
    key = "lead-fits" if offer.in_offers else "lead-fits-not-offered"
    asked = result.request.num_gpus
    if asked > 1 and not result.request.gpus:  # a count asked without a card type: said, not ignored
        same_card = next((v for v in result.verdicts if (v.gpu, v.count) == (rec.gpu, asked)), None)
        if rec.count < asked:
            key = "lead-fits-fewer" if offer.in_offers else "lead-fits-fewer-not-offered"
        elif same_card is not None and same_card.verdict == "does_not_fit":
            key = "lead-fits-more" if offer.in_offers else "lead-fits-more-not-offered"
    lead = _offer_sentence(
        key, offer, lang, icon=VERDICT_ICONS[kind], verdict=label("lead-verdict", kind, lang), asked=asked
    )
    need_bytes = rec.bytes_per_gpu
    scale = need_bytes / result.total_bytes if result.total_bytes else 1.0  # the range, per card of it
    need = t(
        "lead-need",
        lang,
        need=format_bytes(need_bytes, lang),
        usable=format_bytes(verdict.usable_bytes if verdict else need_bytes, lang),
        cards=rec.count,
        low=format_bytes(result.range.low_bytes * scale, lang),
        high=format_bytes(result.range.high_bytes * scale, lang),
    )
    return lead, need


def _offer_sentence(key: str, offer: Offer, lang: str, **extra: str | int) -> str:
    parts = [t(key, lang, config=offer.config, **extra)]
    if offer.in_offers:
        parts.append(offer.price)
    if offer.speed:
        parts.append(offer.speed)
    return " · ".join(parts)


def offer_of(rec: Recommendation, result: Result, lang: str, currency: str | None = None) -> Offer:
    speed = _throughput_of(result, rec.gpu, rec.count)
    return Offer(
        gpu=rec.gpu,
        gpu_name=rec.gpu_name,
        count=rec.count,
        config=config_text(rec.count, rec.gpu_name, lang),
        price=price_of(rec, lang, currency),
        url=rec.url,
        in_offers=rec.in_offers,
        offer_id=rec.offer_id,
        price_per_hour=rec.price_per_hour,
        speed=t("speed-short", lang, tokens=round(speed.tokens_per_s)) if speed else None,
    )


def _throughput_of(result: Result, gpu: str, count: int) -> Throughput | None:
    return next((s for s in result.throughput if (s.gpu, s.count) == (gpu, count)), None)


def speed_line(result: Result, rec: Recommendation | None, lang: str) -> str | None:
    """The offer's speed (else the first sized), per user and in total, and the KV cache's capacity
    where it was sized; None when no speed was."""
    pick = (_throughput_of(result, rec.gpu, rec.count) if rec else None) or next(
        iter(result.throughput), None
    )
    if pick is None:
        return None
    name = next(
        (v.gpu_name for v in [*result.verdicts] if v.gpu == pick.gpu), rec.gpu_name if rec else pick.gpu
    )
    line = t(
        "answer-speed-many" if result.request.concurrency > 1 else "answer-speed",
        lang,
        config=config_text(pick.count, name, lang),
        per_user=round(pick.tokens_per_s),
        total=round(pick.aggregate_tokens_per_s),
    )
    cap = result.serving_capacity
    if cap is None:
        return line
    gpu_name = next((v.gpu_name for v in result.verdicts if v.gpu == cap.gpu), cap.gpu)
    capacity = t(
        "answer-kv-capacity",
        lang,
        config=config_text(cap.count, gpu_name, lang),
        tokens=cap.kv_cache_tokens,
        concurrency=cap.max_concurrency,
        context_length=cap.context_length,
    )
    return f"{line}. {capacity}"


def tight_line(result: Result, lang: str, currency: str | None = None) -> str | None:
    """'⚠️ Tight: … Safe: a context up to 2,048 tokens. With headroom: 2× …' — when the ranking led
    with a tight priced offer (note `tight_offer`, `core.advice.ranking.lead`)."""
    said = next((a for a in result.assumptions if a.code == "tight_offer"), None)
    roomy = next((a for a in result.alternatives if a.reason == "most_headroom"), None)
    if said is None or roomy is None:
        return None
    parts = [t("tight-lead", lang, percent=said.params.get("percent", 0))]
    safe = [
        t(key, lang, value=value)
        for key, value in (
            ("tight-safe-context", said.params.get("context_length")),
            ("tight-safe-users", said.params.get("concurrency")),
        )
        if value
    ]
    if said.params.get("micro_batch"):  # training: the same batch per step, on the card offered
        safe.insert(
            0,
            t(
                "tight-safe-accumulation",
                lang,
                value=said.params["micro_batch"],
                steps=said.params.get("accumulation", 1),
            ),
        )
    if safe:
        parts.append(t("tight-safe", lang, ways=t("tight-or", lang).join(safe)))
    config = config_text(roomy.count, roomy.gpu_name, lang)
    parts.append(t("tight-roomy", lang, config=config, price=price_of(roomy, lang, currency)))
    return " ".join(parts)
