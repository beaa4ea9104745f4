"""One decode step: the bytes a token reads, the share of the bandwidth it gets, and the fixed cost of a
mixture-of-experts layer. Shared by the on-card speed (`core.advice.speed`) and the offloaded one
(`core.advice.offload`)."""

from __future__ import annotations

from core.catalogue.models import ModelSpec
from core.contract import Engine, Precision, Request
from core.formulas.params import Arch, linear_params, mlp_params_per_layer
from core.formulas.precision import EXPERTS_ONLY_ON_MOE, WIDE_BITS, bits_per_weight, embedding_bits
from core.formulas.weights import weight_bytes

# Decode reads every weight once per step; real kernels reach ~70% of peak bandwidth:
# Llama-2-7B bf16 on an A100-80GB decodes at 1418.93 GB/s of 2039 GB/s (torchao README benchmark;
# torchao counts the whole model, its 2% of input embedding included, which a decode step does not
# read in full: 0.68-0.70 either way).
DECODE_BANDWIDTH_EFFICIENCY = 0.70
# GGUF conversions of MXFP4 checkpoints (ggml-org/gpt-oss-*-GGUF, the files llama.cpp's gpt-oss guide
# loads, ggml-org/llama.cpp#15396) store the tensors MXFP4 leaves in BF16 (attention, embeddings, LM
# head) as Q8_0: gpt-oss-20b-mxfp4.gguf is 11.27 GiB against 12.8 GiB of safetensors, and "the
# ggml-org model uses Q8_0 for the weights of the embedding layer ... The attention and output layers
# are also similar" (community.frame.work thread 73280, comparing it with a F16 GGUF).
GGUF_MXFP4_WIDE_BITS = bits_per_weight(Precision.Q8_0)
# A mixture-of-experts layer at small batch: routing (top-k, sort and align the tokens by expert)
# and a grouped GEMM whose few rows per expert leave most of the GPU idle; a fixed time per MoE
# layer, not per byte, and a property of the engine's MoE kernels (measured, per engine):
# - vLLM (fused_moe, Triton): gpt-oss-120b on one A100-80GB decodes at 90 and 88 tok/s at TP=1
#   (vllm-project/vllm#22331; "if local expert count per device is small, the MoE layer starts to
#   slow down"): 1/90 s less its ~5 GB read at 70% of 2039 GB/s, over 36 layers = 0.22 ms. It puts
#   DeepSeek R1 on 8x H200 at ~58 tok/s; published single-stream runs: 30.29 (SGLang v0.4.1.post2
#   release, batch 1, sgl-project/sglang#2643) and 13 (sgl-project/sglang#3196).
# - llama.cpp (CUDA `mul_mat_vec_id`, one kernel per expert matrix for the token's experts, CUDA
#   graphs): Qwen3-30B-A3B Q4_0 on an RTX 4090 decodes at 205.87 tok/s (llama-bench, micro-batch 1
#   over a 4096-token prompt, ggml-org/llama.cpp#15631, the CUDA maintainer's table): 1/205.87 s
#   less its 2.92 ms of bytes (weights and the mean 2K-token KV at 70% of 1008 GB/s), over 48 MoE
#   layers = 0.040 ms. Checked on another card and model: gpt-oss-20b on an RTX 3090, 186.29 tok/s
#   in the same table (tests/core/fixtures/speed_cases.jsonl).
# - transformers: no published single-stream MoE decode found; its per-expert Python loop is no
#   faster than vLLM's fused kernel, so vLLM's value (a floor; eager launches:
#   core.advice.speed's EAGER_LAYER_LAUNCH_S).
MOE_LAYER_FIXED_S: dict[Engine, float] = {
    Engine.VLLM: 220e-6,
    Engine.LLAMA_CPP: 40e-6,
    Engine.TRANSFORMERS: 220e-6,
}
MOE_LAYER_FIXED_DEFAULT_S = MOE_LAYER_FIXED_S[Engine.VLLM]  # an engine without a measurement


def decode_weight_bytes(spec: ModelSpec, arch: Arch, req: Request) -> float:
    """Weight bytes one decode step reads: every weight but the input embedding table (a row lookup
    per token; when tied it is the LM head, read once), each at its own precision; on a mixture of
    experts only the routed experts the router picks, plus what runs for every token — attention,
    shared experts, dense layers, router and LM head (`active_params_b` of the model card, which
    counts them; gpt-oss-120b: 5.13B = 0.96B attention + 3.58B of 4 experts + 0.58B LM head)."""
    assert req.precision
    bits, wide = bits_per_weight(req.precision), embedding_bits(req.precision)
    mxfp4_gguf = req.precision in EXPERTS_ONLY_ON_MOE and req.engine is Engine.LLAMA_CPP
    if mxfp4_gguf:
        wide = GGUF_MXFP4_WIDE_BITS
    head = arch.V * arch.h
    body = linear_params(arch)  # decoder blocks: attention, MLP or experts, norms
    if arch.experts <= 1:
        return weight_bytes(body, bits) + weight_bytes(head, wide)
    experts = min(arch.L * mlp_params_per_layer(arch.h, arch.i, arch.gated, arch.experts), body)
    routed = experts * arch.active_experts / arch.experts
    if spec.active_params_b:
        dense = max(spec.active_params_b * 1e9 - routed - head, 0.0)
    else:
        dense = body - experts
    dense_bits = bits
    if req.precision in EXPERTS_ONLY_ON_MOE:
        dense_bits = GGUF_MXFP4_WIDE_BITS if mxfp4_gguf else WIDE_BITS
    return weight_bytes(routed, bits) + weight_bytes(dense, dense_bits) + weight_bytes(head, wide)


def moe_layer_s(engine: Engine | None) -> float:
    """The fixed decode time of one mixture-of-experts layer under `engine` (MOE_LAYER_FIXED_S)."""
    return MOE_LAYER_FIXED_S.get(engine, MOE_LAYER_FIXED_DEFAULT_S) if engine else MOE_LAYER_FIXED_DEFAULT_S
