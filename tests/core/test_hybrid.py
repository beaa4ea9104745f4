"""Hybrid and linear-attention models: a KV cache for the attention layers only, a recurrent state per
sequence for the others (shapes as vLLM's `MambaStateShapeCalculator`), against published figures;
the Hugging Face look-up reads the hybrid keys."""

from __future__ import annotations

from typing import Any

import pytest

from core.catalogue.catalog import default_catalog
from core.catalogue.models import ModelSpec, RecurrentLayers
from core.formulas.kv_cache import model_kv_cache_bytes
from core.formulas.recurrent import recurrent_state_bytes
from core.model.config import spec_from_config
from core.model.hub import MemoryHub
from core.sizing.estimate import estimate

GiB = 2**30
CONTEXT_256K = 262_144


def model(model_id: str) -> ModelSpec:
    return default_catalog().models[model_id]


# --- published figures -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("model_id", "published_gb", "source"),
    [
        (
            "jamba-v0.1",
            4,
            "Jamba paper (arXiv:2403.19887) Table 1: KV cache at 256K context, 16-bit: Jamba 4GB",
        ),
        ("mixtral-8x7b", 32, "Jamba paper (arXiv:2403.19887) Table 1: Mixtral 32GB at 256K, 16-bit"),
        ("llama-2-7b", 128, "Jamba paper (arXiv:2403.19887) Table 1: LLAMA-2 6.7B 128GB at 256K, 16-bit"),
        ("jamba-1.5-mini", 4, "Jamba-1.5 paper (arXiv:2408.12570) Table 1: Jamba-1.5-Mini 4GB at 256K"),
        ("jamba-1.5-large", 9, "Jamba-1.5 paper (arXiv:2408.12570) Table 1: Jamba-1.5-Large 9GB at 256K"),
        ("llama-3.1-70b", 80, "Jamba-1.5 paper (arXiv:2408.12570) Table 1: LLAMA-3.1 70B 80GB at 256K"),
    ],
)
def test_kv_cache_at_256k_matches_the_jamba_papers(model_id: str, published_gb: int, source: str) -> None:
    """The papers' KV-cache column (16-bit, one sequence of 256K tokens, every layer keeping the whole
    context; the meter is the cache's size, GB as 2^30 bytes): a hybrid caches its attention layers
    only — 4 of Jamba's 32, 9 of Jamba-1.5-Large's 72."""
    kv = model_kv_cache_bytes(model(model_id), CONTEXT_256K, 1, 2, windows=False)
    assert kv / GiB == pytest.approx(published_gb, rel=0.02), source


def test_qwen3_5_style_per_token_kv_matches_a_vllm_log() -> None:
    """mitchross/talos-argocd-proxmox PR #1995 (vLLM boot log, Qwen3.x 27B hybrid, full_attention_interval
    4, fp8 KV cache): "16 layers x 4 kv-heads x 256 head-dim x 2 (K,V) x 1B fp8 = 32 KiB/token", and
    "GPU KV cache size: 302,921 tokens" in a pool of 2 × 4.99 GiB (the rest: the gated-delta states).
    Meter: vLLM's KV-cache log lines."""
    spec = ModelSpec(
        id="qwen-hybrid-27b", name="Qwen hybrid 27B", family="qwen", kind="llm", source="test",
        params_b=27.0, layers=64, hidden_size=5120, attention_heads=24, kv_heads=4, head_dim=256,
        vocab_size=248_320,
        recurrent=RecurrentLayers(kind="gated_delta", layers=48, key_heads=16, value_heads=48,
                                  key_head_dim=128, value_head_dim=128),
    )  # fmt: skip
    per_token = model_kv_cache_bytes(spec, 1, 1, 1)
    assert per_token == 32 * 1024
    assert 302_921 * per_token <= 2 * 4.99 * GiB


def test_qwen3_next_state_per_sequence_follows_vllm_shapes() -> None:
    """vllm/model_executor/layers/mamba/mamba_utils.py `gated_delta_net_state_shape`: conv
    (kernel − 1) × (2·16·128 + 32·128), recurrent 32 × 128 × 128, per layer; 36 such layers."""
    conv = 3 * (2 * 16 * 128 + 32 * 128)
    recurrent = 32 * 128 * 128
    assert recurrent_state_bytes(model("qwen3-next-80b-a3b"), 1, 2) == 36 * (conv + recurrent) * 2
    # Jamba (`mamba1_state_shape`): conv (d_conv − 1) × 8192, SSM 8192 × 16, 28 layers
    assert recurrent_state_bytes(model("jamba-1.5-mini"), 1, 2) == 28 * (3 * 8192 + 8192 * 16) * 2


# --- properties ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("model_id", ["qwen3-next-80b-a3b", "jamba-1.5-mini", "jamba-1.5-large"])
def test_the_state_does_not_grow_with_the_context_and_the_kv_does(model_id: str) -> None:
    short, long = (
        estimate({"task": "inference", "model": model_id, "context_length": c, "engine": "vllm"})
        for c in (8192, 131_072)
    )
    assert short.breakdown["recurrent_state"] == long.breakdown["recurrent_state"] > 0
    assert long.breakdown["kv_cache"] == 16 * short.breakdown["kv_cache"]
    users = estimate({"task": "inference", "model": model_id, "concurrency": 4, "engine": "vllm"})
    assert users.breakdown["recurrent_state"] == pytest.approx(4 * short.breakdown["recurrent_state"], abs=4)
    assert any(a.code == "hybrid_state" for a in short.assumptions)


def test_a_hybrid_caches_a_quarter_of_what_the_same_model_all_attention_would() -> None:
    spec = model("qwen3-next-80b-a3b")
    all_attention = spec.model_copy(update={"recurrent": None})
    assert model_kv_cache_bytes(spec, 4096, 1, 2) * 4 == model_kv_cache_bytes(all_attention, 4096, 1, 2)


def test_fp32_state_doubles_the_ssm_part() -> None:
    spec = model("jamba-1.5-mini")
    assert spec.recurrent is not None
    wide = spec.model_copy(update={"recurrent": spec.recurrent.model_copy(update={"state_fp32": True})})
    conv, ssm = 28 * 3 * 8192 * 2, 28 * 8192 * 16
    assert recurrent_state_bytes(spec, 1, 2) == conv + 2 * ssm
    assert recurrent_state_bytes(wide, 1, 2) == conv + 4 * ssm


def test_a_recurrent_row_must_give_its_shape() -> None:
    with pytest.raises(ValueError, match="mamba2 layers need heads, head_dim"):
        RecurrentLayers(kind="mamba2", layers=4, intermediate_size=4096, state_size=128)


# --- Hugging Face configs -----------------------------------------------------------------------------

QWEN3_NEXT: dict[str, Any] = {  # https://huggingface.co/Qwen/Qwen3-Next-80B-A3B-Instruct/blob/main/config.json
    "model_type": "qwen3_next", "hidden_size": 2048, "num_hidden_layers": 48, "vocab_size": 151936,
    "head_dim": 256, "num_attention_heads": 16, "num_key_value_heads": 2, "intermediate_size": 5120,
    "num_experts": 512, "num_experts_per_tok": 10, "moe_intermediate_size": 512,
    "shared_expert_intermediate_size": 512, "linear_num_key_heads": 16, "linear_key_head_dim": 128,
    "linear_num_value_heads": 32, "linear_value_head_dim": 128, "linear_conv_kernel_dim": 4,
    "full_attention_interval": 4, "tie_word_embeddings": False, "max_position_embeddings": 262144,
    "mtp_num_hidden_layers": 1, "hidden_act": "silu",
}  # fmt: skip
JAMBA: dict[str, Any] = {  # https://huggingface.co/ai21labs/AI21-Jamba-1.5-Mini/blob/main/config.json
    "model_type": "jamba", "hidden_size": 4096, "num_hidden_layers": 32, "num_attention_heads": 32,
    "num_key_value_heads": 8, "intermediate_size": 14336, "num_experts": 16, "num_experts_per_tok": 2,
    "vocab_size": 65536, "attn_layer_period": 8, "attn_layer_offset": 4, "mamba_d_state": 16,
    "mamba_d_conv": 4, "mamba_expand": 2, "tie_word_embeddings": False, "hidden_act": "silu",
}  # fmt: skip
MAMBA2_HYBRID: dict[str, Any] = {  # Nemotron-H style: `hybrid_override_pattern`, M = Mamba-2, * = attention
    "model_type": "nemotron_h", "hidden_size": 4096, "num_hidden_layers": 8, "num_attention_heads": 32,
    "num_key_value_heads": 8, "head_dim": 128, "intermediate_size": 16384, "vocab_size": 131072,
    "hybrid_override_pattern": "M-M*M-M-", "mamba_num_heads": 128, "mamba_head_dim": 64,
    "ssm_state_size": 128, "n_groups": 8, "conv_kernel": 4, "tie_word_embeddings": False,
    "hidden_act": "relu2",
}  # fmt: skip


@pytest.mark.parametrize(
    ("config", "kind", "recurrent", "attention"),
    [(QWEN3_NEXT, "gated_delta", 36, 12), (JAMBA, "mamba", 28, 4), (MAMBA2_HYBRID, "mamba2", 4, 4)],
)
def test_the_hub_look_up_reads_the_hybrid_keys(
    config: dict[str, Any], kind: str, recurrent: int, attention: int
) -> None:
    spec, _ = spec_from_config(config, "org/hybrid")
    assert spec.recurrent is not None and spec.recurrent.kind == kind
    assert spec.recurrent.layers == recurrent and spec.attention_layers == attention


def test_nemotron_h_keeps_its_ssm_state_in_fp32_unless_its_config_says() -> None:
    """vLLM `NemotronHForCausalLMConfig.DEFAULT_MAMBA_SSM_CACHE_DTYPE = "float32"`."""
    spec, _ = spec_from_config(MAMBA2_HYBRID, "org/nemotron-h")
    assert spec.recurrent is not None and spec.recurrent.state_fp32
    said, _ = spec_from_config({**MAMBA2_HYBRID, "mamba_ssm_cache_dtype": "bfloat16"}, "org/nemotron-h")
    assert said.recurrent is not None and not said.recurrent.state_fp32


def test_a_hub_hybrid_is_sized_like_the_catalogue_row() -> None:
    hub = MemoryHub({"Qwen/Qwen3-Next-80B-A3B-Base": (QWEN3_NEXT, {"BF16": 79_674_391_296})})
    request = {"task": "inference", "context_length": 131_072, "engine": "vllm"}
    hub_result = estimate({**request, "model": "Qwen/Qwen3-Next-80B-A3B-Base"}, hub=hub)
    row = estimate({**request, "model": "qwen3-next-80b-a3b"})
    assert hub_result.breakdown["kv_cache"] == row.breakdown["kv_cache"]
    assert hub_result.breakdown["recurrent_state"] == row.breakdown["recurrent_state"]
    mtp = estimate({**request, "model": "Qwen/Qwen3-Next-80B-A3B-Base", "speculative": "mtp"}, hub=hub)
    assert mtp.speculative is not None and mtp.speculative.draft_bytes > 0


def test_llama_cpp_keeps_the_states_in_f32() -> None:
    """llama.cpp src/llama-model.cpp `create_memory`: `llama_memory_recurrent(..., GGML_TYPE_F32,
    GGML_TYPE_F32, ...)` for the conv (r) and SSM (s) states, whatever the weights."""
    base = {"task": "inference", "model": "jamba-1.5-mini", "context_length": 8192}
    gguf = estimate({**base, "precision": "q4_k_m"})
    vllm = estimate({**base, "engine": "vllm"})
    assert gguf.breakdown["recurrent_state"] == 2 * vllm.breakdown["recurrent_state"]


def test_transformers_keeps_a_gated_delta_state_in_fp32() -> None:
    """transformers modeling_qwen3_next.py `torch_chunk_gated_delta_rule`: query, key, value are cast
    to float32 and `last_recurrent_state` is built `.to(value)` and returned as is to the cache
    (`update_recurrent_state`); the conv state stays in the model dtype."""
    base = {"task": "inference", "model": "qwen3-next-80b-a3b", "context_length": 8192}
    hf = estimate({**base, "engine": "transformers"})
    served = estimate({**base, "engine": "vllm"})
    conv, recurrent = 36 * 3 * (2 * 16 * 128 + 32 * 128), 36 * 32 * 128 * 128
    assert served.breakdown["recurrent_state"] == (conv + recurrent) * 2
    assert hf.breakdown["recurrent_state"] == conv * 2 + recurrent * 4
    state = next(a for a in hf.assumptions if a.code == "hybrid_state")
    assert state.params["fp32"] == "yes"
