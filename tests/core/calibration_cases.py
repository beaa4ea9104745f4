"""Calibration cases (tests/core/fixtures/calibration.jsonl): published, measured peak GPU memory,
each with its source, the request that reproduces it, the meter it was read with and the settings
we had to assume. Shared by test_calibration.py and bench/calibration_table.py.

Like is compared with like: `allocated` (torch.cuda.max_memory_allocated) against the estimate
without `overhead`; `reserved` against the estimate without the CUDA context; `nvidia-smi` with the
context the source itself measured in place of ours (a `reserved` case whose micro-batches vary in
length, `"lengths": "variable"`, adds the logit-sized blocks the caching allocator keeps from
shorter steps, `variable_length_cached_bytes`, up to the `card_bytes` it ran on); `vllm_profile`
without the KV pool vLLM sizes
afterwards; `capacity` cases must fit the card they ran on, `oom` cases (the source ran out of
memory) must not. A case with `gpus_summed` reports the
sum over its `num_gpus` GPUs (transformers `device_map="auto"` benchmarks), compared with the
per-GPU estimate times the GPUs.

`vllm_kv_tokens` cases record what vLLM prints at start-up ("GPU KV cache size: N tokens",
"Maximum concurrency for L tokens per request: Cx") on a named card at a `gpu_memory_utilization`;
they are compared with `Result.serving_capacity.kv_cache_tokens` (test_vllm_kv_cache_tokens).

Each case belongs to one workload class (`workload_class`): the error table and the answer's range
are given per class (bench/calibration_table.py, core/data/accuracy.toml).
"""

from __future__ import annotations

import json
import math
import statistics
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from core.catalogue.catalog import Catalog
from core.catalogue.gpus import GpuSpec
from core.catalogue.models import ModelSpec
from core.contract import Precision, Request, Result
from core.formulas.overhead import CUDA_CONTEXT_BYTES, variable_length_cached_bytes
from core.formulas.precision import bytes_per_weight
from core.sizing.estimate import estimate

FIXTURES = Path(__file__).parent / "fixtures"
GiB = 2**30
STATED_TOLERANCE = 0.25
ASSUMED_TOLERANCE = 0.40
BOUND_METERS = frozenset({"capacity", "oom"})  # a card's size the estimate must stay under / exceed
SKIPPED_METERS = frozenset({"vllm_kv_tokens"})  # token counts: test_vllm_kv_cache_tokens


def workload_class(request: dict[str, Any]) -> str:
    """The class a request's error is measured in: LLM inference by engine, training by method,
    image and video generation (the same function core.sizing.accuracy applies to a filled request)."""
    from core.sizing.accuracy import workload_class as classify
    from core.sizing.estimate import parse_request

    return classify(parse_request(request))


@dataclass(frozen=True)
class Case:
    id: str
    status: str
    row: dict[str, Any]

    @property
    def request(self) -> dict[str, Any]:
        return self.row["request"]

    @property
    def meter(self) -> str:
        return str(self.row["meter"])

    @property
    def measured(self) -> int:
        return int(self.row["measured_bytes"])

    @property
    def settings_known(self) -> bool:
        return bool(self.row["settings_known"])

    @property
    def is_bound(self) -> bool:
        """A capacity (it fit) or oom (it did not) case: no error, a side of the card's size."""
        return self.meter in BOUND_METERS

    @property
    def tolerance(self) -> float:
        """The bound of this case: ±25 % when the source states its settings, ±40 % when we had to
        assume some (the core issue's bounds)."""
        return STATED_TOLERANCE if self.settings_known else ASSUMED_TOLERANCE

    @property
    def workload_class(self) -> str:
        return workload_class(self.request)


@dataclass(frozen=True)
class Outcome:
    case: Case
    compared: int  # the estimate read with the case's meter
    error: float  # (compared - measured) / measured
    baseline: int
    baseline_error: float
    filled: Request  # the request with the estimator's defaults filled in
    params_b: float  # the model's total parameters, billions

    @property
    def within_tolerance(self) -> bool:
        if self.case.meter == "capacity":
            return self.compared <= self.case.measured
        if self.case.meter == "oom":
            return self.compared > self.case.measured
        return abs(self.error) <= self.case.tolerance


def load_cases() -> list[Case]:
    lines = (FIXTURES / "calibration.jsonl").read_text().splitlines()
    return [Case(r["id"], r["status"], r) for r in map(json.loads, lines) if r]


def calibration_catalog(card: dict[str, Any] | None = None) -> Catalog:
    """Only the fixture's models and one large GPU (plus `card`, a case's own GPU row, for cases
    that read a verdict on it): the cases do not depend on catalogue rows."""
    models = [
        ModelSpec.model_validate(m)
        for m in json.loads((FIXTURES / "calibration_models.json").read_text()).values()
    ]
    gpu = GpuSpec(
        id="h200",
        name="H200",
        marketing_memory_gb=141,
        usable_bytes=150_754_820_096,
        bandwidth_gb_s=4800,
        bf16=True,
        fp8=True,
        fp16_tflops=989,
        source="fixture",
    )
    gpus = [gpu, GpuSpec.model_validate(card)] if card else [gpu]
    return Catalog(gpus=gpus, models=models, offers=[])


def read_like_the_meter(case: Case, result: Result) -> int:
    b = result.breakdown
    gpus = int(case.request.get("num_gpus", 1)) if case.row.get("gpus_summed") else 1
    return gpus * _per_gpu_reading(case, result, b)


def _per_gpu_reading(case: Case, result: Result, b: dict[str, int]) -> int:
    match case.meter:
        case "allocated":
            return result.total_bytes - b["overhead"]
        case "reserved":
            return result.total_bytes - CUDA_CONTEXT_BYTES + _cached_from_shorter_steps(case, result)
        case "nvidia-smi":
            return (
                result.total_bytes
                - CUDA_CONTEXT_BYTES
                + int(case.row.get("context_bytes", CUDA_CONTEXT_BYTES))
            )
        case "vllm_profile":
            return result.total_bytes - b.get("kv_cache", 0)
        case "capacity" | "oom":  # must fit / must not fit the card: measured_bytes is its memory
            return result.total_bytes
    raise ValueError(case.meter)


def _cached_from_shorter_steps(case: Case, result: Result) -> int:
    """What `max_memory_reserved` holds beyond the estimate when the micro-batches vary in length:
    earlier steps' logit-sized blocks, kept until the card runs short (at most its `card_bytes`
    less the CUDA context, where the allocator gives them back)."""
    if case.row.get("lengths") != "variable":
        return 0
    req = result.request
    vocab = calibration_catalog().models[case.request["model"]].vocab_size
    assert req.seq_len is not None and vocab is not None, case.id
    cached = variable_length_cached_bytes(req.seq_len, req.batch_size, vocab)
    room = int(case.row["card_bytes"]) - result.total_bytes
    return max(0, min(round(cached), room))


def simple_rule(case: Case, catalog: Catalog) -> int:
    """The rules of thumb we must beat: weights × 1.2 to run, weights × 4 to train with Adam."""
    spec = catalog.models[case.request["model"]]
    weights = spec.params_b * 1e9 * bytes_per_weight(Precision(case.request.get("precision", "bf16")))
    full_training = case.request["task"] == "training" and case.request.get("method", "full") == "full"
    # per GPU, the rule splits the model evenly; a case summed over the GPUs takes the whole
    split = 1 if case.row.get("gpus_summed") else int(case.request.get("num_gpus", 1))
    return round(weights * (4 if full_training else 1.2) / split)


def run_case(case: Case, catalog: Catalog) -> Outcome:
    result = estimate(case.request, catalog)
    compared = read_like_the_meter(case, result)
    baseline = simple_rule(case, catalog)
    return Outcome(
        case,
        compared,
        (compared - case.measured) / case.measured,
        baseline,
        (baseline - case.measured) / case.measured,
        result.request,
        result.model.params_b,
    )


def run_all() -> list[Outcome]:
    """Every case whose meter the estimator can read today (see SKIPPED_METERS)."""
    catalog = calibration_catalog()
    return [run_case(c, catalog) for c in load_cases() if c.meter not in SKIPPED_METERS]


def outcomes_by_id() -> dict[str, Outcome]:
    """`run_all` by case id."""
    return {o.case.id: o for o in run_all()}


def median_abs_error(outcomes: list[Outcome], baseline: bool = False) -> float:
    return statistics.median(abs(o.baseline_error if baseline else o.error) for o in outcomes)


def p90_abs_error(outcomes: list[Outcome]) -> float:
    """The 90th percentile of |error| by nearest rank: the smallest bound that 9 in 10 cases meet."""
    errors = sorted(abs(o.error) for o in outcomes)
    return errors[max(0, math.ceil(0.9 * len(errors)) - 1)]
