"""The answer to an inverse question (`Result.solved`): the value found, the one above it that does
not fit, the margin that stays free per card, and what grows from one to the other."""

from __future__ import annotations

from core.contract import Result, Solved, SolveFor, SolveLimit
from core.inverse.judge import Judge


def solved_answer(
    field: SolveFor,
    judge: Judge,
    shown: Result,
    value: int | str | None,
    next_value: int | str | None,
    above: Result | None,
    max_value: int | str,
    limit: SolveLimit,
    family: str | None = None,
) -> Solved:
    target = judge.target
    need = judge.need(shown) if value is not None else None
    margin = target.usable - need if need is not None else None
    # The row of the card and count solved for: the answer's throughput also lists other counts and cards.
    speed = next(
        (s for s in shown.throughput if target.gpu and (s.gpu, s.count) == (target.gpu.id, target.count)),
        None,
    )
    next_bytes: int | None = None
    if value is None:  # nothing fits: the need at the smallest value is the one to beat
        above, next_bytes = shown, judge.need(shown)
    elif above is not None:
        next_bytes = judge.need(above)
    return Solved(
        solve_for=field,
        value=value,
        next_value=next_value,
        max_value=max_value,
        limit=limit,
        gpu=target.gpu.id if target.gpu else None,
        gpu_name=target.name,
        count=target.count,
        usable_bytes=target.usable,
        bytes_per_gpu=need,
        margin_bytes=margin,
        margin=round(margin / target.usable, 4) if margin is not None else None,
        next_bytes_per_gpu=next_bytes,
        grows=_grows(shown if value is not None else None, above),
        family=family,
        tokens_per_s=speed.tokens_per_s if speed and value is not None else None,
        aggregate_tokens_per_s=speed.aggregate_tokens_per_s if speed and value is not None else None,
        estimates=judge.runs,
    )


def _grows(before: Result | None, after: Result | None) -> str | None:
    """The component that grows most between the value found and the next: what limits it."""
    if after is None:
        return None
    if before is None:
        return max(after.breakdown.items(), key=lambda kv: kv[1])[0]
    deltas = {k: v - before.breakdown.get(k, 0) for k, v in after.breakdown.items()}
    name, delta = max(deltas.items(), key=lambda kv: kv[1])
    return name if delta > 0 else None
