"""Weight memory: parameters × true bits per weight, embeddings at their own width."""

from __future__ import annotations

from core.contract import Precision
from core.formulas.gguf import gguf_weight_bytes
from core.formulas.params import Arch, embedding_params, mlp_params_per_layer
from core.formulas.precision import EXPERTS_ONLY_ON_MOE, bits_per_weight, embedding_bits, is_gguf


def weight_bytes(params: float, bits: float) -> float:
    """N parameters at `bits` each (scales and zero points included in `bits`)."""
    return params * bits / 8


def model_weight_bytes(params: float, precision: Precision, arch: Arch | None) -> float:
    """Whole model: quantizers that leave embeddings and LM head in 16 bits are counted so.

    Without an architecture the embeddings are unknown and everything takes the format's bits.
    GGUF files are sized tensor by tensor with llama.cpp's quantization mix (core.formulas.gguf).
    A published checkpoint in `precision` that keeps more of its decoder in 16 bits
    (`Arch.unquantized_params`, from its `modules_to_not_convert` / `ignore`) is counted so.
    """
    if arch is not None and is_gguf(precision):
        return gguf_weight_bytes(precision, arch) * params / arch.params
    bits = bits_per_weight(precision)
    wide = embedding_bits(precision)
    if arch is None or wide == bits:
        return weight_bytes(params, bits)
    emb = min(embedding_params(arch.V, arch.h, arch.tied), params)
    quantized = params - emb
    if precision in EXPERTS_ONLY_ON_MOE and arch.experts > 1:
        quantized = min(arch.L * mlp_params_per_layer(arch.h, arch.i, arch.gated, arch.experts), quantized)
    elif precision is arch.unquantized_format:
        quantized = max(quantized - arch.unquantized_params * params / arch.params, 0.0)
    return weight_bytes(quantized, bits) + weight_bytes(params - quantized, wide)
