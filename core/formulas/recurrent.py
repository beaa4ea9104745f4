"""Recurrent state of hybrid and linear-attention models: what a Mamba or gated-delta layer keeps per
sequence instead of a KV cache. It does not grow with the context.

Shapes as vLLM allocates them, one state per running request, per layer and tensor-parallel rank
(`MambaStateShapeCalculator`, vllm/model_executor/layers/mamba/mamba_utils.py; each shape function
below names its counterpart); dtypes per engine in `state_bytes`.
"""

from __future__ import annotations

import math

from core.catalogue.models import ModelSpec, RecurrentLayers
from core.contract import Engine, Precision
from core.formulas.precision import compute_bytes

FP32 = 4


def state_bytes(engine: Engine | None, precision: Precision, r: RecurrentLayers) -> tuple[float, float]:
    """Bytes of a (conv, SSM) state element. vLLM: the compute dtype for both (`mamba_cache_dtype` /
    `mamba_ssm_cache_dtype` "auto"), the SSM state fp32 where the model keeps it so (`state_fp32`).
    llama.cpp: both F32 (`llama_memory_recurrent(..., GGML_TYPE_F32, GGML_TYPE_F32, ...)`,
    src/llama-model.cpp `create_memory`). transformers: a gated-delta layer's recurrent state is fp32
    (modeling_qwen3_next.py `torch_chunk_gated_delta_rule` computes and returns it in float32, as fla's
    kernels do); Mamba caches are in the model dtype (`HybridMambaAttentionDynamicCache`)."""
    e = compute_bytes(precision)
    if engine is Engine.LLAMA_CPP:
        return FP32, FP32
    if r.state_fp32 or (engine is Engine.TRANSFORMERS and r.kind == "gated_delta"):
        return e, FP32
    return e, e


# Per layer and tensor-parallel rank `tp`, as vLLM's `MambaStateShapeCalculator` has them:
# - Mamba (Jamba): conv (d_conv − 1) × intermediate, SSM intermediate × d_state (`mamba1_state_shape`);
# - Mamba-2 (Nemotron-H, Granite-4.0-H, Falcon-H1): conv (d_conv − 1) × (intermediate +
#   2·groups·d_state), SSM heads × head_dim × d_state (`mamba2_state_shape`);
# - gated delta rule (Qwen3-Next): conv (kernel − 1) × (2·k_heads·d_k + v_heads·d_v), recurrent
#   v_heads × d_v × d_k (`gated_delta_net_state_shape`).
# transformers keeps the same two tensors per layer (`HybridMambaAttentionDynamicCache` for Jamba:
# conv_states (b, intermediate, d_conv), ssm_states (b, intermediate, d_state); Qwen3-Next's cache:
# conv_states and recurrent_states); its conv window is d_conv wide, one column more than vLLM's.
# dtypes (`state_bytes`): the conv state in the model dtype, the SSM state in `mamba_ssm_cache_dtype`
# (`auto`: the model dtype; float32 where the model's config or vLLM's per-model default says so,
# `state_fp32`); llama.cpp keeps both in F32, transformers a gated-delta state in fp32.
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


def recurrent_state_bytes(
    spec: ModelSpec, b: int, e: float, tp: int = 1, ssm_e: float | None = None
) -> float:
    """The recurrent state of `b` sequences on one of `tp` ranks: every recurrent layer's conv state
    in `e` bytes and SSM state in `ssm_e` (default `e`, fp32 when `state_fp32`). 0 for a model without
    such layers."""
    r = spec.recurrent
    if r is None:
        return 0.0
    conv, ssm = layer_state_elements(r, tp)
    if ssm_e is None:
        ssm_e = FP32 if r.state_fp32 else e
    return r.layers * (conv * e + ssm * ssm_e) * b
