"""Speculative decoding: the draft's share of the card (total = without + draft + its KV + verify
scratch), the speed-up against published figures, the JSON contract, the CLI and free text."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from core.catalogue.catalog import default_catalog
from core.contract import SpeculativeMethod
from core.errors import CoreError
from core.formulas.params import arch_of
from core.formulas.speculative import expected_tokens_per_step, mtp_params, speedup
from core.parse import understand
from core.sizing.estimate import estimate
from core.sizing.speculative import PARTS, methods

ROOT = Path(__file__).resolve().parents[2]

CASES: list[dict[str, Any]] = [
    {"model": "llama-3.1-70b", "draft_model": "llama-3.2-1b", "num_gpus": 2, "engine": "vllm"},
    {"model": "llama-3.1-70b", "draft_model": "llama-3.2-1b", "num_gpus": 2, "engine": "transformers"},
    {"model": "llama-3.1-8b", "speculative": "eagle3", "engine": "vllm", "concurrency": 8},
    {"model": "llama-3.1-8b", "speculative": "eagle", "engine": "vllm", "context_length": 32768},
    {"model": "llama-3.1-8b", "speculative": "ngram", "precision": "q4_k_m"},
    {"model": "deepseek-v3", "speculative": "mtp", "num_gpus": 8, "engine": "vllm"},
    {"model": "qwen3-next-80b-a3b", "speculative": "mtp", "engine": "vllm", "num_speculative_tokens": 2},
]


@pytest.mark.parametrize("case", CASES)
def test_speculative_total_is_base_plus_draft_plus_scratch(case: dict[str, Any]) -> None:
    """The property of issue 22: the speculative answer = the same request without it + the draft's
    weights + its KV cache + the verify scratch, per card; and the answer says the plain figure."""
    request = {"task": "inference", **case}
    with_it = estimate(request)
    plain = {
        k: v for k, v in request.items() if k not in ("speculative", "draft_model", "num_speculative_tokens")
    }
    base = estimate(plain)
    spec = with_it.speculative
    assert spec is not None
    parts = spec.draft_bytes + spec.draft_kv_bytes + spec.scratch_bytes
    assert with_it.total_bytes == base.total_bytes + parts
    assert spec.without_bytes == base.total_bytes
    assert sum(with_it.breakdown[k] for k in PARTS if k in with_it.breakdown) == parts
    assert spec.scratch_bytes > 0
    if spec.method is SpeculativeMethod.NGRAM:  # prompt lookup: no weights, no cache
        assert spec.draft_bytes == spec.draft_kv_bytes == 0
    else:
        assert spec.draft_bytes > 0 and spec.draft_kv_bytes > 0
    assert 1 < spec.speedup_low <= spec.speedup_high <= spec.num_speculative_tokens + 1


def test_the_draft_grows_with_users_and_context_and_splits_over_cards() -> None:
    one = estimate({"task": "inference", "model": "llama-3.1-70b", "draft_model": "llama-3.2-1b"}).speculative
    many = estimate(
        {"task": "inference", "model": "llama-3.1-70b", "draft_model": "llama-3.2-1b", "concurrency": 8}
    ).speculative
    split = estimate(
        {"task": "inference", "model": "llama-3.1-70b", "draft_model": "llama-3.2-1b", "num_gpus": 2}
    ).speculative
    assert one and many and split
    assert many.draft_kv_bytes == 8 * one.draft_kv_bytes and many.scratch_bytes == 8 * one.scratch_bytes
    assert split.draft_bytes == pytest.approx(one.draft_bytes / 2, abs=1)


# --- published figures -------------------------------------------------------------------------------


def test_deepseek_v3_mtp_module_is_14b_parameters() -> None:
    """deepseek-ai/DeepSeek-V3 model card ("Model Downloads" note): the Hugging Face checkpoint is 685B
    parameters, "671B of the Main Model weights and 14B of the Multi-Token Prediction (MTP) Module
    weights". Meter: parameter count of the published safetensors. 14B is rounded: ±10%."""
    spec = default_catalog().models["deepseek-v3"]
    arch = arch_of(spec)
    assert arch is not None and spec.mtp_layers == 1
    assert mtp_params(arch, 1) / 1e9 == pytest.approx(14, rel=0.10)


def test_deepseek_v3_mtp_speed_up_is_the_published_1_8x() -> None:
    """DeepSeek-V3 technical report (arXiv:2412.19437) sec. 5.4.3: with one MTP module the second
    token is accepted 85–90% of the time, "1.8 times TPS". Meter: decode tokens per second."""
    result = estimate({"task": "inference", "model": "deepseek-v3", "speculative": "mtp", "num_gpus": 8})
    spec = result.speculative
    assert spec is not None and spec.num_speculative_tokens == 1
    assert spec.speedup_low * 0.95 <= 1.8 <= spec.speedup_high * 1.05


def test_eagle3_acceptance_range_matches_the_published_acceptance_lengths() -> None:
    """nebius/EAGLE3-Llama-3.3-70B-Instruct model card, "Comparison with Public Checkpoints":
    yuhuili/EAGLE3-LLaMA3.1-Instruct-8B in vLLM at K = 7, temperature 1: acceptance length τ 2.77
    (MT-bench), 3.34 (GSM8K), 3.49 (HumanEval). Meter: mean tokens accepted per verify step. The
    method's α range gives τ spanning them (±2%)."""
    row = methods()[SpeculativeMethod.EAGLE3]
    low, high = (expected_tokens_per_step(a, 7) for a in (row.acceptance_low, row.acceptance_high))
    for tau in (2.77, 3.34, 3.49):
        assert low * 0.98 <= tau <= high * 1.02


def test_leviathan_formula_reproduces_the_papers_worked_example() -> None:
    """Leviathan et al. 2023 (arXiv:2211.17192) sec. 3: the expected tokens per step is
    (1 − α^(γ+1)) / (1 − α), which tends to 1 / (1 − α) as γ grows (4 at α = 0.75), and the walltime
    improvement is that divided by (γc + 1)."""
    assert expected_tokens_per_step(0.75, 200) == pytest.approx(4.0, rel=1e-6)
    assert speedup(0.75, 3, 0.0) == pytest.approx(expected_tokens_per_step(0.75, 3))
    assert speedup(0.75, 3, 0.1) == pytest.approx(expected_tokens_per_step(0.75, 3) / 1.3)


# --- the contract -------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("fields", "field"),
    [
        ({"speculative": "draft_model"}, "draft_model"),
        ({"draft_model": "no-such-model-1b"}, "draft_model"),
        ({"speculative": "eagle3", "draft_model": "llama-3.2-1b"}, "draft_model"),
        ({"speculative": "mtp"}, "speculative"),  # Llama ships no MTP layer
        ({"speculative": "eagle3", "num_speculative_tokens": 0}, "num_speculative_tokens"),
        ({"speculative": "eagle3", "num_speculative_tokens": 33}, "num_speculative_tokens"),
        ({"speculative": "medusa"}, "speculative"),
    ],
)
def test_invalid_speculative_requests_name_the_field(fields: dict[str, Any], field: str) -> None:
    with pytest.raises(CoreError) as error:
        estimate({"task": "inference", "model": "llama-3.1-8b", **fields})
    assert error.value.field == field


def test_speculative_decoding_is_for_inference() -> None:
    with pytest.raises(CoreError) as error:
        estimate({"task": "training", "model": "llama-3.1-8b", "speculative": "ngram"})
    assert error.value.field == "speculative"


def test_defaults_are_filled_and_echoed() -> None:
    result = estimate({"task": "inference", "model": "llama-3.1-8b", "draft_model": "Llama 3.2 1B"})
    assert result.request.speculative is SpeculativeMethod.DRAFT_MODEL
    assert result.request.draft_model == "llama-3.2-1b"
    assert result.request.num_speculative_tokens == methods()[SpeculativeMethod.DRAFT_MODEL].default_tokens
    eagle = estimate({"task": "inference", "model": "llama-3.1-8b", "speculative": "eagle3"})
    assert eagle.request.engine is not None and eagle.request.engine.value == "vllm"
    assert any(a.code == "speculative_vllm" for a in eagle.assumptions)
    assert estimate({"task": "inference", "model": "llama-3.1-8b"}).speculative is None


def test_the_cli_json_contract_carries_the_speculative_result() -> None:
    request = {"task": "inference", "model": "llama-3.1-8b", "speculative": "eagle3", "concurrency": 4}
    done = subprocess.run(
        [sys.executable, "-m", "core", "estimate", "--json"],
        input=json.dumps(request), capture_output=True, text=True, cwd=ROOT, timeout=60, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    spec = result["speculative"]
    assert spec["method"] == "eagle3" and spec["num_speculative_tokens"] == 3
    assert (
        result["total_bytes"]
        == spec["without_bytes"] + spec["draft_bytes"] + spec["draft_kv_bytes"] + (spec["scratch_bytes"])
    )
    assert {"draft_model", "draft_kv_cache", "speculative_scratch"} <= set(result["breakdown"])


# --- free text ----------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "model", "fields"),
    [
        ("llama 3.1 70b с драфт моделью llama 3.2 1b на 2 h100", "llama-3.1-70b",
         {"speculative": "draft_model", "draft_model": "llama-3.2-1b", "num_gpus": 2}),
        ("llama 3.1 70b with draft model llama 3.2 1b on 2 h100", "llama-3.1-70b",
         {"speculative": "draft_model", "draft_model": "llama-3.2-1b", "num_gpus": 2}),
        ("eagle3 для llama 3.1 8b", "llama-3.1-8b", {"speculative": "eagle3"}),
        ("EAGLE-3 for Llama 3.1 8B, 8 users", "llama-3.1-8b", {"speculative": "eagle3", "concurrency": 8}),
        ("deepseek v3 с mtp", "deepseek-v3", {"speculative": "mtp"}),
        ("llama 3.1 8b n-gram", "llama-3.1-8b", {"speculative": "ngram"}),
        ("llama 3.1 8b int4 32k", "llama-3.1-8b", {"speculative": None}),
    ],
)  # fmt: skip
def test_free_text_names_the_method_and_the_draft(text: str, model: str, fields: dict[str, Any]) -> None:
    request = understand(text).request
    assert request.model == model
    for name, value in fields.items():
        got = getattr(request, name)
        assert (got.value if hasattr(got, "value") else got) == value, name


def test_under_vllm_the_draft_shares_the_kv_pool() -> None:
    """vLLM pre-allocates its KV pool: the draft's weights and scratch come out of it, and the draft's
    layers cache every token beside the target's, so the pool holds fewer tokens."""
    request = {"task": "inference", "model": "llama-3.1-8b", "engine": "vllm", "gpus": ["h100"]}
    plain, drafted = estimate(request), estimate({**request, "draft_model": "llama-3.2-1b"})
    a, b, spec = plain.serving_capacity, drafted.serving_capacity, drafted.speculative
    assert a is not None and b is not None and spec is not None
    assert a.kv_cache_bytes - b.kv_cache_bytes == pytest.approx(spec.draft_bytes + spec.scratch_bytes, abs=2)
    # Llama 3.2 1B caches 16 layers × 8 heads × 64 per token beside the 8B's 32 × 8 × 128
    per_token = 2 * 2 * (32 * 8 * 128 + 16 * 8 * 64)
    assert b.kv_cache_tokens == pytest.approx(b.kv_cache_bytes / per_token, abs=16)
