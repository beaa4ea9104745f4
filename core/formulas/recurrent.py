"""Recurrent state of hybrid and linear-attention models: what a Mamba or gated-delta layer keeps per
sequence instead of a KV cache. It does not grow with the context.

Shapes as vLLM allocates them, one state per running request (`MambaStateShapeCalculator`,
vllm/model_executor/layers/mamba/mamba_utils.py), per layer and tensor-parallel rank `tp`:
- Mamba (Jamba): conv (d_conv − 1) × intermediate, SSM intermediate × d_state (`mamba1_state_shape`);
- Mamba-2 (Nemotron-H, Granite-4.0-H, Falcon-H1): conv (d_conv − 1) × (intermediate + 2·groups·d_state),
  SSM heads × head_dim × d_state (`mamba2_state_shape`);
- gated delta rule (Qwen3-Next): conv (kernel − 1) × (2·k_heads·d_k + v_heads·d_v), recurrent
  v_heads × d_v × d_k (`gated_delta_net_state_shape`).
transformers keeps the same two tensors per layer (`HybridMambaAttentionDynamicCache` for Jamba:
conv_states (b, intermediate, d_conv), ssm_states (b, intermediate, d_state); Qwen3-Next's cache:
conv_states and recurrent_states); its conv window is d_conv wide, one column more than vLLM's.
dtypes: the conv state in the model dtype, the SSM state in `mamba_ssm_cache_dtype` (`auto`: the
model dtype; float32 where the model's config or vLLM's per-model default says so, `state_fp32`);
llama.cpp keeps both in F32 (`state_element_bytes`).
"""

from __future__ import annotations

import math

from core.contract import Engine, Precision
from core.precision import compute_bytes
from core.specs import ModelSpec, RecurrentLayers

FP32 = 4


def state_element_bytes(engine: Engine | None, precision: Precision) -> float:
    """Bytes of a conv-state element: the model's compute dtype (vLLM `mamba_cache_dtype` "auto",
    transformers' caches); llama.cpp keeps both states in F32 (`llama_memory_recurrent(..., GGML_TYPE_F32,
    GGML_TYPE_F32, ...)` in src/llama-model.cpp `create_memory`)."""
    return FP32 if engine is Engine.LLAMA_CPP else compute_bytes(precision)


def mamba_state_elements(intermediate: int, d_state: int, d_conv: int, tp: int = 1) -> tuple[float, float]:
    """(conv, SSM) elements of one Mamba layer for one sequence (`mamba1_state_shape`)."""
    return (d_conv - 1) * intermediate / tp, intermediate * d_state / tp


def mamba2_state_elements(
    intermediate: int, groups: int, heads: int, head_dim: int, d_state: int, d_conv: int, tp: int = 1
) -> tuple[float, float]:
    """(conv, SSM) elements of one Mamba-2 layer for one sequence (`mamba2_state_shape`): groups not
    divisible by `tp` are replicated to `tp` (`extra_groups_for_head_shards`)."""
    groups = groups if groups % tp == 0 else groups + tp - groups
    conv = (d_conv - 1) * (intermediate + 2 * groups * d_state) / tp
    return conv, math.ceil(heads / tp) * head_dim * d_state


def gated_delta_state_elements(
    k_heads: int, v_heads: int, d_k: int, d_v: int, kernel: int, tp: int = 1
) -> tuple[float, float]:
    """(conv, recurrent) elements of one gated-delta layer for one sequence
    (`gated_delta_net_state_shape`)."""
    conv = (kernel - 1) * (2 * k_heads * d_k + v_heads * d_v) / tp
    return conv, v_heads / tp * d_v * d_k


def layer_state_elements(r: RecurrentLayers, tp: int = 1) -> tuple[float, float]:
    """(conv, SSM) elements of one of `r`'s layers for one sequence."""
    if r.kind == "gated_delta":
        assert r.key_heads and r.value_heads and r.key_head_dim and r.value_head_dim
        return gated_delta_state_elements(
            r.key_heads, r.value_heads, r.key_head_dim, r.value_head_dim, r.conv_kernel, tp
        )
    assert r.intermediate_size and r.state_size
    if r.kind == "mamba2":
        assert r.heads and r.head_dim
        return mamba2_state_elements(
            r.intermediate_size, r.groups, r.heads, r.head_dim, r.state_size, r.conv_kernel, tp
        )
    return mamba_state_elements(r.intermediate_size, r.state_size, r.conv_kernel, tp)


def recurrent_state_bytes(spec: ModelSpec, b: int, e: float, tp: int = 1) -> float:
    """The recurrent state of `b` sequences on one of `tp` ranks: every recurrent layer's conv state
    in `e` bytes and SSM state in `e` (fp32 when `state_fp32`). 0 for a model without such layers."""
    r = spec.recurrent
    if r is None:
        return 0.0
    conv, ssm = layer_state_elements(r, tp)
    ssm_e = FP32 if r.state_fp32 else e
    return r.layers * (conv * e + ssm * ssm_e) * b
