"""Bits per stored weight of every weight format, bytes per KV-cache element, and which layers
a format keeps wider.

Quantized formats store scales (and zero points) per group of weights; the true bits per weight
include them. Sources are cited per row.
"""

from __future__ import annotations

from core.contract import KvPrecision, MixedPrecision, Precision

BITS_PER_WEIGHT: dict[Precision, float] = {
    Precision.FP32: 32.0,
    Precision.FP16: 16.0,
    Precision.BF16: 16.0,
    # FP8 E4M3 with one fp32 scale per tensor (or per channel): the scales are negligible.
    Precision.FP8: 8.0,
    # bitsandbytes LLM.int8(): int8 weights + one fp32 scale per output row (negligible).
    Precision.INT8: 8.0,
    # Generic weight-only int4 (torchao int4wo / HQQ, group 128): bf16 scale + zero per 128 weights.
    Precision.INT4: 4.0 + 32 / 128,
    # bitsandbytes NF4 with double quantization (QLoRA, Dettmers et al. 2023, sec. 3):
    # 8-bit absmax per 64 weights + fp32 second-level constant per 256 blocks = 0.127 bits.
    Precision.NF4: 4.0 + 8 / 64 + 32 / (64 * 256),
    # GPTQ / AWQ 4-bit, group size 128: fp16 scale + 4-bit packed zero point per group.
    Precision.GPTQ_INT4: 4.0 + (16 + 4) / 128,
    Precision.AWQ_INT4: 4.0 + (16 + 4) / 128,
    # OCP Microscaling MXFP4 (OCP MX spec v1.0): 32 E2M1 elements share one E8M0 (8-bit) scale.
    Precision.MXFP4: 4.0 + 8 / 32,
    # GGUF block formats (ggml-common.h): Q8_0 = 34 bytes / 32 weights, Q4_0 = 18 / 32, Q4_1 = 20 / 32.
    Precision.Q8_0: 34 * 8 / 32,
    Precision.Q4_0: 18 * 8 / 32,
    Precision.Q4_1: 20 * 8 / 32,
    # K-quant mixes where no architecture is known: whole-file bits per weight of Llama 2 7B, which
    # include the wider output tensor and the mixed layers of each recipe. With an architecture
    # the file is sized tensor by tensor (core.formulas.gguf: Llama 3.1 8B Q4_K_M 4.89, Mixtral
    # 8x22B 4.87); these are that function's Llama 2 7B figures (Q2_K: 3.00 since llama.cpp gives
    # attn_v/ffn_down/attn_output Q3_K and the rest Q2_K, not the old README's 3.35).
    Precision.Q6_K: 6.56,
    Precision.Q5_K_M: 5.68,
    Precision.Q4_K_M: 4.84,
    Precision.Q3_K_M: 3.91,
    Precision.Q2_K: 3.00,
}

GGUF_FORMATS = frozenset(
    {
        Precision.Q8_0,
        Precision.Q6_K,
        Precision.Q5_K_M,
        Precision.Q4_K_M,
        Precision.Q4_0,
        Precision.Q4_1,
        Precision.Q3_K_M,
        Precision.Q2_K,
    }
)

# Formats that quantize only the linear layers and keep token embeddings and the LM head in 16 bits:
# bitsandbytes (`llm_int8_skip_modules` defaults to the head; nn.Embedding is not replaced),
# GPTQ/AWQ (quantize nn.Linear inside the decoder blocks only), FP8 checkpoints (lm_head left bf16).
KEEPS_EMBEDDINGS_WIDE = frozenset(
    {
        Precision.FP8,
        Precision.INT8,
        Precision.INT4,
        Precision.NF4,
        Precision.GPTQ_INT4,
        Precision.AWQ_INT4,
        Precision.MXFP4,
    }
)
# Formats that, on a mixture of experts, quantize the expert MLPs only and keep attention, router,
# embeddings and LM head in 16 bits: GPT-OSS ships so (model card: "MXFP4 for the MoE weights",
# config.json `modules_to_not_convert`: self_attn, router, embed_tokens, lm_head).
EXPERTS_ONLY_ON_MOE = frozenset({Precision.MXFP4})
WIDE_BITS = 16.0

# Formats produced on the fly while a 16-bit checkpoint is loaded (bitsandbytes, torchao), as
# opposed to pre-quantized checkpoints that load as stored: GPTQ, AWQ, GGUF, MXFP4 and FP8 (FP8 ships
# as its own checkpoint: meta-llama/Llama-3.1-405B-Instruct-FP8, DeepSeek V3/R1, Qwen *-FP8).
QUANTIZED_ON_LOAD = frozenset({Precision.INT8, Precision.INT4, Precision.NF4})

# 4-bit and 8-bit formats a mitigation may propose, by the bits a user asks for.
QUANTIZED_FORMATS = frozenset(BITS_PER_WEIGHT) - {Precision.FP32, Precision.FP16, Precision.BF16}

KV_BYTES_PER_ELEMENT: dict[KvPrecision, float] = {
    KvPrecision.FP32: 4.0,
    KvPrecision.FP16: 2.0,
    KvPrecision.BF16: 2.0,
    KvPrecision.FP8: 1.0,
    KvPrecision.INT8: 1.0,
    # quanto / llama.cpp q4_0 KV: 4 bits + a 16-bit scale per 32 elements.
    KvPrecision.INT4: (4 + 16 / 32) / 8,
}


def bits_per_weight(precision: Precision) -> float:
    return BITS_PER_WEIGHT[precision]


def bytes_per_weight(precision: Precision) -> float:
    return BITS_PER_WEIGHT[precision] / 8


def embedding_bits(precision: Precision) -> float:
    """Bits per weight of the token embeddings and LM head under `precision`.

    GGUF bits above are whole-file averages, so embeddings take the same average there.
    """
    return WIDE_BITS if precision in KEEPS_EMBEDDINGS_WIDE else BITS_PER_WEIGHT[precision]


def is_gguf(precision: Precision) -> bool:
    return precision in GGUF_FORMATS


def is_quantized(precision: Precision) -> bool:
    return precision in QUANTIZED_FORMATS


def kv_bytes_per_element(precision: KvPrecision) -> float:
    return KV_BYTES_PER_ELEMENT[precision]


def compute_bytes(precision: Precision, mixed: MixedPrecision = MixedPrecision.NONE) -> int:
    """Bytes of one activation element: the dtype the matmuls run in.

    fp32 weights compute in fp32 unless autocast (mixed precision) is on; every other format
    (quantized ones dequantize on the fly) computes in 16 bits.
    """
    if mixed is not MixedPrecision.NONE:
        return 2
    return 4 if precision is Precision.FP32 else 2
