"""The answer's breakdown and the cards set against it: which configuration's figure the lead gives
and its per-card breakdown (largest first, a RAG stack's models one by one) with the labels to show;
`CardFit`, a card drawn beside it (the user's own, the recommended one); the verdict rows of the
details. Plain text; `core.language.answer.build_answer` puts them on the `Answer`.
"""

from __future__ import annotations

from dataclasses import dataclass

from core.contract import Result, Verdict
from core.language.cards import config_text, verdict_line
from core.language.phrases import verdict_of, verdicts_to_show
from core.language.words import label, t


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


def shown_breakdown(result: Result, target: Verdict | None) -> tuple[tuple[str, int], dict[str, int]]:
    """The configuration whose figure the lead gives, and its per-card breakdown: the user's cards
    (the request as asked), else the recommended configuration (its own breakdown where its card
    count is another), so the breakdown adds up to the figure above it."""
    rec = result.recommendation
    if target is None and rec is not None and rec.breakdown:
        return (rec.gpu, rec.count), rec.breakdown
    config = (target.gpu, target.count) if target else (rec.gpu, rec.count) if rec else ("", 0)
    return config, result.breakdown


def card_fits(
    result: Result, target: Verdict | None, lang: str, shown: tuple[str, int]
) -> tuple[CardFit, ...]:
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


STACK_CODE = "extra_models"


def stack_parts(result: Result, parts: list[tuple[str, int]]) -> list[tuple[str, int]]:
    """The breakdown with `extra_models` (a RAG stack's other models) shown model by model, in place:
    codes 'extra_models:<i>' (i: the model's index in `result.stack`)."""
    out: list[tuple[str, int]] = []
    for code, n in parts:
        if code == STACK_CODE and result.stack:
            out += [(f"{STACK_CODE}:{i}", p.total_bytes) for i, p in enumerate(result.stack)]
        else:
            out.append((code, n))
    return out


def part_label(result: Result, code: str, lang: str) -> str:
    if code.startswith(f"{STACK_CODE}:"):
        part = result.stack[int(code.split(":", 1)[1])]
        return t("stack-part", lang, model=part.model.name, role=label("stack-role", part.role, lang))
    return label("component", code, lang)


def components(result: Result, breakdown: dict[str, int] | None = None) -> list[tuple[str, int]]:
    """The parts of the breakdown to show (the request's, or `breakdown`), largest first: those
    above zero, and the overhead always."""
    parts = sorted((result.breakdown if breakdown is None else breakdown).items(), key=lambda kv: -kv[1])
    return [(c, n) for c, n in parts if n > 0 or c == "overhead"]


def verdicts_shown(result: Result, target: Verdict | None) -> list[Verdict]:
    """The verdict rows of the details (`verdicts_to_show`), the user's cards first where not among them."""
    rows = verdicts_to_show(result)
    if target is not None and all((v.gpu, v.count) != (target.gpu, target.count) for v in rows):
        rows.insert(0, target)
    return rows
