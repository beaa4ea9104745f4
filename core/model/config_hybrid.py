"""Hybrid and linear-attention layers read from a Hugging Face config.json: which layers keep a
recurrent state instead of a KV cache, and its shape (`core.catalogue.models.RecurrentLayers`).

The keys are read as the models' transformers configs name them (listed at `recurrent_layer_count`):
gated delta rule (Qwen3-Next, Qwen3.5), Mamba (Jamba), Mamba-2 (Granite-4.0-H, Nemotron-H, Bamba,
Falcon-H1). A config without such layers gives None (`recurrent_from_config`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

_RECURRENT_TYPES = {"linear_attention", "mamba", "mamba2", "linear"}


def _first(cfg: Mapping[str, Any], *keys: str) -> int | None:
    for key in keys:
        value = cfg.get(key)
        if isinstance(value, int | float) and not isinstance(value, bool) and value > 0:
            return int(value)
    return None


# The keys, as the models' transformers configs name them:
# - gated delta rule (Qwen3-Next, Qwen3.5): `layer_types` ("linear_attention" / "full_attention") or
#   `full_attention_interval`; `linear_num_key_heads`, `linear_num_value_heads`, `linear_key_head_dim`,
#   `linear_value_head_dim`, `linear_conv_kernel_dim`; `mamba_ssm_dtype` "float32" keeps the state fp32;
# - Mamba (Jamba): `layers_block_type` or `attn_layer_period` / `attn_layer_offset`; `mamba_d_state`,
#   `mamba_d_conv`, `mamba_expand` (intermediate = expand × hidden);
# - Mamba-2: Granite-4.0-H `layer_types` ("mamba" / "attention"), Nemotron-H `hybrid_override_pattern`
#   ("M" Mamba, "*" attention), Bamba `attn_layer_indices`, Falcon-H1 (attention and Mamba side by
#   side in every layer); heads `mamba_n_heads` / `mamba_num_heads`, `mamba_d_head` / `mamba_head_dim`,
#   `mamba_d_state` / `ssm_state_size`, `mamba_n_groups` / `n_groups`, `mamba_d_conv` / `conv_kernel`.
def recurrent_layer_count(cfg: Mapping[str, Any], model_type: str, layers: int) -> int:
    """How many of `layers` keep a recurrent state (0: none)."""
    types = cfg.get("layer_types") or cfg.get("layers_block_type")
    if isinstance(types, list) and types:
        return sum(1 for t in types[:layers] if str(t).lower() in _RECURRENT_TYPES)
    pattern = cfg.get("hybrid_override_pattern")
    if isinstance(pattern, str) and pattern:
        return pattern.count("M")
    interval = _first(cfg, "full_attention_interval")
    if interval and cfg.get("linear_num_value_heads"):
        return layers - layers // interval
    period = _first(cfg, "attn_layer_period")
    if period and cfg.get("mamba_d_state"):
        offset = int(cfg.get("attn_layer_offset") or 0)
        return layers - sum(1 for i in range(layers) if i % period == offset)
    indices = cfg.get("attn_layer_indices")
    if isinstance(indices, list) and cfg.get("mamba_d_state"):
        return layers - len(indices)
    if model_type.startswith("falcon_h1"):
        return layers
    return 0


# Nemotron-H's SSM state is fp32 unless its config says otherwise (vLLM `NemotronHForCausalLMConfig`
# `DEFAULT_MAMBA_SSM_CACHE_DTYPE = "float32"`, vllm/model_executor/models/config.py).
def _ssm_fp32(cfg: Mapping[str, Any], model_type: str) -> bool:
    said = cfg.get("mamba_ssm_cache_dtype") or cfg.get("mamba_ssm_dtype")
    if said is not None:
        return str(said) in ("float32", "fp32")
    return model_type.startswith("nemotron_h")


def recurrent_from_config(
    cfg: Mapping[str, Any], model_type: str, layers: int, hidden: int
) -> dict[str, Any] | None:
    """`ModelSpec.recurrent` as a dict, or None for a model without recurrent layers."""
    count = recurrent_layer_count(cfg, model_type, layers)
    if count <= 0:
        return None
    fp32 = _ssm_fp32(cfg, model_type)
    if cfg.get("linear_num_value_heads"):
        return {
            "kind": "gated_delta",
            "layers": count,
            "key_heads": _first(cfg, "linear_num_key_heads"),
            "value_heads": _first(cfg, "linear_num_value_heads"),
            "key_head_dim": _first(cfg, "linear_key_head_dim"),
            "value_head_dim": _first(cfg, "linear_value_head_dim"),
            "conv_kernel": _first(cfg, "linear_conv_kernel_dim") or 4,
            "state_fp32": fp32,
        }
    heads = _first(cfg, "mamba_n_heads", "mamba_num_heads")
    head_dim = _first(cfg, "mamba_d_head", "mamba_head_dim")
    expand = _first(cfg, "mamba_expand", "expand") or 2
    common = {
        "layers": count,
        "state_size": _first(cfg, "mamba_d_state", "ssm_state_size", "state_size"),
        "conv_kernel": _first(cfg, "mamba_d_conv", "conv_kernel") or 4,
        "parallel": model_type.startswith("falcon_h1"),
        "state_fp32": fp32,
    }
    if heads and head_dim:
        inner = _first(cfg, "mamba_d_ssm") or heads * head_dim
        groups = _first(cfg, "mamba_n_groups", "n_groups") or 1
        return {"kind": "mamba2", "intermediate_size": inner, "heads": heads, "head_dim": head_dim,
                "groups": groups, **common}  # fmt: skip
    return {"kind": "mamba", "intermediate_size": expand * hidden, **common}


def mtp_layers_from_config(cfg: Mapping[str, Any]) -> int | None:
    """Multi-token-prediction layers the checkpoint ships (DeepSeek-V3 `num_nextn_predict_layers`,
    Qwen3-Next / Qwen3.5 `mtp_num_hidden_layers`)."""
    return _first(cfg, "num_nextn_predict_layers", "mtp_num_hidden_layers")
