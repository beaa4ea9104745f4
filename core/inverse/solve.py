"""Inverse questions: the largest value of one request field that fits the target cards.

`solve(request)` answers `request.solve_for` on `gpus[0] × num_gpus` (or a bare `memory_gb` card):
the longest context, the most concurrent users, the largest micro-batch or training sequence, the
highest-quality precision, or the largest catalogue model of the family. It searches over the same
estimator (`core.sizing.estimate`), so an answer and its inverse never disagree:

- counts (context, users, batch, sequence): the need grows with the value (more KV cache, more
  activations), so the largest value that fits is found by an exponential probe from 1 (1, 2, 4, …)
  and a binary search between the last value that fits and the first that does not, at most
  `MAX_ESTIMATES` estimator runs. The probe uses the estimator's peak (`peak_breakdown`, the
  formulas `estimate` sums); the value found and the one above it are then confirmed with the full
  `estimate`, whose target verdict is the judge (so a memory budget the verdict applies, e.g. an
  engine's share of the card, is honoured), walking on with `estimate` where it disagrees;
- precision: the ladder `PRECISION_LADDER`, highest quality first; the first rung that fits;
- model: the family's catalogue models, largest first; the first that fits.

The value found fits and the next one does not (`Result.solved`); the margin is what stays free per
card. `run(request)` is the one entry for any request: plain estimate, inverse, and time & cost.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import Any

from core.advice import TIGHT_HEADROOM
from core.advice.offload import offload_request
from core.catalogue.catalog import Catalog, default_catalog
from core.catalogue.gpus import GpuSpec
from core.catalogue.models import ModelKind, ModelSpec
from core.contract import (
    ANY_MODEL,
    Engine,
    Method,
    Precision,
    Request,
    Result,
    Solved,
    SolveFor,
    SolveLimit,
    Task,
)
from core.errors import CoreError, EstimateError
from core.formulas.params import arch_of
from core.formulas.peak import peak_breakdown
from core.formulas.precision import bits_per_weight, is_gguf
from core.formulas.vllm import budget_bytes, memory_fraction
from core.language.words import note
from core.model.hub import Hub
from core.model.resolve import resolve_model
from core.sizing.defaults import fill_defaults
from core.sizing.estimate import estimate, parse_request
from core.units import GiB

# Each search step is one estimator run; exponential + binary search over [1, 10^7] takes ~48.
MAX_ESTIMATES = 96
# Weight formats from the highest quality down (perplexity grows down the list: llama.cpp's
# `examples/quantize` table of the K-quants; 8-bit formats are within noise of 16-bit). Rungs a
# configuration cannot run are skipped (`_ladder`).
PRECISION_LADDER: tuple[Precision, ...] = (
    Precision.BF16,
    Precision.FP8,
    Precision.INT8,
    Precision.Q8_0,
    Precision.Q6_K,
    Precision.Q5_K_M,
    Precision.INT4,
    Precision.Q4_K_M,
    Precision.Q3_K_M,
    Precision.Q2_K,
)
# Training quantizes only the frozen base (LoRA on an 8-bit base, QLoRA on NF4); full training
# keeps 16-bit weights.
TRAINING_LADDER: tuple[Precision, ...] = (Precision.BF16, Precision.INT8, Precision.NF4)
# How far the quick sums may be from the verdict's judgement (a memory budget it applies, rounding):
# values needing up to this much more than the card are confirmed with the full estimate.
EDGE = 0.10
# The largest-model search tries formats down to 4 bits (int4, AWQ, Q4_K_M): below that (Q3_K, Q2_K)
# llama.cpp's quantize table shows the perplexity climbing steeply — not a model anyone would pick.
MODEL_SEARCH_MIN_BITS = 4.0
# A precision or model search runs the estimator per candidate (the model list is long).
MAX_STEP_ESTIMATES = 240
COUNT_FIELDS = (
    SolveFor.CONTEXT_LENGTH,
    SolveFor.CONCURRENCY,
    SolveFor.BATCH_SIZE,
    SolveFor.SEQ_LEN,
    SolveFor.GPU_LAYERS,
)


@dataclass(frozen=True)
class Target:
    gpu: GpuSpec | None  # None: a bare memory size
    name: str
    usable: int
    count: int


def run(
    request: Request | dict[str, Any], catalog: Catalog | None = None, *, hub: Hub | None = None
) -> Result:
    """Any request: `solve` when it has `solve_for`, else `estimate`; then its time and cost when it
    gives a dataset, requests a day or outputs to price (`core.inverse.cost`). `hub`: as `estimate` takes
    it."""
    from core.inverse.cost import attach_cost, wants_cost

    req = parse_request(request)
    catalog = catalog or default_catalog()
    result = solve(req, catalog, hub=hub) if req.solve_for is not None else estimate(req, catalog, hub=hub)
    return attach_cost(result, catalog) if wants_cost(req) else result


def solve(
    request: Request | dict[str, Any], catalog: Catalog | None = None, *, hub: Hub | None = None
) -> Result:
    """The estimate at the largest value of `solve_for` that fits, with `Result.solved`."""
    req = parse_request(request)
    catalog = catalog or default_catalog()
    if req.solve_for is None:
        raise CoreError("solve_for is not set", field="solve_for")
    target, target_notes = _target(req, catalog)
    base = req.model_copy(update={"solve_for": None, "gpus": [target.gpu.id] if target.gpu else req.gpus})
    if req.solve_for in COUNT_FIELDS:
        result, solved = _solve_count(base, req.solve_for, target, catalog, hub)
    else:
        result, solved = _solve_step(base, req.solve_for, target, catalog, hub)
    notes = [*result.assumptions, *target_notes, note("solve_search", field=str(req.solve_for))]
    return result.model_copy(update={"request": _echo(result, req), "solved": solved, "assumptions": notes})


def _echo(result: Result, req: Request) -> Request:
    return result.request.model_copy(update={"solve_for": req.solve_for, "memory_gb": req.memory_gb})


# --- the target ----------------------------------------------------------------------------------


def _target(req: Request, catalog: Catalog) -> tuple[Target, list[Any]]:
    if req.gpus:
        gpu = catalog.gpu(req.gpus[0])
        return Target(gpu, gpu.name, gpu.usable_bytes, req.num_gpus), []
    if req.memory_gb is not None:
        usable = round(req.memory_gb * GiB)
        return Target(None, f"{req.memory_gb:g} GB", usable, req.num_gpus), []
    default = _default_gpu(catalog)
    if default is None:
        raise EstimateError("name the GPU (gpus) or its memory (memory_gb) to solve for", "gpus")
    notes = [note("solve_default_target", gpu=default.name)]
    return Target(default, default.name, default.usable_bytes, req.num_gpus), notes


def _default_gpu(catalog: Catalog) -> GpuSpec | None:
    """No card named: the operator's first-choice offer (lowest priority, then price) — what we rent."""
    if not catalog.offers:
        return None
    first = min(
        catalog.offers,
        key=lambda o: (o.priority, o.count, o.price_per_hour if o.price_per_hour is not None else 1e18),
    )
    return catalog.gpus[first.gpu]


# --- judging one value ---------------------------------------------------------------------------


class _Judge:
    """Whether a request variant fits the target: `quick` by the summed formulas, `exact` by the full
    estimate's target verdict (or its total against a bare memory size). Counts the runs."""

    def __init__(
        self,
        base: Request,
        target: Target,
        catalog: Catalog,
        searched: str | None = None,
        hub: Hub | None = None,
    ) -> None:
        self.base, self.target, self.catalog, self.hub = base, target, catalog, hub
        # the most a value may need and still fit: the tight band of the ranking policy (a full card
        # is no fit), as the target verdict judges it
        self.limit = round(target.usable * (1 - catalog.ranking.tight_headroom))
        self.searched = searched  # a count field whose value no default depends on (see `_count_base`)
        self.runs = 0
        self.max_runs = MAX_ESTIMATES  # the estimates a search may take
        self._resolved: dict[str, tuple[ModelSpec, Any]] = {}
        self._filled: dict[str, Request] = {}
        self._results: dict[tuple[tuple[str, Any], ...], Result | None] = {}

    def variant(self, **changes: Any) -> Request:
        if "precision" in changes:  # the contract's enum, so the result serialises as it validates
            changes["precision"] = Precision(changes["precision"])
        return self.base.model_copy(update=changes)

    def quick_need(self, req: Request) -> int:
        self._count()
        key = req.model if isinstance(req.model, str) else repr(req.model)
        if key not in self._resolved:
            spec, _, _ = _resolve(req.model, self.catalog, self.hub)
            self._resolved[key] = (spec, arch_of(spec))
        spec, arch = self._resolved[key]
        if self.searched is None:
            filled, _ = fill_defaults(req, spec)
        else:  # the defaults are those of the first probe: only the searched value changes
            if key not in self._filled:
                self._filled[key] = fill_defaults(req, spec)[0]
            filled = self._filled[key].model_copy(update={self.searched: getattr(req, self.searched)})
        parts = peak_breakdown(filled, spec, arch).items()
        return sum(round(v) for k, v in parts if v > 0 or k == "overhead")

    def near_edge(self, req: Request) -> bool:
        """Within `EDGE` of the card's memory by the quick sums: where the verdict may judge otherwise."""
        try:
            return self.quick_need(req) <= self.target.usable * (1 + EDGE)
        except CoreError:
            return False

    def quick(self, req: Request) -> bool:
        try:
            return self.quick_need(req) <= self.limit
        except CoreError:
            return False

    def result(self, req: Request, key: tuple[tuple[str, Any], ...]) -> Result | None:
        """The full estimate of a variant (None when the estimator refuses it), run once per key."""
        if key not in self._results:
            self._count()
            try:
                self._results[key] = estimate(req, self.catalog, hub=self.hub)
            except CoreError:
                self._results[key] = None
        return self._results[key]

    def exact(self, req: Request, key: tuple[tuple[str, Any], ...]) -> Result | None:
        """The estimate when it fits the target, else None."""
        result = self.result(req, key)
        return result if result is not None and self.fits(result) else None

    def fits(self, result: Result) -> bool:
        if self.target.gpu is not None and result.target is not None:
            return result.target.verdict != "does_not_fit"
        return result.total_bytes <= self.limit

    def need(self, result: Result) -> int:
        return result.target.bytes_per_gpu if result.target is not None else result.total_bytes

    def comfortable(self, result: Result) -> bool:
        """Whether it fits with the recommended headroom: the target's verdict "fits" (not "tight"),
        the same band the answer shows; a bare memory size by `TIGHT_HEADROOM`."""
        if self.target.gpu is not None and result.target is not None:
            return result.target.verdict == "fits"
        return self.need(result) <= self.target.usable * (1 - TIGHT_HEADROOM)

    def _count(self) -> None:
        self.runs += 1
        if self.runs > self.max_runs:
            raise EstimateError(f"the search took more than {self.max_runs} estimates", "solve_for")


# --- counts: context, users, batch, sequence -----------------------------------------------------


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


def _resolve(model: Any, catalog: Catalog, hub: Hub | None) -> tuple[ModelSpec, Any, Any]:
    """The model as `estimate` resolves it: a looked-up Hugging Face model from `hub` when given."""
    return resolve_model(model, catalog, hf_lookup=True if hub is not None else None, hub=hub)


def _engine_budget(target: Target, filled: Request) -> Target:
    """The share of the card the engine may use, as the verdict judges it: vLLM's
    `gpu_memory_utilization` (core.formulas.vllm), all of it for the other engines."""
    fraction = memory_fraction(filled.engine, filled.gpu_memory_utilization)
    return replace(target, usable=budget_bytes(target.usable, fraction))


def _solve_count(
    base: Request, field: SolveFor, target: Target, catalog: Catalog, hub: Hub | None = None
) -> tuple[Result, Solved]:
    spec, _, _ = _resolve(base.model, catalog, hub)
    base = _count_base(base, field, spec)
    target = _engine_budget(target, fill_defaults(base, spec)[0])
    name = str(field)
    judge = _Judge(base, target, catalog, searched=name, hub=hub)
    lo, hi, bound = _count_bounds(base, field, spec)
    guess = largest(lambda v: judge.quick(judge.variant(**{name: v})), lo, hi)

    def exact(v: int) -> bool:
        return judge.exact(judge.variant(**{name: v}), ((name, v),)) is not None

    value = _near(exact, guess if guess is not None else lo, lo, hi)
    if value is None:
        shown = estimate(judge.variant(**{name: lo}), catalog, hub=hub)  # raises what the estimator refuses
        return shown, _solved(field, judge, shown, None, lo, None, hi, "nothing_fits")
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
        solved = _solved(field, judge, found, lead, None, None, hi, bound)
    else:
        above = judge.result(judge.variant(**{name: value + 1}), ((name, value + 1),))
        solved = _solved(field, judge, found, lead, value + 1, above, hi, "memory")
    return found, solved.model_copy(update=tight)


def _comfortable(judge: _Judge, name: str, lo: int, value: int) -> int | None:
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


# --- steps: precision, model ---------------------------------------------------------------------


def _ladder(base: Request, target: Target, spec: ModelSpec) -> list[Precision]:
    if spec.kind in (ModelKind.IMAGE, ModelKind.VIDEO):
        return [Precision.BF16, Precision.FP8, Precision.INT8, Precision.NF4]
    if base.task is Task.TRAINING:
        if base.method is Method.QLORA:
            return [Precision.NF4]
        return [Precision.BF16] if base.method is Method.FULL else list(TRAINING_LADDER)
    rungs = list(PRECISION_LADDER)
    if base.engine is Engine.LLAMA_CPP:
        rungs = [p for p in rungs if is_gguf(p) or p is Precision.BF16]
    elif base.engine is not None:
        rungs = [p for p in rungs if not is_gguf(p)]
    if target.gpu is not None and not target.gpu.fp8:  # no fp8 tensor cores on this card
        rungs = [p for p in rungs if p is not Precision.FP8]
    return rungs


_KINDS = {
    Task.INFERENCE: (ModelKind.LLM,),
    Task.TRAINING: (ModelKind.LLM,),
    Task.IMAGE_GENERATION: (ModelKind.IMAGE,),
    Task.VIDEO_GENERATION: (ModelKind.VIDEO,),
}


def _family(base: Request, spec: ModelSpec | None, catalog: Catalog) -> list[ModelSpec]:
    """The catalogue models of `spec`'s family and kind (every model of the task's kind when `spec` is
    None), largest first (total parameters); of one size, the most asked first (`popularity`)."""
    if spec is None:
        same = [m for m in catalog.models.values() if m.kind in _KINDS[base.task]]
    else:
        same = [m for m in catalog.models.values() if m.family == spec.family and m.kind == spec.kind]
    return sorted(same, key=lambda m: (-m.params_b, not m.popular, m.popularity or 0, m.id))


def _formats(base: Request, target: Target, spec: ModelSpec) -> list[Precision | None]:
    """The weight formats a model is tried in by the largest-model search: the one asked, or (for an
    inference question that names none) every rung of the ladder the card and engine run, down to
    `MODEL_SEARCH_MIN_BITS`, best quality first."""
    if base.precision is not None or base.task is not Task.INFERENCE:
        return [None]
    return [p for p in _ladder(base, target, spec) if bits_per_weight(p) >= MODEL_SEARCH_MIN_BITS]


@dataclass(frozen=True)
class _Fit:
    index: int  # of the value in the list searched
    precision: Precision | None
    result: Result


def _solve_step(
    base: Request, field: SolveFor, target: Target, catalog: Catalog, hub: Hub | None = None
) -> tuple[Result, Solved]:
    """Precision (the ladder, best quality first) or model (the family, largest first): the first value
    that fits with the recommended headroom leads; a better one before it that fits only tight is
    `tight_value`; `next_value` is the one just above the first that fits at all."""
    if base.model == ANY_MODEL and field is SolveFor.MODEL:
        spec = None
    else:
        spec, _, _ = _resolve(base.model, catalog, hub)
    specs: list[ModelSpec] = []
    if field is SolveFor.PRECISION:
        assert spec is not None
        values: Sequence[str] = [str(p) for p in _ladder(base, target, spec)]
        name = "precision"
    else:
        specs = _family(base, spec, catalog)
        values = [m.id for m in specs]
        name = "model"
        if not values:
            raise EstimateError("no catalogue model to choose from", "model")
    judge = _Judge(base, target, catalog, hub=hub)
    judge.max_runs = MAX_STEP_ESTIMATES
    family = spec.family if field is SolveFor.MODEL and spec is not None else None

    def formats(index: int) -> list[Precision | None]:
        return _formats(base, target, specs[index]) if specs else [None]

    def variant(index: int, precision: Precision | None) -> Request:
        changes: dict[str, Any] = {name: values[index]}
        if precision is not None:
            changes["precision"] = precision
        return judge.variant(**changes)

    def key(index: int, precision: Precision | None) -> tuple[tuple[str, Any], ...]:
        return ((name, values[index]), ("precision", str(precision) if precision else None))

    lead: _Fit | None = None
    tight: _Fit | None = None
    first_fit: int | None = None
    for index in range(len(values)):
        tried = formats(index)
        if not judge.near_edge(variant(index, tried[-1])):
            continue  # too large even in its smallest format, by the quick sums
        for precision in tried:
            if not judge.near_edge(variant(index, precision)):
                continue
            result = judge.exact(variant(index, precision), key(index, precision))
            if result is None:
                continue
            first_fit = index if first_fit is None else first_fit
            if judge.comfortable(result):
                lead = _Fit(index, precision, result)
                break
            tight = tight or _Fit(index, precision, result)
        if lead is not None:
            break
    if lead is None and tight is not None:  # nothing with headroom: the tight fit leads
        lead, tight = tight, None
    top = values[0]
    if lead is None or first_fit is None:
        smallest = formats(len(values) - 1)[-1]
        shown = estimate(variant(len(values) - 1, smallest), catalog, hub=hub)
        return shown, _solved(field, judge, shown, None, values[-1], None, top, "nothing_fits", family)
    found = lead.result
    extra: dict[str, Any] = {"precision": str(lead.precision) if lead.precision else None}
    if tight is not None:
        extra |= {
            "tight_value": values[tight.index],
            "tight_bytes_per_gpu": judge.need(tight.result),
            "tight_precision": str(tight.precision) if tight.precision else None,
        }
    if first_fit == 0:
        solved = _solved(field, judge, found, values[lead.index], None, None, top, "catalogue", family)
        return found, solved.model_copy(update=extra)
    above_index = first_fit - 1
    smallest = formats(above_index)[-1]
    above = judge.result(variant(above_index, smallest), key(above_index, smallest))
    solved = _solved(
        field, judge, found, values[lead.index], values[above_index], above, top, "memory", family
    )
    return found, solved.model_copy(update=extra)


# --- the answer ----------------------------------------------------------------------------------


def _solved(
    field: SolveFor,
    judge: _Judge,
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
