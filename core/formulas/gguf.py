"""GGUF file size by tensor: llama.cpp's quantization mixes, as `llama-quantize` picks them.

A K-quant "mix" (Q4_K_M, Q3_K_M...) is not one bit width: the output tensor, `attn_v`, `ffn_down`
(in some layers) and an 8-expert MoE's attention get more bits, as `llama_tensor_get_type_impl`
(llama.cpp `src/llama-quant.cpp`) gives them. The tensors are derived from `Arch`; parameters the
shape does not account for take the mix's base type; row lengths the block size does not divide fall
back as `tensor_type_fallback` does. Not modelled: Falcon's own rules, the imatrix-only i-quants.
"""

from __future__ import annotations

from functools import lru_cache

from core.contract import Precision
from core.formulas.params import Arch

# Bytes per block / weights per block (ggml-common.h: block_q2_K 84 B, q3_K 110 B, q4_K 144 B,
# q5_K 176 B, q6_K 210 B per 256 weights; q4_0 18 B, q4_1 20 B, q5_0 22 B, q5_1 24 B, q8_0 34 B
# per 32 weights).
TYPE_BITS: dict[str, float] = {
    "q2_K": 84 * 8 / 256,
    "q3_K": 110 * 8 / 256,
    "q4_K": 144 * 8 / 256,
    "q5_K": 176 * 8 / 256,
    "q6_K": 210 * 8 / 256,
    "q4_0": 18 * 8 / 32,
    "q4_1": 20 * 8 / 32,
    "q5_0": 22 * 8 / 32,
    "q5_1": 24 * 8 / 32,
    "q8_0": 34 * 8 / 32,
    "f16": 16.0,
}
BLOCK = {t: (256 if t.endswith("_K") else 32) for t in TYPE_BITS}
BLOCK["f16"] = 1
# tensor_type_fallback: the type a row length not divisible by the block size gets instead.
FALLBACK = {"q2_K": "q4_0", "q3_K": "q4_0", "q4_K": "q5_0", "q5_K": "q5_1", "q6_K": "q8_0"}

# The default tensor type of each file type (llama_model_quantize_impl: `default_type`).
BASE_TYPE: dict[Precision, str] = {
    Precision.Q2_K: "q2_K",
    Precision.Q3_K_M: "q3_K",
    Precision.Q4_K_M: "q4_K",
    Precision.Q5_K_M: "q5_K",
    Precision.Q6_K: "q6_K",
    Precision.Q4_0: "q4_0",
    Precision.Q4_1: "q4_1",
    Precision.Q8_0: "q8_0",
}
# llama.cpp names a llama/qwen2 model of 80 layers LLM_TYPE_70B (llama-model.cpp) and gives its
# small GQA attn_v Q5_K instead of Q3_K/Q4_K.
LAYERS_OF_70B = 80


def use_more_bits(i_layer: int, n_layers: int) -> bool:
    """llama-quant.cpp `use_more_bits` (C integer division)."""
    return i_layer < n_layers // 8 or i_layer >= 7 * n_layers // 8 or (i_layer - n_layers // 8) % 3 == 2


def _fit(t: str, ncols: int) -> str:
    if ncols % BLOCK[t] == 0:
        return t
    fallback = FALLBACK.get(t, "f16")
    return fallback if ncols % BLOCK[fallback] == 0 else "f16"


def _attn_v(ftype: Precision, base: str, i: int, arch: Arch) -> str:
    t = base
    if ftype is Precision.Q2_K:
        t = "q4_K" if arch.a // arch.k >= 4 else "q3_K"
    elif ftype is Precision.Q3_K_M:
        t = "q5_K" if i < 2 else "q4_K"
    elif ftype in (Precision.Q4_K_M, Precision.Q5_K_M) and use_more_bits(i, arch.L):
        t = "q6_K"
    if arch.L == LAYERS_OF_70B and arch.k < arch.a and t in ("q3_K", "q4_K"):
        t = "q5_K"
    return "q8_0" if arch.experts == 8 else t


def _ffn_down(ftype: Precision, base: str, i: int, n: int) -> str:
    if ftype is Precision.Q2_K:
        return "q3_K"
    if ftype is Precision.Q3_K_M:
        return "q5_K" if i < n // 16 else "q4_K"
    if ftype in (Precision.Q4_K_M, Precision.Q5_K_M) and use_more_bits(i, n):
        return "q6_K"
    return base


def _attn_output(ftype: Precision, base: str, arch: Arch) -> str:
    if arch.experts == 8:
        return "q5_K" if ftype in (Precision.Q2_K, Precision.Q3_K_M, Precision.Q4_K_M) else base
    return {Precision.Q2_K: "q3_K", Precision.Q3_K_M: "q4_K"}.get(ftype, base)


@lru_cache(maxsize=256)
# llama.cpp `src/llama-quant.cpp` `llama_tensor_get_type_impl`: the output tensor Q6_K, `attn_v` and
# `ffn_down` more bits in some layers (`use_more_bits`: the first and last eighth and every third layer
# between), and on an 8-expert MoE (Mixtral) `attn_k`/`attn_v` Q8_0 and `attn_output` Q5_K. How much
# the wider tensors weigh depends on the architecture: Llama 2 7B's Q4_K_M averages 4.84 bits, Llama
# 3.1 8B's 4.89 (its 128K-token output matrix is 6 % of the model), Mixtral 8x22B's 4.87.
# Tensors from `Arch`: token embeddings, output head, per layer q/k/v/o and the (expert) MLP
# matrices; shared experts, MLA projections and biases take the base type; a row length the block
# does not divide falls back (Q4_K → Q5_0, Q6_K → Q8_0...: `FALLBACK`).
def gguf_weight_bytes(ftype: Precision, arch: Arch) -> float:
    """Bytes of the quantized weights of a GGUF file of `ftype` for this architecture.

    Cached: a pure function of two hashable values, walked layer by layer (61 layers × 7 tensors for
    DeepSeek V3), and asked once per card count while an answer is sized.
    """
    base = BASE_TYPE[ftype]
    h, q, kv, i, e = arch.h, arch.q_dim, arch.kv_dim, arch.i, max(arch.experts, 1)
    output = base if base == "q8_0" else "q6_K"
    bits = 0.0
    counted = 0.0

    def add(params: float, t: str, ncols: int) -> None:
        nonlocal bits, counted
        bits += params * TYPE_BITS[_fit(t, ncols)]
        counted += params

    add(arch.V * h, output if arch.tied else base, h)
    if not arch.tied:
        add(arch.V * h, output, h)
    for layer in range(arch.L):
        add(h * q, base, h)
        add(h * kv, "q8_0" if arch.experts == 8 else base, h)
        add(h * kv, _attn_v(ftype, base, layer, arch), h)
        add(q * h, _attn_output(ftype, base, arch), q)
        for _ in range(2 if arch.gated else 1):  # gate, up
            add(h * i * e, base, h)
        add(i * h * e, _ffn_down(ftype, base, layer, arch.L), i)
    rest = arch.params - counted
    if rest >= 0:
        return (bits + rest * TYPE_BITS[base]) / 8
    return bits / counted * arch.params / 8  # the shape over-counts: keep its average width


def gguf_bits_per_weight(ftype: Precision, arch: Arch) -> float:
    return gguf_weight_bytes(ftype, arch) * 8 / arch.params
