"""Inverse questions over steps: the highest-quality precision of a ladder, or the largest catalogue
model of the family, that fits — the first rung that does, estimated one candidate at a time."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from core.catalogue.catalog import Catalog
from core.catalogue.models import ModelKind, ModelSpec
from core.contract import ANY_MODEL, Engine, Method, Precision, Request, Result, Solved, SolveFor, Task
from core.errors import EstimateError
from core.formulas.precision import bits_per_weight, is_gguf
from core.inverse.judge import Judge, Target, resolve_spec
from core.inverse.solved import solved_answer
from core.model.hub import Hub
from core.sizing.estimate import estimate

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
# The largest-model search tries formats down to 4 bits (int4, AWQ, Q4_K_M): below that (Q3_K, Q2_K)
# llama.cpp's quantize table shows the perplexity climbing steeply — not a model anyone would pick.
MODEL_SEARCH_MIN_BITS = 4.0
# A precision or model search runs the estimator per candidate (the model list is long).
MAX_STEP_ESTIMATES = 240


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
class Fit:
    index: int  # of the value in the list searched
    precision: Precision | None
    result: Result


@dataclass(frozen=True)
class _Steps:
    """The values one inverse question steps through (precisions, or models each in its formats) and
    the judge that sizes each candidate."""

    base: Request
    target: Target
    judge: Judge
    name: str  # the request field stepped: "precision" or "model"
    values: Sequence[str]
    specs: list[ModelSpec]  # the models stepped through (empty when stepping precisions)

    def formats(self, index: int) -> list[Precision | None]:
        return _formats(self.base, self.target, self.specs[index]) if self.specs else [None]

    def variant(self, index: int, precision: Precision | None) -> Request:
        changes: dict[str, Any] = {self.name: self.values[index]}
        if precision is not None:
            changes["precision"] = precision
        return self.judge.variant(**changes)

    def key(self, index: int, precision: Precision | None) -> tuple[tuple[str, Any], ...]:
        return ((self.name, self.values[index]), ("precision", str(precision) if precision else None))

    def fits(self) -> Iterator[Fit]:
        """Every candidate that fits at all, in the order searched, estimated only when asked for."""
        for index in range(len(self.values)):
            tried = self.formats(index)
            if not self.judge.near_edge(self.variant(index, tried[-1])):
                continue  # too large even in its smallest format, by the quick sums
            for precision in tried:
                if not self.judge.near_edge(self.variant(index, precision)):
                    continue
                result = self.judge.exact(self.variant(index, precision), self.key(index, precision))
                if result is not None:
                    yield Fit(index, precision, result)

    def search(self) -> tuple[Fit | None, Fit | None, int | None]:
        """(the first fit with headroom, a better one before it that fits only tight, the index of the
        first value that fits at all); with nothing that has headroom, the tight fit leads."""
        lead: Fit | None = None
        tight: Fit | None = None
        first_fit: int | None = None
        for fit in self.fits():
            first_fit = fit.index if first_fit is None else first_fit
            if self.judge.comfortable(fit.result):
                lead = fit
                break
            tight = tight or fit
        if lead is None and tight is not None:  # nothing with headroom: the tight fit leads
            lead, tight = tight, None
        return lead, tight, first_fit


def _steps(
    base: Request, field: SolveFor, target: Target, catalog: Catalog, hub: Hub | None
) -> tuple[_Steps, str | None]:
    """What `solve_step` steps through, and the family named (a model search from a named model)."""
    if base.model == ANY_MODEL and field is SolveFor.MODEL:
        spec = None
    else:
        spec, _, _ = resolve_spec(base.model, catalog, hub)
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
    judge = Judge(base, target, catalog, hub=hub)
    judge.max_runs = MAX_STEP_ESTIMATES
    family = spec.family if field is SolveFor.MODEL and spec is not None else None
    return _Steps(base, target, judge, name, values, specs), family


def solve_step(
    base: Request, field: SolveFor, target: Target, catalog: Catalog, hub: Hub | None = None
) -> tuple[Result, Solved]:
    """Precision (the ladder, best quality first) or model (the family, largest first): the first value
    that fits with the recommended headroom leads; a better one before it that fits only tight is
    `tight_value`; `next_value` is the one just above the first that fits at all."""
    steps, family = _steps(base, field, target, catalog, hub)
    judge, values = steps.judge, steps.values
    lead, tight, first_fit = steps.search()
    top = values[0]
    if lead is None or first_fit is None:
        smallest = steps.formats(len(values) - 1)[-1]
        shown = estimate(steps.variant(len(values) - 1, smallest), catalog, hub=hub)
        return shown, solved_answer(field, judge, shown, None, values[-1], None, top, "nothing_fits", family)
    found = lead.result
    extra: dict[str, Any] = {"precision": str(lead.precision) if lead.precision else None}
    if tight is not None:
        extra |= {
            "tight_value": values[tight.index],
            "tight_bytes_per_gpu": judge.need(tight.result),
            "tight_precision": str(tight.precision) if tight.precision else None,
        }
    if first_fit == 0:
        solved = solved_answer(field, judge, found, values[lead.index], None, None, top, "catalogue", family)
        return found, solved.model_copy(update=extra)
    above_index = first_fit - 1
    smallest = steps.formats(above_index)[-1]
    above = judge.result(steps.variant(above_index, smallest), steps.key(above_index, smallest))
    solved = solved_answer(
        field, judge, found, values[lead.index], values[above_index], above, top, "memory", family
    )
    return found, solved.model_copy(update=extra)
