"""One answer, built once from a `Result`: every display decision, in the user's language.

The CLI's text (`core.layouts.plain`), the bot's message and its inline article are thin layouts over
`Answer`, so one request reads the same everywhere: the same lead, the same cards, the same price.
What leads is the decision (does it fit, on which card, at what price and speed); the breakdown
follows; verdicts on other cards, every mitigation and the assumptions are the details.

Sizes are shown once, in GB as cards are named (an "RTX 4090 48 GB" has 48 × 2³⁰ bytes): see
`core.language.phrases.format_bytes`. All strings here are plain text; layouts escape them for their medium.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from core.contract import Assumption, Recommendation, Result, Throughput, Verdict
from core.language.answer_latency import load_lines, ttft_line
from core.language.answer_mitigations import (
    change_line,
    mitigation_line,
    mitigations_title,
    without_checkpointing_lines,
)
from core.language.answer_offload import offload_lines
from core.language.answer_solve import cost_lines, solved_lines
from core.language.answer_spec import feature_lines
from core.language.cards import VERDICT_ICONS, config_text, price_of, shown_kind, verdict_line
from core.language.phrases import (
    assumption_texts,
    describe_settings,
    format_bytes,
    needs_mitigations,
    verdict_of,
    verdicts_to_show,
)
from core.language.words import label, normalize_lang, t

LEAD_MITIGATIONS = 3  # on a phone: the cheapest few ways to make it fit
CARD_READ = "parse_card_memory"  # a card named without its memory: said under the lead (`card_read`)
# Notices the answer already states in its lead or offer lines: repeating them is noise.
SAID_ELSEWHERE = frozenset({"not_in_offers", "tight_offer", "offer_sold_out", CARD_READ})


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


@dataclass(frozen=True)
class CardFit:
    """A card drawn beside the breakdown: the one the user named (`own`) or the recommended one."""

    config: str
    count: int
    need_bytes: int  # per card, on `count` of them
    usable_bytes: int  # per card
    verdict: str  # fits / tight / does_not_fit
    own: bool
    as_asked: bool  # the requested configuration: `need_bytes` is the breakdown's total
    line: str  # `verdict_line`: '✅ 1× RTX 4090 48 GB: fits, 26.9 of 48.0 GB'


@dataclass(frozen=True)
class Answer:
    lang: str
    lead: str  # line 1: the decision — verdict, card, price, speed
    need: str  # line 2: the memory asked and what holds it (or where to rent when the own card fails)
    settings: str  # the model and the settings the estimate used, engine included
    parts: tuple[tuple[str, str], ...]  # breakdown, largest first: (label, size)
    cheapest: Offer | None
    fastest: Offer | None  # only when it is another configuration than `cheapest`
    mitigations_title: str
    mitigations: tuple[str, ...]  # shown when it does not fit the card it is asked for
    host: str
    verdicts: tuple[str, ...]  # details: the cards where the line runs
    speed: str | None  # details: per user and in total
    assumptions: tuple[str, ...]  # details
    change: str | None = None  # one line against the previous answer, when there was one
    total_bytes: int = 0
    extra_mitigations: tuple[str, ...] = field(default=())  # details: the rest of the list
    solved: tuple[str, ...] = field(default=())  # the inverse answer (solve_for), shown first
    cost: tuple[str, ...] = field(default=())  # time and cost, after the lead
    part_codes: tuple[str, ...] = field(default=())  # the breakdown keys of `parts`, same order
    part_bytes: tuple[int, ...] = field(default=())  # the bytes of `parts` (per card), same order
    parts_title: str = ""  # 'Where the memory goes, 26.9 GB per card:' (the sum of `parts`)
    cards: tuple[CardFit, ...] = field(default=())  # the user's card (if named), then the recommended
    verdict: str | None = None  # what the lead says: fits / tight / does_not_fit; None: nothing fits
    tight: str | None = None  # a tight priced offer leads: what keeps it safe, the comfortable one
    taken: str | None = None  # the configuration that would have led is sold out: said after the lead
    card_read: str | None = None  # how a card named without its memory was read, and the other one
    card_switch: tuple[str, str] | None = None  # that other card: (id, short name), for a button
    # extension (issue 22): speculative decoding and hybrid models, shown under the breakdown
    extras: tuple[str, ...] = field(default=())
    # core.language.answer_latency: the servers a load takes (after the lead), the first token (details)
    load: tuple[str, ...] = field(default=())
    ttft: str | None = None

    @property
    def offer(self) -> Offer | None:
        """The offer the buttons point at."""
        return self.cheapest


def build_answer(
    result: Result,
    lang: str,
    notes: Sequence[Assumption] = (),
    previous: Result | None = None,
    currency: str | None = None,
) -> Answer:
    """The answer in `lang`; prices in `currency` where the operator priced the offer in it."""
    lang = normalize_lang(lang)
    rec = result.recommendation
    cheapest = _offer(rec, result, lang, currency) if rec else None
    fastest_rec = next((a for a in result.alternatives if a.reason == "fastest"), None)
    fastest = None
    if fastest_rec is not None and (
        rec is None or (fastest_rec.gpu, fastest_rec.count) != (rec.gpu, rec.count)
    ):
        fastest = _offer(fastest_rec, result, lang, currency)
    target = result.target
    lead, need = _lead(result, target, cheapest, lang)
    # "−X → Y" reads against the figure shown: without it (the lead gives another card count's), "→ Y"
    from_shown = not (target is None and rec is not None and rec.breakdown)
    mitigations = [mitigation_line(m, lang, result.request.num_gpus, from_shown) for m in result.mitigations]
    shown = needs_mitigations(result) or (target is not None and target.verdict != "fits")
    said = [a for a in [*notes, *result.assumptions] if a.code not in SAID_ELSEWHERE]
    read = [n for n in notes if n.code == CARD_READ]
    shown_config, breakdown = _shown_breakdown(result, target)
    shown_parts = _stack_parts(result, components(result, breakdown))
    cards = _cards(result, target, lang, shown_config)
    return Answer(
        lang=lang,
        lead=lead,
        need=need,
        settings=headline_settings(result, lang),
        parts=tuple((_part_label(result, c, lang), format_bytes(n, lang)) for c, n in shown_parts),
        parts_title=t("answer-parts", lang, total=format_bytes(sum(n for _, n in shown_parts), lang)),
        cheapest=cheapest,
        fastest=fastest,
        mitigations_title=mitigations_title(target, lang),
        mitigations=tuple(mitigations[:LEAD_MITIGATIONS]) if shown else (),
        extra_mitigations=tuple(mitigations[LEAD_MITIGATIONS:] if shown else mitigations),
        host=t(
            "answer-host",
            lang,
            ram_min=format_bytes(result.host.ram_min_bytes, lang),
            ram_recommended=format_bytes(result.host.ram_recommended_bytes, lang),
            disk=format_bytes(result.host.disk_bytes, lang),
            disk_kind=label("disk", result.host.disk_kind, lang),
        ),
        verdicts=tuple(verdict_line(v, lang) for v in _verdicts(result, target)),
        speed=_speed_line(result, rec, lang),
        assumptions=(*assumption_texts(said, lang), *without_checkpointing_lines(result, lang)),
        change=change_line(previous, result, lang, currency) if previous is not None else None,
        total_bytes=result.total_bytes,
        solved=(*offload_lines(result, lang), *solved_lines(result, lang)),
        cost=cost_lines(result, lang, currency),
        part_codes=tuple(c for c, _ in shown_parts),
        part_bytes=tuple(n for _, n in shown_parts),
        cards=cards,
        verdict=cards[0].verdict if cards else (rec.verdict if rec else None),
        tight=_tight_line(result, lang, currency),
        taken=next(
            (
                f"⏳ {t('assumption-offer_sold_out', lang, **a.params)}"
                for a in result.assumptions
                if a.code == "offer_sold_out"
            ),
            None,
        ),
        card_read=next((t(f"assumption-{CARD_READ}", lang, **n.params) for n in read), None),
        card_switch=next(((str(n.params["other_id"]), str(n.params["other"])) for n in read), None),
        extras=feature_lines(result, breakdown, lang),
        load=load_lines(result, lang),
        ttft=ttft_line(result, lang),
    )


def _tight_line(result: Result, lang: str, currency: str | None = None) -> str | None:
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


def _shown_breakdown(result: Result, target: Verdict | None) -> tuple[tuple[str, int], dict[str, int]]:
    """The configuration whose figure the lead gives, and its per-card breakdown: the user's cards
    (the request as asked), else the recommended configuration (its own breakdown where its card
    count is another), so the breakdown adds up to the figure above it."""
    rec = result.recommendation
    if target is None and rec is not None and rec.breakdown:
        return (rec.gpu, rec.count), rec.breakdown
    config = (target.gpu, target.count) if target else (rec.gpu, rec.count) if rec else ("", 0)
    return config, result.breakdown


def _cards(result: Result, target: Verdict | None, lang: str, shown: tuple[str, int]) -> tuple[CardFit, ...]:
    """The user's card (when named) and the recommended configuration (when another), the lead's
    first; `shown`: the configuration whose breakdown the answer shows."""
    rows: list[tuple[Verdict, bool]] = [(target, True)] if target is not None else []
    rec = result.recommendation
    if rec is not None and (target is None or (target.gpu, target.count) != (rec.gpu, rec.count)):
        found = verdict_of(rec, result)
        if found is not None:
            rows.append((found, False))
    return tuple(
        CardFit(
            config=config_text(v.count, v.gpu_name, lang),
            count=v.count,
            need_bytes=v.bytes_per_gpu,
            usable_bytes=v.usable_bytes,
            verdict=v.verdict,
            own=own,
            as_asked=(v.gpu, v.count) == shown
            or (v.count == result.request.num_gpus and v.bytes_per_gpu == result.total_bytes),
            line=verdict_line(v, lang),
        )
        for v, own in rows
    )


def headline_settings(result: Result, lang: str) -> str:
    fields = result.request.model_dump(exclude={"model", "extra_models"})
    settings = describe_settings(fields, lang, tts=result.model.kind == "tts")
    model = " + ".join([result.model.name, *(p.model.name for p in result.stack)])
    return t("answer-headline", lang, model=model, settings=settings)


STACK_CODE = "extra_models"


def _stack_parts(result: Result, parts: list[tuple[str, int]]) -> list[tuple[str, int]]:
    """The breakdown with `extra_models` (a RAG stack's other models) shown model by model, in place:
    codes 'extra_models:<i>' (i: the model's index in `result.stack`)."""
    out: list[tuple[str, int]] = []
    for code, n in parts:
        if code == STACK_CODE and result.stack:
            out += [(f"{STACK_CODE}:{i}", p.total_bytes) for i, p in enumerate(result.stack)]
        else:
            out.append((code, n))
    return out


def _part_label(result: Result, code: str, lang: str) -> str:
    if code.startswith(f"{STACK_CODE}:"):
        part = result.stack[int(code.split(":", 1)[1])]
        return t("stack-part", lang, model=part.model.name, role=label("stack-role", part.role, lang))
    return label("component", code, lang)


def components(result: Result, breakdown: dict[str, int] | None = None) -> list[tuple[str, int]]:
    """The parts of the breakdown to show (the request's, or `breakdown`), largest first: those
    above zero, and the overhead always."""
    parts = sorted((result.breakdown if breakdown is None else breakdown).items(), key=lambda kv: -kv[1])
    return [(c, n) for c, n in parts if n > 0 or c == "overhead"]


# --- the lead ------------------------------------------------------------------------------------


def _lead(result: Result, target: Verdict | None, offer: Offer | None, lang: str) -> tuple[str, str]:
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


def _offer(rec: Recommendation, result: Result, lang: str, currency: str | None = None) -> Offer:
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


def _speed_line(result: Result, rec: Recommendation | None, lang: str) -> str | None:
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


def _verdicts(result: Result, target: Verdict | None) -> list[Verdict]:
    rows = verdicts_to_show(result)
    if target is not None and all((v.gpu, v.count) != (target.gpu, target.count) for v in rows):
        rows.insert(0, target)
    return rows
