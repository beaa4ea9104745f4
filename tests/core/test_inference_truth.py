"""What inference frameworks really allocate and read (issue 8, items 1, 3, 8, 9): the residue of
quantizing on load, vLLM's budget and KV pool, decode speed of MoE and split models, host advice."""

from __future__ import annotations

import math
from typing import Any

import pytest

from core.advice import TENSOR_PARALLEL_DECODE_EFFICIENCY, Sizer
from core.advice.decode import decode_weight_bytes, moe_layer_s
from core.advice.speed import allreduce_latency_s, fixed_step_s, multi_gpu_speedup
from core.catalogue.catalog import default_catalog
from core.contract import Engine, Request, Result
from core.formulas import vllm
from core.formulas.overhead import (
    ALLOCATOR_RESERVE_FRACTION,
    CHECKPOINT_SHARD_BYTES,
    CUDA_CONTEXT_BYTES,
    ENGINE_RUNTIME_BYTES,
    QUANTIZE_ON_LOAD_RESIDUE_FRACTION,
    quantize_on_load_residue_bytes,
)
from core.formulas.params import arch_of
from core.sizing.defaults import fill_defaults
from core.sizing.estimate import estimate
from core.units import GiB

CATALOG = default_catalog()


def run(**fields: Any) -> Result:
    return estimate(fields, CATALOG)


def residue(r: Result) -> float:
    """Overhead less the CUDA context and the allocator reserve (one GPU, transformers)."""
    b = r.breakdown
    reserve = ALLOCATOR_RESERVE_FRACTION * (b["kv_cache"] + b["activations"])
    return b["overhead"] - CUDA_CONTEXT_BYTES - reserve


# --- 1. quantize-on-load residue -----------------------------------------------------------------


def test_residue_is_bounded_by_one_checkpoint_shard_not_by_the_model() -> None:
    small = 1e9  # 2 GB of 16-bit weights: the fitted share of them
    assert quantize_on_load_residue_bytes(small) == QUANTIZE_ON_LOAD_RESIDUE_FRACTION * 2 * small
    # past one shard in flight, the model's size no longer matters
    sizes = (70e9, 405e9, 671e9)
    assert {quantize_on_load_residue_bytes(p) for p in sizes} == {CHECKPOINT_SHARD_BYTES}
    assert CHECKPOINT_SHARD_BYTES == 5 * 10**9  # save_pretrained's max_shard_size="5GB"


@pytest.mark.parametrize("model", ["llama-3.1-70b", "llama-3.1-405b", "deepseek-v3"])
def test_large_models_quantized_on_load_carry_one_shard(model: str) -> None:
    # torchao int4 keeps the measured share (its loaders hold the 16-bit model first); bitsandbytes
    # nf4 through transformers holds one layer in flight (tests/core/test_formats_and_engines.py)
    r = run(task="inference", model=model, precision="int4", engine="transformers")
    assert abs(residue(r) - CHECKPOINT_SHARD_BYTES) < 8


def test_a_32b_model_quantized_on_load_does_not_fit_24_gb_its_prequantized_files_do() -> None:
    """bitsandbytes quantizing Qwen2.5-32B while loading leaves allocator slivers that a shipped
    AWQ/GPTQ/GGUF file does not: at ~30B a 24 GB card runs out while quantizing
    (unslothai/unsloth#2504, Qwen3-30B-A3B load_in_4bit on an RTX 4090)."""

    def on_4090(precision: str) -> str:
        r = run(task="inference", model="qwen2.5-32b", precision=precision, gpus=["rtx4090"])
        return next(v.verdict for v in r.verdicts if (v.gpu, v.count) == ("rtx4090", 1))

    assert on_4090("int4") == "does_not_fit"
    assert {on_4090(p) for p in ("awq-int4", "gptq-int4", "q4_k_m")} == {"fits"}


@pytest.mark.parametrize("precision", ["fp8", "awq-int4", "gptq-int4", "q4_k_m"])
def test_pre_quantized_checkpoints_leave_no_residue(precision: str) -> None:
    r = run(task="inference", model="llama-3.1-70b", precision=precision)
    assert abs(residue(r)) < 8


def test_vllm_leaves_no_residue_it_empties_the_cache_before_profiling() -> None:
    vllm_int4 = run(task="inference", model="llama-3.1-8b", precision="int4", engine="vllm")
    vllm_awq = run(task="inference", model="llama-3.1-8b", precision="awq-int4", engine="vllm")
    assert vllm_int4.breakdown["overhead"] == vllm_awq.breakdown["overhead"]


def test_qwen_32b_int4_on_a_24gb_card_pays_at_most_one_shard() -> None:
    before_cap = QUANTIZE_ON_LOAD_RESIDUE_FRACTION * 2 * 30.5e9  # ~6.1 GB under the old rule
    r = run(task="inference", model="qwen2.5-32b", precision="int4", gpus=["rtx4090"])
    assert residue(r) == pytest.approx(CHECKPOINT_SHARD_BYTES, abs=8) and residue(r) < before_cap


# --- 3. vLLM's budget and its KV pool ------------------------------------------------------------


def test_vllm_verdicts_compare_with_gpu_memory_utilization_of_the_card() -> None:
    card = CATALOG.gpus["h100-sxm"].usable_bytes
    served = run(task="inference", model="llama-3.1-8b", engine="vllm", gpus=["h100-sxm"])
    assert served.request.gpu_memory_utilization == vllm.VLLM_GPU_MEMORY_UTILIZATION == 0.9
    assert served.target is not None and served.target.usable_bytes == math.ceil(card * 0.9)
    assert all(v.usable_bytes == math.ceil(CATALOG.gpus[v.gpu].usable_bytes * 0.9) for v in served.verdicts)
    own = run(
        task="inference", model="llama-3.1-8b", engine="vllm", gpus=["h100-sxm"], gpu_memory_utilization=0.5
    )
    assert own.target is not None and own.target.usable_bytes == math.ceil(card * 0.5)
    plain = run(task="inference", model="llama-3.1-8b", gpus=["h100-sxm"])
    assert plain.request.gpu_memory_utilization is None
    assert plain.target is not None and plain.target.usable_bytes == card


def test_a_request_that_fits_the_card_but_not_vllms_budget_does_not_fit_under_vllm() -> None:
    # 8 users of qwen2.5-7b: find the context whose peak lands between 90% and 100% of a 48 GB card
    card = CATALOG.gpus["rtx4090-48gb"].usable_bytes
    for context in range(60_000, 90_001, 1024):
        r = run(
            task="inference",
            model="qwen2.5-7b",
            engine="vllm",
            concurrency=8,
            context_length=context,
            gpus=["rtx4090-48gb"],
        )
        if 0.9 * card < r.total_bytes <= card:
            assert r.target is not None and r.target.verdict == "does_not_fit"
            assert r.serving_capacity is not None
            assert r.serving_capacity.max_concurrency < 8  # the pool holds fewer than the 8 asked
            return
    pytest.fail("no context lands between 90% and 100% of the card")


def test_vllm_charges_no_allocator_reserve_on_its_kv_cache() -> None:
    short = run(task="inference", model="llama-3.1-8b", engine="vllm", context_length=8192)
    long = run(task="inference", model="llama-3.1-8b", engine="vllm", context_length=65536)
    assert long.breakdown["kv_cache"] > 7 * short.breakdown["kv_cache"]
    assert long.breakdown["overhead"] == short.breakdown["overhead"]  # activations: 8192 tokens at once
    assert short.breakdown["overhead"] == round(
        CUDA_CONTEXT_BYTES
        + ENGINE_RUNTIME_BYTES[Engine.VLLM]
        + ALLOCATOR_RESERVE_FRACTION * short.breakdown["activations"]
    )


def test_kv_tokens_are_whole_blocks_and_concurrency_is_blocks_per_request() -> None:
    per_token = 128 * 1024  # llama-3.1-8b bf16: 2 × 32 layers × 8 heads × 128 × 2 bytes
    assert vllm.kv_cache_tokens(10 * GiB, per_token) == 81920
    # a partial block is lost
    assert vllm.kv_cache_tokens(per_token * 16 * 3 + per_token * 15, per_token) == 48
    assert vllm.kv_cache_tokens(-1.0, per_token) == 0
    assert vllm.max_concurrency(81920, 8192) == 10.0
    assert vllm.max_concurrency(81920, 8200) == 5120 / 513  # 8200 tokens take 513 blocks


def test_serving_capacity_is_what_vllm_would_log() -> None:
    r = run(task="inference", model="llama-3.1-8b", engine="vllm", context_length=8192, gpus=["h100-sxm"])
    cap = r.serving_capacity
    assert cap is not None and (cap.gpu, cap.count, cap.context_length) == ("h100-sxm", 1, 8192)
    assert cap.budget_bytes == math.ceil(CATALOG.gpus["h100-sxm"].usable_bytes * 0.9)
    # the pool: the budget less everything that is not KV cache
    assert cap.kv_cache_bytes == round(cap.budget_bytes - (r.total_bytes - r.breakdown["kv_cache"]))
    per_token = r.breakdown["kv_cache"] / 8192
    assert cap.kv_cache_tokens % vllm.VLLM_BLOCK_SIZE == 0
    assert 0 <= cap.kv_cache_bytes - cap.kv_cache_tokens * per_token < vllm.VLLM_BLOCK_SIZE * per_token
    assert math.floor(cap.max_concurrency) == cap.kv_cache_tokens // 8192
    assert "vllm_budget" in {a.code for a in r.assumptions}
    assert run(task="inference", model="llama-3.1-8b").serving_capacity is None


def test_more_cards_give_vllm_more_kv_tokens() -> None:
    one = run(task="inference", model="llama-3.1-70b", engine="vllm", gpus=["h100-sxm"], num_gpus=2)
    four = run(task="inference", model="llama-3.1-70b", engine="vllm", gpus=["h100-sxm"], num_gpus=4)
    assert one.serving_capacity and four.serving_capacity
    assert four.serving_capacity.kv_cache_tokens > 2 * one.serving_capacity.kv_cache_tokens


# --- 8. decode speed -----------------------------------------------------------------------------


def _request(**fields: Any) -> Request:
    spec = CATALOG.models[fields["model"]]
    filled, _ = fill_defaults(Request.model_validate({"task": "inference"} | fields), spec)
    return filled


def test_moe_decode_reads_active_experts_plus_the_dense_part() -> None:
    spec = CATALOG.models["gpt-oss-120b"]
    arch = arch_of(spec)
    assert arch is not None
    read = decode_weight_bytes(spec, arch, _request(model="gpt-oss-120b"))
    experts = 4 * 36 * 3 * 2880 * 2880  # 4 of 128 experts, mxfp4
    head = 201088 * 2880  # bf16
    dense = 5.13e9 - experts - head  # attention, router, norms: bf16
    assert read == pytest.approx(experts * 4.25 / 8 + dense * 2 + head * 2)
    # not active/total of the whole checkpoint's bytes
    assert read > 1.5 * 65.3e9 * 5.13 / 116.83


def test_gpt_oss_120b_on_one_h100_decodes_near_published_runs() -> None:
    r = run(task="inference", model="gpt-oss-120b", gpus=["h100-sxm"])
    speed = next(t for t in r.throughput if t.gpu == "h100-sxm")
    # The bytes alone give ~455 tok/s; the ~500 once quoted here was an aggregate over several
    # streams. One stream on one A100 runs at 90 (vllm-project/vllm#22331): at this size the fixed
    # cost of 36 MoE layers (moe_layer_s) outweighs the bytes, so an H100 is only a bit faster.
    assert 70 < speed.tokens_per_s < 200


def test_dense_decode_skips_the_input_embedding_table() -> None:
    spec = CATALOG.models["llama-3.1-8b"]
    arch = arch_of(spec)
    assert arch is not None
    read = decode_weight_bytes(spec, arch, _request(model="llama-3.1-8b", precision="bf16"))
    assert read == pytest.approx((8.03e9 - 128256 * 4096) * 2)


def test_tensor_parallel_scaling_by_interconnect() -> None:
    pcie, nvlink = CATALOG.gpus["rtx4090-48gb"], CATALOG.gpus["h100-sxm"]
    assert pcie.interconnect == "pcie" and nvlink.interconnect == "nvlink"
    assert multi_gpu_speedup(pcie, 1, Engine.VLLM) == 1.0
    assert multi_gpu_speedup(pcie, 2, Engine.VLLM) == pytest.approx(2 * 0.70)
    assert multi_gpu_speedup(pcie, 4, Engine.VLLM) == pytest.approx(4 * 0.70**2)
    assert multi_gpu_speedup(nvlink, 8, Engine.VLLM) == pytest.approx(8 * 0.875**3)
    assert TENSOR_PARALLEL_DECODE_EFFICIENCY["pcie"] < TENSOR_PARALLEL_DECODE_EFFICIENCY["nvlink"] < 1
    # whole layers spread over the cards: one works at a time
    assert multi_gpu_speedup(pcie, 4, Engine.TRANSFORMERS) == 1.0
    assert multi_gpu_speedup(pcie, 2, Engine.LLAMA_CPP) == 1.0


def test_four_pcie_cards_decode_slower_than_linear() -> None:
    one = run(task="inference", model="llama-3.1-8b", engine="vllm", gpus=["rtx4090-48gb"])
    four = run(task="inference", model="llama-3.1-8b", engine="vllm", gpus=["rtx4090-48gb"], num_gpus=4)
    s1 = next(t for t in one.throughput if (t.gpu, t.count) == ("rtx4090-48gb", 1)).tokens_per_s
    s4 = next(t for t in four.throughput if (t.gpu, t.count) == ("rtx4090-48gb", 4)).tokens_per_s
    assert 1.5 * s1 < s4 < 2.5 * s1
    assert "decode_tensor_parallel" in {a.code for a in four.assumptions}


# --- 9. host advice ------------------------------------------------------------------------------


def test_host_ram_never_holds_the_kv_cache() -> None:
    server = run(task="inference", model="llama-3.1-8b", context_length=131072, concurrency=16)
    assert server.breakdown["kv_cache"] > 200 * GiB
    assert server.host.ram_min_bytes == round(8.03e9 * 2)
    assert server.host.ram_recommended_bytes < 40 * GiB


def test_a_model_quantized_on_load_downloads_its_16_bit_checkpoint() -> None:
    qlora = run(task="training", model="llama-3.1-70b", method="qlora")
    assert qlora.host.disk_bytes > 70.55e9 * 2  # 141 GB of bf16 + the adapters' checkpoint
    unsloth = run(task="training", model="llama-3.1-70b", method="qlora", engine="unsloth")
    assert unsloth.host.disk_bytes < 50e9  # Unsloth's pre-quantized -bnb-4bit upload
    awq = run(task="inference", model="llama-3.1-70b", precision="awq-int4")
    assert awq.host.disk_bytes == awq.breakdown["weights"]
    int4 = run(task="inference", model="llama-3.1-70b", precision="int4")
    assert int4.host.disk_bytes == round(CATALOG.models["llama-3.1-70b"].params_b * 1e9 * 2)


def test_a_variant_that_switches_to_vllm_is_checked_against_its_budget() -> None:
    spec = CATALOG.models["llama-3.1-8b"]
    sizer = Sizer(_request(model="llama-3.1-8b"), spec, arch_of(spec))
    gpu = CATALOG.gpus["h100-sxm"]
    assert sizer.usable(gpu) == gpu.usable_bytes  # transformers: the whole card
    assert sizer.usable(gpu, engine=Engine.VLLM) == math.ceil(gpu.usable_bytes * 0.9)  # `use_vllm`
    assert sizer.usable(gpu, engine=Engine.VLLM, gpu_memory_utilization=0.8) == math.ceil(
        gpu.usable_bytes * 0.8
    )


def test_sliding_window_layers_count_in_vllms_tokens_but_take_only_their_window() -> None:
    # gpt-oss-120b: 18 of 36 layers keep 128 tokens. vLLM logs its pool in tokens of all 36 layers
    # (kv_cache_utils `_report_kv_cache_config`), and a 4K request takes about half of that
    r = run(task="inference", model="gpt-oss-120b", engine="vllm", gpus=["h100-sxm"])
    cap = r.serving_capacity
    assert cap is not None
    every_layer = 2 * 36 * 8 * 64 * 2  # bytes per token, all layers at bf16
    assert cap.kv_cache_tokens == vllm.kv_cache_tokens(cap.kv_cache_bytes, every_layer)
    plain = cap.kv_cache_tokens // 4096
    assert 1.8 * plain < cap.max_concurrency < 2.0 * plain + 2


def test_allreduce_latency_follows_nccls_ring_model() -> None:
    nvlink, pcie = CATALOG.gpus["h200"], CATALOG.gpus["rtx4090-48gb"]
    assert allreduce_latency_s(nvlink, 2) == pytest.approx(6.6e-6 + 2 * 0.6e-6)
    assert allreduce_latency_s(nvlink, 8) == pytest.approx(6.6e-6 + 14 * 0.6e-6)
    assert allreduce_latency_s(pcie, 4) == pytest.approx(6.6e-6 + 6 * 1.0e-6)


def test_fixed_step_cost_only_where_it_is_paid() -> None:
    h200 = CATALOG.gpus["h200"]
    dense, moe = arch_of(CATALOG.models["llama-3.1-70b"]), arch_of(CATALOG.models["deepseek-r1"])
    assert dense is not None and moe is not None
    assert fixed_step_s(dense, h200, 1, Engine.VLLM) == 0.0  # one card, dense: bytes only
    assert fixed_step_s(dense, h200, 4, Engine.TRANSFORMERS) == 0.0  # whole layers, no all-reduce
    assert fixed_step_s(dense, h200, 4, Engine.VLLM) == pytest.approx(80 * 2 * allreduce_latency_s(h200, 4))
    assert fixed_step_s(moe, h200, 1, Engine.VLLM) == pytest.approx(61 * moe_layer_s(Engine.VLLM))


def test_deepseek_r1_on_eight_h200_decodes_like_published_runs() -> None:
    r = run(task="inference", model="deepseek-r1", engine="vllm", gpus=["h200"], num_gpus=8)
    speed = next(t for t in r.throughput if (t.gpu, t.count) == ("h200", 8)).tokens_per_s
    assert 13 < speed < 78  # published single-stream runs 13-78; the bytes alone gave 471
    codes = {a.code: a.params for a in r.assumptions}
    assert codes["decode_moe_layers"] == {"layers": 61, "us": 220}
    assert codes["decode_allreduce"] == {"count": 8, "us": 15.0, "per_layer": 2}


def test_a_dense_model_on_one_card_has_no_fixed_step_notes() -> None:
    codes = {a.code for a in run(task="inference", model="llama-3.1-8b", gpus=["h100-sxm"]).assumptions}
    assert "decode_bandwidth_bound" in codes
    assert not codes & {"decode_moe_layers", "decode_allreduce"}
