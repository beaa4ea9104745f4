"""Plain-text layout of an `Answer` (the CLI's `ask`): the same lines the bot shows, then the details
that the bot keeps behind its "More" button. No decision is taken here — only line breaks."""

from __future__ import annotations

from collections.abc import Sequence

from core.contract import Assumption, Result
from core.language.answer import Answer, build_answer
from core.language.answer_lead import Offer
from core.language.words import t


def render_answer(
    result: Result, lang: str = "ru", notes: Sequence[Assumption] = (), previous: Result | None = None
) -> str:
    """The full answer; `notes` are the parser's assumptions (`core.parse.understand`)."""
    return layout(build_answer(result, lang, notes, previous))


def layout(answer: Answer) -> str:
    lang = answer.lang
    blocks: list[list[str]] = [
        list(answer.solved),
        [answer.lead, answer.need, *[s for s in (answer.card_read, answer.tight, answer.change) if s]],
        list(answer.cost),
        list(answer.load),
        [answer.settings],
        [answer.parts_title, *(f"  {name}: {size}" for name, size in answer.parts)],
        list(answer.extras),
        offer_lines(answer),
    ]
    if answer.mitigations:
        blocks.append([answer.mitigations_title, *(f"  {m}" for m in answer.mitigations)])
    blocks.append([answer.host])
    # the details
    if answer.verdicts:
        blocks.append([t("answer-verdicts", lang), *(f"  {v}" for v in answer.verdicts)])
    if answer.speed:
        blocks.append([answer.speed, *([answer.ttft] if answer.ttft else [])])
    if answer.extra_mitigations:
        key = "answer-more-mitigations" if answer.mitigations else "answer-mitigations"
        blocks.append([t(key, lang), *(f"  {m}" for m in answer.extra_mitigations)])
    if answer.assumptions:
        blocks.append([t("answer-assumptions", lang), *(f"  - {a}" for a in answer.assumptions)])
    return "\n\n".join("\n".join(block) for block in blocks if block)


def offer_lines(answer: Answer) -> list[str]:
    """'Cheapest: 4× RTX 4090 48 GB, … · fastest: 2× H100, …' and the offer pages."""
    if answer.cheapest is None:
        return []
    lang = answer.lang
    key = (
        "answer-offers-cheapest"
        if answer.cheapest.price_per_hour is not None
        else "answer-offers-recommended"
    )
    # "price on request" is said once in a message: an offer without a price is named without it
    # where the lead (or the tight-fit line) has said it already
    on_request = t("price-on-request", lang)
    said = [on_request in line for line in (answer.lead, answer.tight or "")]
    said_already = any(said)

    def named(key: str, offer: Offer) -> str:
        nonlocal said_already
        if offer.price == on_request:
            if said_already:
                return t(f"{key}-unpriced", lang, config=offer.config)
            said_already = True
        return t(key, lang, config=offer.config, price=offer.price)

    lines = [named(key, answer.cheapest)]
    if answer.fastest is not None:
        lines[0] += " · " + named("answer-offers-fastest", answer.fastest)
    lines += [f"  {o.url}" for o in (answer.cheapest, answer.fastest) if o is not None and o.url]
    return lines
