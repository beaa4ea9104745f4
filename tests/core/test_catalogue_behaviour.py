"""Architecture-specific behaviour on the shipped catalogue, through `estimate()`: GQA/MQA,
sliding windows, MLA, KV precision, MoE, shipped precisions (DeepSeek fp8, GPT-OSS MXFP4),
vLLM tensor parallelism."""

from __future__ import annotations

from typing import Any

from core.catalogue.catalog import default_catalog
from core.contract import Result
from core.formulas.overhead import ALLOCATOR_RESERVE_FRACTION, NCCL_BUFFER_BYTES
from core.parse import understand
from core.sizing.estimate import estimate

CATALOG = default_catalog()
GiB = 2**30


def run(**fields: Any) -> Result:
    return estimate(fields, CATALOG)


def kv(**fields: Any) -> int:
    return run(task="inference", **fields).breakdown["kv_cache"]


def codes(result: Result) -> set[str]:
    return {a.code for a in result.assumptions}


def test_gqa_kv_cache_per_token() -> None:
    # Llama 3.1 8B: 32 layers × 8 KV heads × 128 dims × K and V × 2 bytes = 128 KiB per token
    assert kv(model="llama-3.1-8b", context_length=8192) == 8192 * 32 * 8 * 128 * 2 * 2


def test_sliding_window_layers_stop_growing_past_the_window() -> None:
    # Mistral 7B v0.1: every layer windowed at 4096, so 32k costs what 4k does
    assert kv(model="mistral-7b-v0.1", context_length=32768) == kv(
        model="mistral-7b-v0.1", context_length=4096
    )
    # Gemma 2 9B: 21 of 42 layers windowed at 4096; 8 KV heads of 256 dims
    assert kv(model="gemma-2-9b", context_length=16384) == (21 * 16384 + 21 * 4096) * 8 * 256 * 2 * 2
    # Gemma 3 27B: 52 of 62 layers local (window 1024)
    g3 = kv(model="gemma-3-27b", context_length=32768)
    assert g3 == (10 * 32768 + 52 * 1024) * 16 * 128 * 2 * 2


def test_mla_caches_the_compressed_latent() -> None:
    # DeepSeek V3/R1: 61 layers × (kv_lora_rank 512 + rope 64) per token, at bf16
    assert kv(model="deepseek-r1", context_length=4096) == 61 * (512 + 64) * 4096 * 2


def test_mla_latent_is_not_split_by_tensor_parallelism() -> None:
    one = kv(model="deepseek-r1", context_length=32768, engine="vllm")
    eight = kv(model="deepseek-r1", context_length=32768, engine="vllm", num_gpus=8)
    assert eight == one
    # transformers (device_map) spreads whole layers: each GPU caches an eighth of them
    layers = kv(model="deepseek-r1", context_length=32768, num_gpus=8, engine="transformers")
    assert layers == kv(model="deepseek-r1", context_length=32768, engine="transformers") / 8
    gqa = kv(model="llama-3.1-70b", context_length=32768, engine="vllm")
    assert kv(model="llama-3.1-70b", context_length=32768, engine="vllm", num_gpus=8) == gqa / 8


def test_kv_precision_scales_the_cache() -> None:
    bf16 = kv(model="llama-3.1-8b", context_length=16384)
    assert kv(model="llama-3.1-8b", context_length=16384, kv_cache_precision="fp8") == bf16 / 2
    assert kv(model="llama-3.1-8b", context_length=16384, kv_cache_precision="int8") == bf16 / 2
    assert kv(model="llama-3.1-8b", context_length=16384, kv_cache_precision="int4") == bf16 * 0.5625 / 2


def test_moe_memory_from_total_speed_from_active() -> None:
    result = run(task="inference", model="mixtral-8x7b", precision="bf16")
    assert result.breakdown["weights"] > 46e9 * 2 * 0.98
    assert "moe_total_params" in codes(result)
    dense = run(task="inference", model="llama-3.1-70b", precision="bf16", gpus=["h200"], num_gpus=2)
    moe = run(task="inference", model="mixtral-8x7b", precision="bf16", gpus=["h200"])
    # 13B active per token decode faster than 70B dense on the same card
    assert moe.throughput[0].tokens_per_s > dense.throughput[0].tokens_per_s * 2


def test_deepseek_defaults_to_its_shipped_fp8_and_fits_eight_h200() -> None:
    result = run(task="inference", model="deepseek-r1")
    assert result.request.precision == "fp8"
    assert "native_precision" in codes(result)
    assert 660e9 < result.breakdown["weights"] < 690e9
    # a pre-quantized checkpoint leaves no quantize-on-load residue in the overhead
    assert result.breakdown["overhead"] < 2 * GiB
    rec = result.recommendation
    # served with vLLM (a serving-class MoE): 671 GB over 4 B200 is 168 GB a card, past vLLM's 90 %
    # of 180 GB; 8 × H200 holds 84 GB a card within its 127 GB
    assert result.request.engine == "vllm"
    assert rec is not None and (rec.gpu, rec.count) == ("h200", 8) and rec.in_offers
    # training dequantizes to bf16
    assert run(task="training", model="deepseek-r1", method="lora").request.precision == "bf16"


def test_gpt_oss_ships_mxfp4_experts_and_fits_one_80gb_card() -> None:
    big = run(task="inference", model="gpt-oss-120b")
    assert big.request.precision == "mxfp4"
    assert {"native_precision", "experts_only_quantized"} <= codes(big)
    # openai/gpt-oss-120b safetensors: 65.3 GB (MoE MLPs at 4.25 bits, the rest bf16)
    assert 63e9 < big.breakdown["weights"] < 67e9
    assert next(v for v in big.verdicts if v.gpu == "h100-sxm" and v.count == 1).verdict != "does_not_fit"
    small = run(task="inference", model="gpt-oss-20b")
    assert 13e9 < small.breakdown["weights"] < 14.5e9  # 13.8 GB checkpoint
    # asked in bf16 it is four times bigger
    assert run(task="inference", model="gpt-oss-120b", precision="bf16").breakdown["weights"] > 230e9


def test_quantized_formats_keep_embeddings_wide_and_say_so() -> None:
    result = run(task="inference", model="llama-3.1-8b", precision="awq-int4")
    assert "embeddings_wide" in codes(result)
    # 6.98B linear params at 4.156 bits + 1.05B embeddings and LM head at 16 bits
    assert abs(result.breakdown["weights"] / (6.98e9 * 4.156 / 8 + 1.05e9 * 2) - 1) < 0.02


def test_gguf_defaults_to_llama_cpp_with_an_fp16_cache() -> None:
    result = run(task="inference", model="mixtral-8x7b", precision="q4_k_m")
    assert (result.request.engine, result.request.kv_cache_precision) == ("llama.cpp", "fp16")
    assert "gguf_average_bits" in codes(result)


def test_vllm_preallocation_is_an_assumption() -> None:
    assert "vllm_preallocates" in codes(run(task="inference", model="llama-3.1-8b", engine="vllm"))


def test_tensor_parallel_needs_heads_divisible_by_the_gpu_count() -> None:
    # Qwen2.5 7B has 28 attention heads: vLLM runs it on 1, 2 or 4 GPUs, not 8
    result = run(task="inference", model="qwen2.5-7b", engine="vllm", num_gpus=8)
    note = next(a for a in result.assumptions if a.code == "tensor_parallel_heads")
    assert note.params == {"heads": 28, "num_gpus": 8}
    big = run(task="inference", model="qwen2.5-7b", engine="vllm", context_length=131072, concurrency=64)
    assert big.verdicts and all(v.count != 8 for v in big.verdicts)
    assert big.recommendation is not None and big.recommendation.count in (1, 2, 4)
    assert "tensor_parallel_heads" not in codes(run(task="inference", model="llama-3.1-8b", num_gpus=8))


def test_tensor_parallel_pays_nccl_buffers_per_gpu() -> None:
    one = run(task="inference", model="llama-3.1-8b", engine="vllm")
    two = run(task="inference", model="llama-3.1-8b", engine="vllm", num_gpus=2)

    def fixed(r: Result) -> float:  # overhead less the allocator reserve on activations (vLLM's
        b = r.breakdown  # KV cache is one exact allocation: no reserve on it)
        return b["overhead"] - ALLOCATOR_RESERVE_FRACTION * b["activations"]

    assert abs(fixed(two) - fixed(one) - NCCL_BUFFER_BYTES) < 4
    assert two.breakdown["weights"] == one.breakdown["weights"] // 2


def test_diffusion_fine_tuning_goes_through_training() -> None:
    for model, method in (
        ("sdxl", "lora"),
        ("sd-1.5", "full"),
        ("flux.1-dev", "qlora"),
        ("wan2.1-t2v-14b", "lora"),
    ):
        result = run(task="training", model=model, method=method)
        assert result.total_bytes > result.breakdown["weights"] > 0, model
    lora = run(task="training", model="sdxl", method="lora").total_bytes
    assert run(task="training", model="sdxl", method="full").total_bytes > 2 * lora


def test_video_frames_and_offload() -> None:
    base = {"task": "video_generation", "model": "wan2.1-t2v-14b", "resolution": [1280, 720]}
    # With Wan's real shape (5120 wide, ffn 13824) the causal VAE decode of 720p (4 frames at once)
    # outweighs the denoiser's working set up to ~100 frames; past that, more frames cost more.
    assert run(**base, frames=161).total_bytes > run(**base, frames=81).total_bytes
    none, model, seq = (run(**base, cpu_offload=m).total_bytes for m in ("none", "model", "sequential"))
    assert none > model > seq


def test_many_long_prompts_under_transformers_suggest_vllm() -> None:
    fields = {"task": "inference", "model": "llama-3.1-8b", "context_length": 32768, "concurrency": 8}
    assert run(**fields).request.engine == "vllm"  # several users default to a server
    fields["engine"] = "transformers"  # asked for plain generate(): vLLM is the way out
    result = run(**fields)
    use_vllm = next(m for m in result.mitigations if m.action == "use_vllm")
    assert use_vllm.params == {"engine": "vllm"}
    assert use_vllm.total_bytes == run(**fields | {"engine": "vllm"}).total_bytes < result.total_bytes
    # one short prompt: vLLM's own runtime costs more than it saves, so it is not offered
    assert "use_vllm" not in {m.action for m in run(task="inference", model="llama-3.1-8b").mitigations}


def test_vae_slicing_decodes_one_image_at_a_time() -> None:
    base = {"task": "image_generation", "model": "sdxl", "images": 4}
    four, sliced = run(**base), run(**base, vae_slicing=True)
    one = run(task="image_generation", model="sdxl", images=1)
    assert sliced.breakdown.get("vae_decode", 0) <= one.breakdown.get("vae_decode", 0) + 1
    assert four.total_bytes > sliced.total_bytes
    slicing = next(m for m in four.mitigations if m.action == "vae_slicing")
    assert slicing.total_bytes == sliced.total_bytes
    assert understand("sdxl 4 картинки vae slicing", CATALOG).request.vae_slicing


def test_a_mitigation_that_needs_more_cards_says_how_many() -> None:
    result = run(task="training", model="llama-3.1-70b")
    adam8 = next(m for m in result.mitigations if m.action == "optimizer_8bit")
    assert not adam8.fits and adam8.fits_count is not None and adam8.fits_count > 1
    assert adam8.fits_on == f"{adam8.fits_count}x {adam8.fits_gpu}"
    sharded = run(task="training", model="llama-3.1-70b", optimizer="adamw_8bit", num_gpus=adam8.fits_count)
    fitting = [v for v in sharded.verdicts if v.gpu == adam8.fits_gpu and v.count == adam8.fits_count]
    assert fitting and fitting[0].verdict != "does_not_fit"
    qlora = next(m for m in result.mitigations if m.action == "use_qlora")
    assert qlora.fits and qlora.fits_count == 1


def test_a_smaller_model_comes_from_the_same_generation() -> None:
    def smaller(model: str) -> object:
        result = run(task="inference", model=model, gpus=["rtx4090"])
        return next(m.params["model"] for m in result.mitigations if m.action == "smaller_model")

    assert smaller("llama-3.1-70b") == "llama-3.1-8b"  # not the larger but older llama-2-13b
    assert smaller("qwen2.5-72b") == "qwen2.5-32b"
    assert smaller("gemma-2-27b") == "gemma-2-9b"
