"""Inverse questions over a count (context, users, micro-batch, training sequence, offloaded layers):
the need grows with the value (more KV cache, more activations), so an exponential probe from 1 (1, 2,
4, …) and a binary search between the last value that fits and the first that does not find the
largest value that fits, in at most `MAX_ESTIMATES` estimator runs (`core.inverse.judge`). The probe
uses the estimator's peak (`peak_breakdown`, the formulas `estimate` sums); the value found and the
one above it are then confirmed with the full `estimate`, whose target verdict is the judge (so a
memory budget the verdict applies, e.g. an engine's share of the card, is honoured), walking on with
`estimate` where it disagrees."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from typing import Any

from core.advice import TIGHT_HEADROOM
from core.advice.offload import offload_request
from core.catalogue.catalog import Catalog
from core.catalogue.models import ModelKind, ModelSpec
from core.contract import Engine, Request, Result, Solved, SolveFor, SolveLimit, Task
from core.errors import CoreError, EstimateError
from core.formulas.precision import is_gguf
from core.formulas.vllm import budget_bytes, memory_fraction
from core.inverse.judge import Judge, Target, resolve_spec
from core.inverse.solved import solved_answer
from core.model.hub import Hub
from core.sizing.defaults import fill_defaults
from core.sizing.estimate import estimate

COUNT_FIELDS = (
    SolveFor.CONTEXT_LENGTH,
    SolveFor.CONCURRENCY,
    SolveFor.BATCH_SIZE,
    SolveFor.SEQ_LEN,
    SolveFor.GPU_LAYERS,
)


def largest(fits: Callable[[int], bool], lo: int, hi: int) -> int | None:
    """The largest v in [lo, hi] with fits(v), for fits true up to some value and false after it;
    None when fits(lo) is false. Exponential probe from lo, then binary search: O(log hi) calls."""
    if not fits(lo):
        return None
    good, step = lo, 1
    while True:
        probe = min(good + step, hi)
        if probe == good:
            return good
        if not fits(probe):
            bad = probe
            break
        good, step = probe, step * 2
    while bad - good > 1:
        mid = (good + bad) // 2
        if fits(mid):
            good = mid
        else:
            bad = mid
    return good


def _near(fits: Callable[[int], bool], hint: int, lo: int, hi: int) -> int | None:
    """`largest` started from a good guess: gallops up or down from `hint`, then binary search."""
    if fits(hint):
        return largest(fits, hint, hi)
    bad, step = hint, 1
    while True:
        probe = max(hint - step, lo)
        if fits(probe):
            return largest(fits, probe, bad - 1)
        if probe == lo:
            return None
        bad, step = probe, step * 2


def _count_bounds(base: Request, field: SolveFor, spec: ModelSpec) -> tuple[int, int, SolveLimit]:
    limit = next(int(r.le) for r in Request.model_fields[str(field)].metadata if getattr(r, "le", None))
    if field in (SolveFor.CONTEXT_LENGTH, SolveFor.SEQ_LEN) and spec.max_context:
        return 1, min(spec.max_context, limit), "model_max"
    if field is SolveFor.GPU_LAYERS and spec.layers:  # -ngl 0 (all in RAM) .. blocks + output layer
        return 0, spec.layers + 1, "model_max"
    return 1, limit, "contract_max"


def _count_base(base: Request, field: SolveFor, spec: ModelSpec) -> Request:
    """Fix what would otherwise follow the searched value: serving many users is a vLLM server (the
    estimator's default for concurrency > 1, `core.sizing.defaults._default_engine`), at every probe."""
    if spec.kind in (ModelKind.IMAGE, ModelKind.VIDEO):
        raise EstimateError(f"{spec.name} is a diffusion pipeline: solve for precision instead", "solve_for")
    if field in (SolveFor.BATCH_SIZE, SolveFor.SEQ_LEN) and base.task is not Task.TRAINING:
        raise EstimateError(
            f"solve_for {field} is for training; use concurrency or context_length", "solve_for"
        )
    if field in (SolveFor.CONTEXT_LENGTH, SolveFor.CONCURRENCY) and base.task is not Task.INFERENCE:
        raise EstimateError(f"solve_for {field} is for inference; use seq_len or batch_size", "solve_for")
    if field is SolveFor.GPU_LAYERS:  # llama.cpp's -ngl: its engine and a GGUF file at every probe
        return offload_request(base.model_copy(update={"solve_for": field}), spec)[0].model_copy(
            update={"solve_for": None}
        )
    gguf = base.precision is not None and is_gguf(base.precision)
    if field is SolveFor.CONCURRENCY and base.engine is None and not gguf:
        return base.model_copy(update={"engine": Engine.VLLM})
    return base


def _engine_budget(target: Target, filled: Request) -> Target:
    """The share of the card the engine may use, as the verdict judges it: vLLM's
    `gpu_memory_utilization` (core.formulas.vllm), all of it for the other engines."""
    fraction = memory_fraction(filled.engine, filled.gpu_memory_utilization)
    return replace(target, usable=budget_bytes(target.usable, fraction))


def solve_count(
    base: Request, field: SolveFor, target: Target, catalog: Catalog, hub: Hub | None = None
) -> tuple[Result, Solved]:
    spec, _, _ = resolve_spec(base.model, catalog, hub)
    base = _count_base(base, field, spec)
    target = _engine_budget(target, fill_defaults(base, spec)[0])
    name = str(field)
    judge = Judge(base, target, catalog, searched=name, hub=hub)
    lo, hi, bound = _count_bounds(base, field, spec)
    guess = largest(lambda v: judge.quick(judge.variant(**{name: v})), lo, hi)

    def exact(v: int) -> bool:
        return judge.exact(judge.variant(**{name: v}), ((name, v),)) is not None

    value = _near(exact, guess if guess is not None else lo, lo, hi)
    if value is None:
        shown = estimate(judge.variant(**{name: lo}), catalog, hub=hub)  # raises what the estimator refuses
        return shown, solved_answer(field, judge, shown, None, lo, None, hi, "nothing_fits")
    comfortable = _comfortable(judge, name, lo, value)
    # The answer leads with the largest value that leaves the recommended headroom; the largest that
    # fits at all is said after it, as tight (`tight_value`).
    lead = comfortable if comfortable is not None else value
    found = judge.exact(judge.variant(**{name: lead}), ((name, lead),))
    assert found is not None
    tight: dict[str, Any] = {"comfortable_value": comfortable}
    if lead != value:
        at_max = judge.exact(judge.variant(**{name: value}), ((name, value),))
        assert at_max is not None
        tight |= {"tight_value": value, "tight_bytes_per_gpu": judge.need(at_max)}
    if value >= hi:
        solved = solved_answer(field, judge, found, lead, None, None, hi, bound)
    else:
        above = judge.result(judge.variant(**{name: value + 1}), ((name, value + 1),))
        solved = solved_answer(field, judge, found, lead, value + 1, above, hi, "memory")
    return found, solved.model_copy(update=tight)


def _comfortable(judge: Judge, name: str, lo: int, value: int) -> int | None:
    """The largest value up to `value` that leaves `TIGHT_HEADROOM` of the card free (verdict "fits",
    what the recommender asks of an offer): the same search, against the smaller budget."""
    budget = judge.target.usable * (1 - TIGHT_HEADROOM)

    def quick(v: int) -> bool:
        try:
            return judge.quick_need(judge.variant(**{name: v})) <= budget
        except CoreError:
            return False

    def exact(v: int) -> bool:
        result = judge.result(judge.variant(**{name: v}), ((name, v),))
        return result is not None and judge.need(result) <= budget

    guess = largest(quick, lo, value)
    return _near(exact, guess if guess is not None else lo, lo, value)
