"""The estimator against peak memory we measured ourselves on an NVIDIA H200 (SOURCE below;
tests/core/fixtures/h200_measured.jsonl): HF `generate` inference, full fine-tuning and LoRA.

Every setting is the script's own, so each case has the stated tolerance (±25 %). Like with like:
`torch.cuda.max_memory_allocated` (`measured_bytes`) against the estimate without `overhead`, as
test_calibration's `allocated` meter. The weights and KV cache the script built are checked exactly
(±1 %). Median |error| ≤ 10 %, as test_calibration. A case outside its tolerance is in KNOWN_MISSES
with the reason; a test fails once it is back inside. Mapped: the 90 `ok` cases of 94 whose model
is in the catalogue; not mapped: Qwen1.5-MoE-A2.7B (4 cases, not in the catalogue) and QLoRA
(3 cases skipped on the H200: no bitsandbytes). These cases are not in the accuracy table.
"""

import json
from typing import Any

import pytest
from calibration_cases import (
    FIXTURES,
    STATED_TOLERANCE,
    Case,
    calibration_catalog,
    median_abs_error,
    run_case,
)

from core.sizing.estimate import estimate

SOURCE = (
    "measured on an NVIDIA H200 with ../shared/gpu-measure/measure.py (script 2026-11-30.1; "
    "torch 2.11.0+cu130, transformers 5.17.0, peft 0.21.0; random weights built from the model's "
    "config), 2026-12-04"
)
MEDIAN_BOUND = 0.10
GiB = 2**30

ROWS = [json.loads(line) for line in (FIXTURES / "h200_measured.jsonl").read_text().splitlines() if line]
# every setting is stated by the script: the ±25 % tolerance
CASES = [Case(r["id"], "measured", {**r, "settings_known": True, "source": SOURCE}) for r in ROWS]
CATALOG = calibration_catalog()
OUTCOMES = {c.id: run_case(c, CATALOG) for c in CASES}

KNOWN_MISSES: dict[str, str] = {
    "inf-llama3.2-1b-fp32-sdpa-p4096-b1": "fp32 SDPA, 4096-token prompt: 9.67 GiB measured, 5.30 "
    "estimated. Weights (4.60) and KV cache (0.25) match; the 4.4 GiB more fits two fp32 "
    "32-head 4096² score tensors (2 GiB each), as when SDPA falls back to its math kernel (flash "
    "attention takes only 16-bit inputs); we size fp32 SDPA like bf16, without s² scores. "
    "Llama-3.1-8B fp32 shows the same 4.2 GiB but stays inside (-12 %) behind its 30 GiB weights",
    "inf-mistral-7b-v0.1-bf16-sdpa-p32736-b4": "Mistral's 4096-token sliding window at a 32736-token "
    "prompt, 4 sequences: 48.54 GiB measured, 27.99 estimated. Weights (13.49) and the windowed KV "
    "cache (2.00) match; the 20.5 GiB more is 5.1 GiB per sequence, about 5 bytes per query-key "
    "pair: s²-sized tensors of the sliding-window mask, which SDPA cannot take as is_causal. We size "
    "it like full causal attention (same activations as Llama-3.1-8B); 1 sequence: -23 %, just inside",
}


def test_fixture_rows_carry_what_the_comparison_needs() -> None:
    assert len(ROWS) == 90
    assert len({r["id"] for r in ROWS}) == len(ROWS), "case ids are unique"
    for row in ROWS:
        assert row["meter"] == "allocated", row["id"]
        assert row["request"]["model"] in CATALOG.models, row["id"]
        assert row["measured_bytes"] <= row["peak_reserved_bytes"], row["id"]
        assert row["weights_bytes"] < row["measured_bytes"], row["id"]


@pytest.mark.parametrize(
    "row", [r for r in ROWS if r["request"]["task"] == "inference"], ids=lambda r: r["id"]
)
def test_weights_and_kv_cache_are_the_ones_measured(row: dict[str, Any]) -> None:
    """The catalogue's architecture builds what the script built: the error is in the rest."""
    b = estimate(row["request"], CATALOG).breakdown
    assert b["weights"] == pytest.approx(row["weights_bytes"], rel=0.01)
    assert b["kv_cache"] == pytest.approx(row["kv_cache_bytes"], rel=0.01)


def test_median_absolute_error() -> None:
    median = median_abs_error(list(OUTCOMES.values()))
    assert median <= MEDIAN_BOUND, f"median |error| {median:.1%} over {len(OUTCOMES)} H200 cases"


@pytest.mark.parametrize("case_id", sorted(i for i in OUTCOMES if i not in KNOWN_MISSES))
def test_each_case_within_the_stated_tolerance(case_id: str) -> None:
    outcome = OUTCOMES[case_id]
    assert abs(outcome.error) <= STATED_TOLERANCE, (
        f"{case_id}: {outcome.compared / GiB:.2f} GiB estimated, "
        f"{outcome.case.measured / GiB:.2f} measured ({outcome.error:+.1%})"
    )


@pytest.mark.parametrize("case_id", sorted(KNOWN_MISSES))
def test_known_misses_are_still_misses(case_id: str) -> None:
    assert case_id in OUTCOMES, f"{case_id} is not a case of the fixture"
    assert not OUTCOMES[case_id].within_tolerance, (
        f"{case_id} is back within its tolerance: remove it from KNOWN_MISSES"
    )
