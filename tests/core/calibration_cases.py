"""Calibration cases (tests/core/fixtures/calibration.jsonl): published, measured peak GPU memory,
each with its source, the request that reproduces it, the meter it was read with and the settings
we had to assume. Shared by test_calibration.py and bench/calibration_table.py.

Like is compared with like: `allocated` (torch.cuda.max_memory_allocated) against the estimate
without `overhead`; `reserved` against the estimate without the CUDA context; `nvidia-smi` with the
context the source itself measured in place of ours; `vllm_profile` without the KV pool vLLM sizes
afterwards; `capacity` cases must fit the card they ran on.
"""

from __future__ import annotations

import json
import statistics
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from core.catalog import Catalog
from core.contract import Precision, Result
from core.estimate import estimate
from core.formulas.overhead import CUDA_CONTEXT_BYTES
from core.precision import bytes_per_weight
from core.specs import GpuSpec, ModelSpec

FIXTURES = Path(__file__).parent / "fixtures"
GiB = 2**30


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


@dataclass(frozen=True)
class Outcome:
    case: Case
    compared: int  # the estimate read with the case's meter
    error: float  # (compared - measured) / measured
    baseline: int
    baseline_error: float


def load_cases() -> list[Case]:
    lines = (FIXTURES / "calibration.jsonl").read_text().splitlines()
    return [Case(r["id"], r["status"], r) for r in map(json.loads, lines) if r]


def calibration_catalog() -> Catalog:
    """Only the fixture's models and one large GPU: the cases do not depend on catalogue rows."""
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
    return Catalog(gpus=[gpu], models=models, offers=[])


def read_like_the_meter(case: Case, result: Result) -> int:
    b = result.breakdown
    match case.meter:
        case "allocated":
            return result.total_bytes - b["overhead"]
        case "reserved":
            return result.total_bytes - CUDA_CONTEXT_BYTES
        case "nvidia-smi":
            return (
                result.total_bytes
                - CUDA_CONTEXT_BYTES
                + int(case.row.get("context_bytes", CUDA_CONTEXT_BYTES))
            )
        case "vllm_profile":
            return result.total_bytes - b.get("kv_cache", 0)
        case "capacity":
            return result.total_bytes
    raise ValueError(case.meter)


def simple_rule(case: Case, catalog: Catalog) -> int:
    """The rules of thumb we must beat: weights × 1.2 to run, weights × 4 to train with Adam."""
    spec = catalog.models[case.request["model"]]
    weights = spec.params_b * 1e9 * bytes_per_weight(Precision(case.request.get("precision", "bf16")))
    full_training = case.request["task"] == "training" and case.request.get("method", "full") == "full"
    return round(weights * (4 if full_training else 1.2))


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
    )


def run_all() -> list[Outcome]:
    catalog = calibration_catalog()
    return [run_case(c, catalog) for c in load_cases()]


def median_abs_error(outcomes: list[Outcome], baseline: bool = False) -> float:
    return statistics.median(abs(o.baseline_error if baseline else o.error) for o in outcomes)
