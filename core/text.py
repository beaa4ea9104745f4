"""Plain-text layout of an `Answer` (the CLI's `ask`): the same lines the bot shows, then the details
that the bot keeps behind its "More" button. No decision is taken here — only line breaks."""

from __future__ import annotations

from collections.abc import Sequence

from core.answer import Answer, build_answer
from core.contract import Assumption, Result
from core.texts import t


def render_answer(
    result: Result, lang: str = "ru", notes: Sequence[Assumption] = (), previous: Result | None = None
) -> str:
    """The full answer; `notes` are the parser's assumptions (`core.parse.understand`)."""
    return layout(build_answer(result, lang, notes, previous))


def layout(answer: Answer) -> str:
    lang = answer.lang
    blocks: list[list[str]] = [
        list(answer.solved),
        [answer.lead, answer.need, *([answer.change] if answer.change else [])],
        list(answer.cost),
        [answer.settings],
        [answer.parts_title, *(f"  {name}: {size}" for name, size in answer.parts)],
        offer_lines(answer),
    ]
    if answer.mitigations:
        blocks.append([answer.mitigations_title, *(f"  {m}" for m in answer.mitigations)])
    blocks.append([answer.host])
    # the details
    if answer.verdicts:
        blocks.append([t("answer-verdicts", lang), *(f"  {v}" for v in answer.verdicts)])
    if answer.speed:
        blocks.append([answer.speed])
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
    line = t(key, lang, config=answer.cheapest.config, price=answer.cheapest.price)
    lines = [line]
    if answer.fastest is not None:
        lines[0] += " · " + t(
            "answer-offers-fastest", lang, config=answer.fastest.config, price=answer.fastest.price
        )
    lines += [f"  {o.url}" for o in (answer.cheapest, answer.fastest) if o is not None and o.url]
    return lines
