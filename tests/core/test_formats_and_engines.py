"""The estimator's truth about formats a card cannot run and the engines people deploy (issue 20,
items 1, 5, 7, 8, 10): each rule has a unit test and a test against its published source."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Any

import pytest
from pydantic import ValidationError

from core.catalogue.catalog import default_catalog
from core.catalogue.models import ModelSpec
from core.contract import Precision, Result
from core.formulas.params import arch_of
from core.formulas.weights import model_weight_bytes
from core.model import config as hf_config
from core.sizing.defaults import SERVING_CLASS_MIN_PARAMS_B
from core.sizing.estimate import estimate
from core.units import GiB

CATALOG = default_catalog()
HF_FIXTURES = Path(__file__).parent / "fixtures" / "hf"


def run(**fields: Any) -> Result:
    return estimate(fields, CATALOG)


def codes(result: Result) -> set[str]:
    return {a.code for a in result.assumptions}


def verdict_on(result: Result, gpu: str, count: int) -> str:
    return next(v.verdict for v in result.verdicts if (v.gpu, v.count) == (gpu, count))


# --- item 1: an fp8 checkpoint on a card without fp8 ----------------------------------------------


def test_fp8_checkpoint_on_a100_under_transformers_is_dequantized_to_bf16() -> None:
    fp8 = {"task": "inference", "model": "llama-3.1-8b", "precision": "fp8", "engine": "transformers"}
    on_h100 = run(**fp8, gpus=["h100"])
    on_a100 = run(**fp8, gpus=["a100-80gb"])
    assert on_h100.request.precision == "fp8"
    assert on_a100.request.precision == "bf16"
    assert "fp8_dequantized_bf16" in codes(on_a100)
    assert on_a100.breakdown["weights"] > 1.7 * on_h100.breakdown["weights"]


def test_fp8_checkpoint_on_a100_under_vllm_stays_8_bit_weight_only() -> None:
    r = run(task="inference", model="llama-3.1-8b", precision="fp8", engine="vllm", gpus=["a100-80gb"])
    assert r.request.precision == "fp8"
    assert "fp8_weight_only_marlin" in codes(r)


def test_deepseek_r1_on_eight_a100_is_not_recommended_at_the_edge() -> None:
    """Published fact: DeepSeek R1 ships FP8 (671B, ~642 GiB of weights; its config's
    `quantization_config.fmt = "e4m3"`); vLLM takes 90 % of each card (`gpu_memory_utilization`
    default 0.9, vllm/config.py), 72 GB of an A100 80 GB, and 8 A100s cannot hold 671 GB of weights
    plus runtime in that; transformers cannot run FP8 on Ampere at all (quantizer_finegrained_fp8.py,
    compute capability >= 8.9). Neither engine makes 8× A100 a recommendation."""
    for engine in (None, "transformers", "vllm"):
        fields: dict[str, Any] = {"task": "inference", "model": "deepseek-r1", "gpus": ["a100-80gb"]}
        fields["num_gpus"] = 8
        if engine:
            fields["engine"] = engine
        r = run(**fields)
        assert verdict_on(r, "a100-80gb", 8) == "does_not_fit", engine
        assert r.recommendation is None or r.recommendation.gpu != "a100-80gb", engine


# --- item 8: serving-class models default to vLLM -------------------------------------------------


@pytest.mark.parametrize("model", ["deepseek-r1", "kimi-k2", "glm-4.6", "qwen3-235b-a22b"])
def test_serving_class_moe_defaults_to_vllm_and_says_so(model: str) -> None:
    """Published fact: these models' cards deploy them with vLLM / SGLang (DeepSeek-V3/R1 "How to
    Run Locally"; Kimi K2 "Deployment"; GLM-4.6 and Qwen3-235B-A22B "Quickstart"/"Deployment")."""
    r = run(task="inference", model=model)
    assert r.request.engine == "vllm"
    assert "serving_class_vllm" in codes(r)


def test_small_moe_and_dense_models_keep_transformers() -> None:
    assert CATALOG.models["qwen3-30b-a3b"].params_b < SERVING_CLASS_MIN_PARAMS_B
    for model in ("qwen3-30b-a3b", "llama-3.1-70b", "llama-3.1-405b"):
        r = run(task="inference", model=model)
        assert r.request.engine == "transformers", model
        assert "serving_class_vllm" not in codes(r)


def test_an_explicit_engine_and_training_are_left_alone() -> None:
    assert run(task="inference", model="deepseek-r1", engine="transformers").request.engine == "transformers"
    assert run(task="training", model="qwen3-235b-a22b", method="qlora").request.engine != "vllm"


def test_several_users_still_say_the_users_note() -> None:
    r = run(task="inference", model="deepseek-r1", concurrency=8)
    assert r.request.engine == "vllm"
    assert "parse_serving_vllm" in codes(r) and "serving_class_vllm" not in codes(r)
    assert r.breakdown["weights"] < 700 * GiB


# --- item 5: what a quantized checkpoint leaves in 16 bits ----------------------------------------


def _llama_fp8_config() -> dict[str, Any]:
    """Llama 3.1 8B's config.json with a Meta-style fbgemm_fp8 `quantization_config` (the 405B
    FP8 checkpoint's shape: every self-attention and the first and last MLP listed by name)."""
    path = HF_FIXTURES / "meta-llama--Llama-3.1-8B" / "config.json"
    config: dict[str, Any] = json.loads(path.read_text())
    wide = [f"model.layers.{i}.mlp.{p}" for i in (0, 31) for p in ("gate_proj", "up_proj", "down_proj")]
    wide += [f"model.layers.{i}.self_attn.{p}_proj" for i in range(32) for p in "qkvo"]
    wide.append("lm_head")
    config["quantization_config"] = {"quant_method": "fbgemm_fp8", "modules_to_not_convert": wide}
    return config


def test_hub_config_modules_to_not_convert_are_counted_wide() -> None:
    spec, _ = hf_config.spec_from_config(_llama_fp8_config(), "acme/llama-fp8")
    assert spec.native_precision == "fp8"
    assert spec.unquantized is not None
    assert (spec.unquantized.attention_layers, spec.unquantized.mlp_layers) == (32, 2)
    arch = arch_of(spec)
    assert arch is not None
    plain_arch = dataclasses.replace(arch, unquantized_params=0.0, unquantized_format=None)
    mixed = model_weight_bytes(arch.params, Precision.FP8, arch)
    uniform = model_weight_bytes(plain_arch.params, Precision.FP8, plain_arch)
    # 32 layers of attention (41.9M each) and two MLPs (176M each) add a byte per parameter
    assert mixed - uniform == pytest.approx(32 * 41_943_040 + 2 * 176_160_768, rel=1e-3)
    # the kept modules matter only in the format they were kept in
    assert model_weight_bytes(arch.params, Precision.BF16, arch) == model_weight_bytes(
        plain_arch.params, Precision.BF16, plain_arch
    )


@pytest.mark.parametrize(
    ("entries", "expected"),
    [
        (["model.layers.*.self_attn", "model.layers.*.mlp.router", "lm_head"], (24, 0)),  # gpt-oss
        (["re:.*self_attn.*", "lm_head"], (24, 0)),  # compressed-tensors `ignore` style
        (["lm_head", "model.layers.3.mlp.gate"], None),  # an MoE router is not the MLP
        (["model.layers.99.mlp.down_proj"], None),  # past the last layer
    ],
)
def test_unquantized_module_patterns(entries: list[str], expected: tuple[int, int] | None) -> None:
    wide = hf_config.unquantized_modules(
        {"quant_method": "fp8", "modules_to_not_convert": entries}, 24, "a/b"
    )
    assert (None if wide is None else (wide.attention_layers, wide.mlp_layers)) == expected


def test_llama_405b_fp8_weights_match_metas_checkpoint() -> None:
    """Published fact: Meta's FP8 405B leaves self-attention and the first and last layers in bf16
    (Llama 3 paper, arXiv:2407.21783, sec. 6.2); vLLM loads it at 57.75 GiB per GPU on 8 H100s
    (vllm-project/vllm#6746: "Loading model weights took 57.75 GB", vLLM's GiB), 462 GiB in all.
    Quantizing every linear layer would give 382 GiB, 17 % low."""
    r = run(task="inference", model="llama-3.1-405b", precision="fp8")
    assert 450 * GiB < r.breakdown["weights"] < 465 * GiB
    eight = run(task="inference", model="llama-3.1-405b", precision="fp8", engine="vllm", num_gpus=8)
    assert eight.breakdown["weights"] == pytest.approx(57.75 * GiB, rel=0.03)


def test_catalogue_rejects_more_wide_layers_than_the_model_has() -> None:
    row = CATALOG.models["llama-3.1-405b"].model_dump()
    row["unquantized"] = {"precision": "fp8", "attention_layers": 127, "source": "x"}
    with pytest.raises(ValidationError, match="exceed layers"):
        ModelSpec.model_validate(row)


# --- item 7: what quantizing on load holds ----------------------------------------------------------


def _nf4(model: str, **fields: Any) -> Result:
    return run(task="inference", model=model, precision="nf4", engine="transformers", **fields)


def test_bnb_loading_reserve_is_one_layer_in_16_bits_and_says_so() -> None:
    # Qwen2.5-32B config.json: hidden 5120, 40 query heads and 8 KV heads of 128, MLP 27648
    h, kv, i = 5120, 8 * 128, 27648
    layer = 2 * (2 * h * h + 2 * h * kv + 3 * h * i)  # bytes of q/o, k/v, gate/up/down in 16 bits
    r = _nf4("qwen2.5-32b", context_length=128)  # too short a context to reuse the cached blocks
    note_gb = next(a.params["gb"] for a in r.assumptions if a.code == "loading_reserve")
    assert note_gb == pytest.approx(layer / GiB, abs=0.01)
    # an MoE's experts share one cached block per shape: one expert counts, not 256
    ds = _nf4("deepseek-v3")
    assert next(a.params["gb"] for a in ds.assumptions if a.code == "loading_reserve") < 2


def test_cached_load_blocks_are_reused_by_what_runs_after_loading() -> None:
    short, long = _nf4("qwen2.5-32b", context_length=128), _nf4("qwen2.5-32b", context_length=8192)
    dynamic = long.breakdown["kv_cache"] + long.breakdown["activations"]
    assert dynamic > 1 * GiB  # more than the one layer's blocks: they are all reused
    grows = long.total_bytes - short.total_bytes
    assert grows < 1.1 * dynamic  # the long context paid for less than its KV cache and activations


def test_qlora_paper_33b_in_4_bit_fits_a_24_gb_card() -> None:
    """Published fact: QLoRA (Dettmers et al. 2023, arXiv:2305.14314, sec. 1 and table 4) fine-tuned
    33B LLaMA models in 4 bit on single 24 GB GPUs; serving one in nf4 on a 24 GB card fits
    comfortably once loading holds one layer (0.9 GB at 32B), not a 5 GB shard."""
    r = _nf4("qwen2.5-32b", gpus=["rtx4090"])
    assert verdict_on(r, "rtx4090", 1) == "fits"
    assert r.total_bytes < 21.5 * GiB


def test_int4_quantized_on_load_offers_a_prequantized_checkpoint() -> None:
    r = run(task="inference", model="qwen2.5-32b", precision="int4", gpus=["rtx4090"])
    offer = next(m for m in r.mitigations if m.action == "use_prequantized")
    assert offer.params["precision"] == "awq-int4" and offer.fits
    shipped = run(task="inference", model="qwen2.5-32b", precision="awq-int4", gpus=["rtx4090"])
    assert all(m.action != "use_prequantized" for m in shipped.mitigations)


# --- item 10: assumptions that agree, GGUF pipeline files, video advice ------------------------------


def test_qlora_notes_do_not_say_both_16_bit_and_fp32_embeddings() -> None:
    peft = codes(run(task="training", model="llama-3.1-8b", method="qlora"))
    assert "qlora_fp32_upcast" in peft and "embeddings_wide" not in peft
    # where nothing is cast (Unsloth keeps them bf16), the 16-bit note stays
    unsloth = codes(run(task="training", model="llama-3.1-8b", method="qlora", engine="unsloth"))
    assert "qlora_fp32_upcast" not in unsloth and "embeddings_wide" in unsloth


def test_gguf_pipeline_download_is_the_gguf_transformer_plus_16_bit_rest() -> None:
    def disk(precision: str | None) -> int:
        fields: dict[str, Any] = {"task": "image_generation", "model": "flux.1-dev"}
        if precision:
            fields["precision"] = precision
        host = run(**fields).host
        assert host is not None
        return host.disk_bytes

    flux = CATALOG.models["flux.1-dev"]
    rest = sum(c.params_b * 1e9 * 2 for c in flux.components if c.role != "denoiser")
    assert disk("q8_0") == pytest.approx(11.9e9 * 34 / 32 + rest, rel=1e-3)
    assert disk("q4_k_m") < disk("q8_0") < disk(None)
    # bitsandbytes nf4 downloads the 16-bit files and quantizes them while loading
    assert disk("nf4") == disk(None)


def test_flux_gguf_download_matches_the_published_files() -> None:
    """Published fact: city96/FLUX.1-dev-gguf `flux1-dev-Q8_0.gguf` is 12.7 GB; the pipeline loads
    T5-XXL (text_encoder_2, 9.52 GB bf16), CLIP-L (246 MB) and the VAE (168 MB) from
    black-forest-labs/FLUX.1-dev beside it: 22.6 GB to download, not the 16-bit pipeline's 33.7 GB."""
    host = run(task="image_generation", model="flux.1-dev", precision="q8_0").host
    assert host is not None
    assert host.disk_bytes == pytest.approx(22.6e9, rel=0.03)


def test_video_answers_say_measure_one_short_clip_first() -> None:
    """Published fact: the video class misses by up to 35 % (p90 over 9 published runs, CogVideoX
    and Wan, docs/accuracy.md), doubled outside the frames and sizes those runs cover: there the band
    alone (e.g. ±70 %) tells a renter little, and the answer says to measure one short clip first.
    At the measured settings (Wan 14B, 81 frames at 1280×720) the ±35 % band stands on its own."""
    video = run(task="video_generation", model="wan2.1-t2v-14b", frames=161)
    found = next(a for a in video.assumptions if a.code == "video_measure_first")
    assert int(found.params["percent"]) >= 50
    assert "video_measure_first" not in codes(run(task="video_generation", model="wan2.1-t2v-14b"))
    assert "video_measure_first" not in codes(run(task="image_generation", model="flux.1-dev"))
