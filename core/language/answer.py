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

from core.contract import Assumption, Result
from core.language.answer_breakdown import (
    CardFit,
    card_fits,
    components,
    part_label,
    shown_breakdown,
    stack_parts,
    verdicts_shown,
)
from core.language.answer_latency import load_lines, ttft_line
from core.language.answer_lead import Offer, lead_and_need, offer_of, speed_line, tight_line
from core.language.answer_mitigations import (
    change_line,
    mitigation_line,
    mitigations_title,
    without_checkpointing_lines,
)
from core.language.answer_offload import offload_lines
from core.language.answer_solve import cost_lines, solved_lines
from core.language.answer_spec import feature_lines
from core.language.cards import verdict_line
from core.language.phrases import assumption_texts, describe_settings, format_bytes, needs_mitigations
from core.language.words import label, normalize_lang, t

LEAD_MITIGATIONS = 3  # on a phone: the cheapest few ways to make it fit
CARD_READ = "parse_card_memory"  # a card named without its memory: said under the lead (`card_read`)
# Notices the answer already states in its lead or offer lines: repeating them is noise.
SAID_ELSEWHERE = frozenset({"not_in_offers", "tight_offer", "offer_sold_out", CARD_READ})


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
    cheapest = offer_of(rec, result, lang, currency) if rec else None
    fastest_rec = next((a for a in result.alternatives if a.reason == "fastest"), None)
    fastest = None
    if fastest_rec is not None and (
        rec is None or (fastest_rec.gpu, fastest_rec.count) != (rec.gpu, rec.count)
    ):
        fastest = offer_of(fastest_rec, result, lang, currency)
    target = result.target
    lead, need = lead_and_need(result, target, cheapest, lang)
    # "−X → Y" reads against the figure shown: without it (the lead gives another card count's), "→ Y"
    from_shown = not (target is None and rec is not None and rec.breakdown)
    mitigations = [mitigation_line(m, lang, result.request.num_gpus, from_shown) for m in result.mitigations]
    shown = needs_mitigations(result) or (target is not None and target.verdict != "fits")
    said = [a for a in [*notes, *result.assumptions] if a.code not in SAID_ELSEWHERE]
    read = [n for n in notes if n.code == CARD_READ]
    shown_config, breakdown = shown_breakdown(result, target)
    shown_parts = stack_parts(result, components(result, breakdown))
    cards = card_fits(result, target, lang, shown_config)
    return Answer(
        lang=lang,
        lead=lead,
        need=need,
        settings=headline_settings(result, lang),
        parts=tuple((part_label(result, c, lang), format_bytes(n, lang)) for c, n in shown_parts),
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
        verdicts=tuple(verdict_line(v, lang) for v in verdicts_shown(result, target)),
        speed=speed_line(result, rec, lang),
        assumptions=(*assumption_texts(said, lang), *without_checkpointing_lines(result, lang)),
        change=change_line(previous, result, lang, currency) if previous is not None else None,
        total_bytes=result.total_bytes,
        solved=(*offload_lines(result, lang), *solved_lines(result, lang)),
        cost=cost_lines(result, lang, currency),
        part_codes=tuple(c for c, _ in shown_parts),
        part_bytes=tuple(n for _, n in shown_parts),
        cards=cards,
        verdict=cards[0].verdict if cards else (rec.verdict if rec else None),
        tight=tight_line(result, lang, currency),
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


def headline_settings(result: Result, lang: str) -> str:
    fields = result.request.model_dump(exclude={"model", "extra_models"})
    settings = describe_settings(fields, lang, tts=result.model.kind == "tts")
    model = " + ".join([result.model.name, *(p.model.name for p in result.stack)])
    return t("answer-headline", lang, model=model, settings=settings)
