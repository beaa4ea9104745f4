"""`estimate()` through its public interface: defaults, breakdown, errors, and the direction every
setting moves the total."""

from typing import Any, get_args

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from tiny_catalog import tiny_catalog

from core.catalogue.catalog import default_catalog
from core.contract import Component, Request, Result
from core.errors import CoreError
from core.sizing.defaults import DEFAULT_CONTEXT, DEFAULT_SEQ_LEN, default_context, default_seq_len
from core.sizing.estimate import estimate

GiB = 2**30
CATALOG = tiny_catalog()


def run(**fields: Any) -> Result:
    return estimate(fields, CATALOG)


def total(**fields: Any) -> int:
    return run(**fields).total_bytes


def test_defaults_are_filled_and_echoed() -> None:
    req = run(task="inference", model="llama-8b").request
    assert (req.precision, req.engine, req.context_length, req.kv_cache_precision) == (
        "bf16",
        "transformers",
        4096,
        "bf16",
    )
    full = run(task="training", model="llama-8b").request
    assert (full.mixed_precision, full.seq_len, full.optimizer, full.batch_size) == ("bf16", 2048, "adamw", 1)
    assert run(task="training", model="llama-8b", method="lora").request.mixed_precision == "none"
    assert run(task="training", model="llama-8b", method="qlora").request.precision == "nf4"
    image = run(task="image_generation", model="flux").request
    assert (image.precision, image.engine, image.resolution) == ("bf16", "diffusers", (1024, 1024))
    assert run(task="video_generation", model="wan").request.frames == 81


def test_gguf_runs_under_llama_cpp_with_fp16_cache() -> None:
    req = run(task="inference", model="llama-8b", precision="q4_k_m").request
    assert (req.engine, req.kv_cache_precision) == ("llama.cpp", "fp16")


def test_context_default_respects_the_model_maximum() -> None:
    assert run(task="inference", model="bert").request.context_length == 512


def test_the_length_defaults_are_the_public_rule_front_ends_offer() -> None:
    """`default_context` / `default_seq_len`: what a request stating no length is sized with (a
    dialog offers the same button); a model not known yet (None) takes the documented defaults."""
    for model in ("bert", "llama-8b"):
        spec = CATALOG.models[model]
        assert run(task="inference", model=model).request.context_length == default_context(spec)
        assert run(task="training", model=model).request.seq_len == default_seq_len(spec)
    assert (default_context(CATALOG.models["bert"]), default_seq_len(CATALOG.models["bert"])) == (512, 512)
    assert (default_context(None), default_seq_len(None)) == (DEFAULT_CONTEXT, DEFAULT_SEQ_LEN)


def test_breakdown_sums_to_total_and_always_has_overhead() -> None:
    cases: list[dict[str, Any]] = [
        dict(task="inference", model="llama-8b"),
        dict(task="training", model="llama-8b", method="qlora"),
        dict(task="image_generation", model="flux"),
        dict(task="video_generation", model="wan", cpu_offload="model"),
        dict(task="training", model="flux", method="lora"),
        dict(task="inference", model="bert"),
    ]
    for fields in cases:
        result = run(**fields)
        assert sum(result.breakdown.values()) == result.total_bytes
        assert "overhead" in result.breakdown
        assert set(result.breakdown) <= set(get_args(Component))
        assert result.range.low_bytes < result.total_bytes < result.range.high_bytes


def test_result_round_trips_as_json() -> None:
    result = run(task="inference", model="llama-8b", concurrency=4)
    assert Result.model_validate_json(result.model_dump_json()) == result


def test_request_object_and_dict_agree() -> None:
    assert estimate(Request(task="inference", model="llama-8b"), CATALOG) == run(
        task="inference", model="llama-8b"
    )


def test_llama_8b_bf16_inference_in_published_range() -> None:
    # 16.06 GB of weights + 0.5 GiB KV at 4k: people run it on 24 GB cards
    result = run(task="inference", model="llama-8b")
    assert result.breakdown["weights"] == 16_060_000_000
    assert result.breakdown["kv_cache"] == GiB // 2
    assert 17e9 < result.total_bytes < 20e9


@pytest.mark.parametrize(
    ("fields", "field"),
    [
        (dict(task="inference", model="llama-8b", context_length=-1), "context_length"),
        (dict(task="inference", model="llama-8b", precision="int3"), "precision"),
        (dict(task="inference", model="no-such-model"), "model"),
        (dict(task="image_generation", model="llama-8b"), "task"),
        (dict(task="inference", model="flux"), "task"),
        (dict(task="training", model="llama-8b", precision="q4_k_m"), "precision"),
        (dict(task="training", model="llama-8b", precision="nf4", method="full"), "precision"),
        (dict(task="inference", model="llama-8b", unknown_field=1), "unknown_field"),
        (dict(model="llama-8b"), "task"),
        (dict(task="inference", model="llama-8b", gpus=["no-such-gpu"]), "gpus"),
    ],
)
def test_invalid_requests_name_the_field(fields: dict[str, Any], field: str) -> None:
    with pytest.raises(CoreError) as err:
        estimate(fields, CATALOG)
    assert err.value.field == field


def test_non_object_request_is_rejected() -> None:
    with pytest.raises(CoreError):
        estimate([1, 2], CATALOG)  # type: ignore[arg-type]


def test_precision_orders_inference_memory() -> None:
    sizes = [total(task="inference", model="llama-8b", precision=p) for p in ("fp32", "bf16", "int8", "nf4")]
    assert sizes == sorted(sizes, reverse=True)
    # bitsandbytes keeps embeddings and LM head in 16 bits; GGUF Q4_K_M quantizes them too
    assert total(task="inference", model="llama-8b", precision="q4_k_m") < sizes[-1]


def test_context_concurrency_and_kv_precision_move_the_kv_cache() -> None:
    base = run(task="inference", model="llama-8b").breakdown["kv_cache"]
    assert run(task="inference", model="llama-8b", context_length=8192).breakdown["kv_cache"] == 2 * base
    assert run(task="inference", model="llama-8b", concurrency=3).breakdown["kv_cache"] == 3 * base
    assert (
        run(task="inference", model="llama-8b", kv_cache_precision="fp8").breakdown["kv_cache"] == base // 2
    )


def test_moe_memory_counts_all_experts() -> None:
    result = run(task="inference", model="mixtral-8x7b")
    assert result.breakdown["weights"] == pytest.approx(46.7e9 * 2)
    assert any(a.code == "moe_total_params" for a in result.assumptions)


def test_tensor_parallel_splits_weights_and_kv() -> None:
    one = run(task="inference", model="llama-70b", engine="vllm")
    four = run(task="inference", model="llama-70b", engine="vllm", num_gpus=4)
    assert four.breakdown["weights"] == pytest.approx(one.breakdown["weights"] / 4, abs=1)
    assert four.breakdown["kv_cache"] == pytest.approx(one.breakdown["kv_cache"] / 4, abs=1)
    assert four.breakdown["overhead"] > one.breakdown["overhead"] - 1  # context per GPU + NCCL


def test_full_training_bytes_per_parameter() -> None:
    # Checkpointed, so the optimizer step is the peak: gradients freed by zero_grad(set_to_none)
    # are back, activations and AMP's autocast copies are gone: 4 + 4 + 8 = 16 bytes / param.
    amp = run(task="training", model="llama-8b", gradient_checkpointing=True).breakdown
    assert "activations" not in amp
    assert amp["weights"] + amp["gradients"] + amp["optimizer_states"] == pytest.approx(16 * 8.03e9)
    pure = run(
        task="training", model="llama-8b", mixed_precision="none", gradient_checkpointing=True
    ).breakdown
    assert pure["weights"] + pure["gradients"] + pure["optimizer_states"] == pytest.approx(8 * 8.03e9)
    # Accumulated gradients stay through the next backward, which then holds all 18 bytes / param
    # (4 fp32 weights + 2 autocast copy + 4 grads + 8 AdamW) next to the activations.
    accumulating = run(
        task="training", model="llama-8b", gradient_checkpointing=True, gradient_accumulation_steps=4
    ).breakdown
    assert accumulating["activations"] > 0
    states = accumulating["weights"] + accumulating["gradients"] + accumulating["optimizer_states"]
    assert states == pytest.approx(18 * 8.03e9, rel=0.02)  # + the LM head gradient in flight


def test_training_peak_is_the_larger_phase() -> None:
    # without checkpointing (now on by default for decoders), so the activations dwarf the gradients
    base = dict(task="training", model="llama-8b", seq_len=8192, gradient_checkpointing=False)
    long = run(**base).breakdown  # activations dwarf the gradients: the backward start is the peak
    assert long["activations"] > 0
    assert long.get("gradients", 0) < 0.1 * 4 * 8.03e9  # at most the LM head's gradient so far
    accumulating = run(**base, gradient_accumulation_steps=8)
    assert accumulating.total_bytes > run(**base).total_bytes
    assert accumulating.breakdown["gradients"] >= 4 * 8.03e9
    codes = {a.code for a in accumulating.assumptions}
    assert "training_peak_accumulation" in codes
    assert "training_peak_backward" in {a.code for a in run(**base).assumptions}
    short = run(task="training", model="llama-8b", seq_len=256, gradient_checkpointing=True)
    assert "training_peak_optimizer_step" in {a.code for a in short.assumptions}


def test_gradient_accumulation_is_validated() -> None:
    with pytest.raises(CoreError) as err:
        run(task="training", model="llama-8b", gradient_accumulation_steps=0)
    assert err.value.field == "gradient_accumulation_steps"


def test_training_settings_move_the_total_the_right_way() -> None:
    base = dict(task="training", model="llama-8b", seq_len=8192)
    full = total(**base, gradient_checkpointing=False)
    assert total(**base) < full  # checkpointing, on by default for decoders
    base["gradient_checkpointing"] = False
    assert total(**base, attention="eager") > full
    assert total(**base, batch_size=4) > full
    assert total(**base, optimizer="adamw_8bit") < full
    assert total(**base, optimizer="sgd") < total(**base, optimizer="adamw_8bit")
    assert total(**base, method="qlora") < total(**base, method="lora") < full
    assert total(**base, method="lora", lora_rank=64) > total(**base, method="lora", lora_rank=8)


def test_once_the_optimizer_step_is_the_peak_activations_no_longer_matter() -> None:
    step = dict(task="training", model="llama-8b", gradient_checkpointing=True)
    assert total(**step, seq_len=256) == total(**step, seq_len=2048)
    assert total(**step, seq_len=2048, gradient_accumulation_steps=4) > total(**step, seq_len=2048)


def test_sharding_reduces_memory_per_gpu() -> None:
    base = dict(task="training", model="llama-8b", num_gpus=8)
    ddp, zero2, zero3 = (total(**base, sharding=s) for s in ("none", "zero2", "zero3"))
    assert zero3 < zero2 < ddp
    # FSDP and ZeRO-3 shard the same; they differ in what stays gathered (FSDP's root, ZeRO-3's
    # reuse window) and in DeepSpeed's gradient bucket
    fsdp = total(**base, sharding="fsdp")
    assert fsdp < zero2 and fsdp == pytest.approx(zero3, rel=0.1)


def test_unsloth_offloads_checkpoints_and_skips_logits() -> None:
    base = dict(task="training", model="llama-8b", method="qlora", seq_len=16384, gradient_checkpointing=True)
    assert total(**base, engine="unsloth") < total(**base)


def test_diffusion_quantization_applies_to_denoiser_and_large_text_encoders() -> None:
    bf16 = run(task="image_generation", model="flux")
    nf4 = run(task="image_generation", model="flux", precision="nf4")
    assert nf4.breakdown["weights"] < bf16.breakdown["weights"]
    assert nf4.breakdown["text_encoders"] < bf16.breakdown["text_encoders"]
    # CLIP (0.12B) stays bf16: more than the T5 at 4 bits would leave alone
    assert nf4.breakdown["text_encoders"] > 4.762e9 * 4.127 / 8


def test_vae_decode_is_the_image_peak_and_tiling_bounds_it() -> None:
    result = run(task="image_generation", model="flux", images=4)
    assert "vae_decode" in result.breakdown
    tiled = run(task="image_generation", model="flux", images=4, vae_tiling=True)
    assert tiled.total_bytes < result.total_bytes


def test_cpu_offload_keeps_less_on_the_gpu() -> None:
    none, model, seq = (
        total(task="video_generation", model="wan", cpu_offload=m) for m in ("none", "model", "sequential")
    )
    assert seq < model < none


def test_more_frames_and_pixels_cost_more() -> None:
    assert total(task="video_generation", model="wan", frames=121) > total(
        task="video_generation", model="wan", frames=33
    )
    assert total(task="image_generation", model="flux", resolution=[2048, 2048]) > total(
        task="image_generation", model="flux"
    )


def test_assumption_codes_are_stable_identifiers() -> None:
    result = run(task="training", model="llama-8b", method="qlora", attention="eager")
    codes = {a.code for a in result.assumptions}
    assert {"overhead", "lora_adapters_fp32", "qlora_fp32_upcast", "eager_attention_scores"} <= codes
    assert all(a.code.replace("_", "").isalnum() and a.text for a in result.assumptions)


def test_shipped_catalogue_sizes_names_and_bare_sizes() -> None:
    catalog = default_catalog()
    assert (
        estimate({"task": "inference", "model": "meta-llama/Llama-3.1-8B-Instruct"}, catalog).model.id
        == "llama-3.1-8b"
    )
    by_size = estimate({"task": "inference", "model": "13B"}, catalog)
    assert by_size.model.source == "size"
    assert by_size.range.high_bytes - by_size.total_bytes > 0.2 * by_size.total_bytes


def test_cpu_offload_applies_to_language_models_too() -> None:
    base = dict(task="inference", model="llama-70b")
    assert total(**base, cpu_offload="sequential") < total(**base) / 4
    train = dict(task="training", model="llama-8b", gradient_checkpointing=True)
    model, seq = (run(**train, cpu_offload=m).breakdown for m in ("model", "sequential"))
    assert "optimizer_states" not in model
    assert seq["weights"] < model["weights"]
    assert any(a.code == "cpu_offload_layers" for a in run(**base, cpu_offload="model").assumptions)
    assert any(a.code == "cpu_offload_zero" for a in run(**train, cpu_offload="model").assumptions)


def test_fp16_full_training_defaults_to_fp16_autocast() -> None:
    assert run(task="training", model="llama-8b", precision="fp16").request.mixed_precision == "fp16"


def test_every_catalogue_model_sizes_for_its_tasks() -> None:
    catalog = default_catalog()
    for model in catalog.models.values():
        diffusion = model.kind in ("image", "video")
        tasks = [
            ("image_generation" if model.kind == "image" else "video_generation")
            if diffusion
            else "inference"
        ]
        # text-to-speech models are sized for speaking only (core/sizing/defaults_tts.py)
        runs = [(tasks[0], {})] + ([] if model.kind == "tts" else [("training", {"method": "qlora"})])
        for task, extra in runs:
            result = estimate({"task": task, "model": model.id, **extra}, catalog)
            assert sum(result.breakdown.values()) == result.total_bytes > 0, (model.id, task)
            assert result.breakdown.get("weights", 0) > 0 or diffusion


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.fixed_dictionaries(
        {
            "task": st.sampled_from(["inference", "training"]),
            "model": st.sampled_from(["llama-8b", "llama-70b", "mixtral-8x7b", "bert"]),
        },
        optional={
            "precision": st.sampled_from(["fp32", "bf16", "fp16", "fp8", "int8", "int4", "nf4", "awq-int4"]),
            "engine": st.sampled_from(["transformers", "vllm", "unsloth"]),
            "context_length": st.integers(1, 200_000),
            "concurrency": st.integers(1, 64),
            "kv_cache_precision": st.sampled_from(["fp16", "fp8", "int4"]),
            "method": st.sampled_from(["full", "lora", "qlora"]),
            "mixed_precision": st.sampled_from(["none", "bf16"]),
            "optimizer": st.sampled_from(["adamw", "adamw_8bit", "adafactor", "sgd", "lion"]),
            "batch_size": st.integers(1, 16),
            "seq_len": st.integers(1, 65_536),
            "gradient_checkpointing": st.booleans(),
            "attention": st.sampled_from(["sdpa", "eager"]),
            "num_gpus": st.integers(1, 16),
            "sharding": st.sampled_from(["none", "zero2", "zero3", "fsdp"]),
            "cpu_offload": st.sampled_from(["none", "model", "sequential"]),
        },
    )
)
def test_any_valid_request_sizes_or_names_the_field(fields: dict[str, Any]) -> None:
    try:
        result = estimate(fields, CATALOG)
    except CoreError as e:
        assert e.field in {"precision", "task", "model"}
        return
    assert sum(result.breakdown.values()) == result.total_bytes > 0
    assert all(v >= 0 for v in result.breakdown.values())
    assert [m.action for m in result.mitigations].count("cpu_offload") <= 2
    assert Result.model_validate_json(result.model_dump_json()) == result


def test_architecture_errors_name_the_architecture_field() -> None:
    with pytest.raises(CoreError) as err:
        estimate({"task": "inference", "model": {"params_b": -7}}, CATALOG)
    assert err.value.field == "model.params_b"
    custom = {"task": "inference", "model": {"params_b": 7, "layers": 32, "hidden_size": 4096}}
    assert estimate(custom, default_catalog()).total_bytes > 14e9
