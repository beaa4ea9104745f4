"""Activation memory, for inference (transient working set) and training (stored for backward).

Training follows Korthikanti et al. 2022 (arXiv:2205.05198, sec. 4.1) but counts *elements*, so GQA
(k KV heads), gated MLPs (SwiGLU), other dtypes and models without dropout come out right
(`stored_elements_per_layer`); eager attention also stores the s×s scores
(`eager_score_bytes_per_element`).
"""

from __future__ import annotations

from core.formulas import FP32
from core.formulas.params import Arch

MASK_BYTES = 1  # torch.bool dropout masks

# Tokens llama.cpp processes per compute step (llama.cpp `n_ubatch` default, common/common.h).
LLAMA_CPP_UBATCH = 512
# vLLM profiles (and bounds every step) at max_num_batched_tokens, 8192 by default for the
# OpenAI server with chunked prefill (vllm EngineArgs; the profile of vllm-project/vllm#10511).
VLLM_MAX_BATCHED_TOKENS = 8192


def mlp_intermediate(arch: Arch) -> int:
    """MLP width a token goes through: MoE tokens go through `active_experts` experts."""
    return arch.i * (arch.active_experts if arch.experts > 1 else 1)


def stored_elements_per_layer(s: int, b: int, arch: Arch, compiled: bool = False) -> float:
    """Elements one layer keeps for backward (excluding attention scores):

        stored elements per layer = s·b·(6h + 2·k·d + m·i)        m = 2 (GELU MLP) or 4 (gated MLP)

    Korthikanti et al. 2022 ("Reducing Activation Recomputation in Large Transformer Models",
    arXiv:2205.05198, sec. 4.1) count per layer sbh(34 + 5as/h) bytes for a GPT block with 16-bit
    activations, 4h MLP and dropout; we keep their accounting in elements. LayerNorm inputs 2sbh;
    attention: its input, Q, K, V, output; MLP: its input and m·i tensors. With a = k, d = h/a,
    i = 4h, m = 2 this is 16sbh elements = 32sbh bytes, plus 2sbh bytes of dropout masks
    (`dropout_mask_bytes_per_layer`) = Korthikanti's 34sbh.

    `compiled` (torch.compile): AOTAutograd's min-cut partitioner "partitions the joint graph such
    that the backward recomputes the forward" for cheap pointwise ops (torch/_functorch/
    partitioners.py `min_cut_rematerialization_partition`, inductor's default); matmuls are never
    recomputed. The two normed inputs (a pointwise function of the saved residual and its rstd)
    and the MLP's activation and product (pointwise of the gate and up outputs) are recomputed:
    4h + 2kd + (m/2)·i elements stay."""
    m = 4 if arch.gated else 2
    if compiled:
        return s * b * (4 * arch.h + 2 * arch.kv_dim + m // 2 * mlp_intermediate(arch))
    return s * b * (6 * arch.h + 2 * arch.kv_dim + m * mlp_intermediate(arch))


def dropout_mask_bytes_per_layer(s: int, b: int, arch: Arch) -> float:
    """One bool mask after attention and one after the MLP (Korthikanti: 2sbh)."""
    return 2 * s * b * arch.h * MASK_BYTES if arch.dropout > 0 else 0.0


def eager_score_bytes_per_element(e: int, attention_dropout: float) -> float:
    """Bytes stored per element of the a×s×s score tensor when attention is eager: the softmax
    output (fp32: transformers' eager attention and autocast both run softmax in fp32), the dropout
    mask and output when attention dropout is on, and the 16-bit copy fed to the P·V matmul."""
    softmax_out = FP32
    dropout = MASK_BYTES + FP32 if attention_dropout > 0 else 0
    cast_copy = e if e < FP32 else 0
    return softmax_out + dropout + cast_copy


def attention_scores_elements(s: int, b: int, a: int) -> float:
    return a * s * s * b


def training_layer_bytes(s: int, b: int, e: int, arch: Arch, eager: bool, compiled: bool = False) -> float:
    """Everything one layer stores for backward."""
    scores = (
        attention_scores_elements(s, b, arch.a) * eager_score_bytes_per_element(e, arch.attention_dropout)
        if eager
        else 0.0
    )
    stored = stored_elements_per_layer(s, b, arch, compiled) * e
    return stored + dropout_mask_bytes_per_layer(s, b, arch) + scores


def training_activation_bytes(
    s: int,
    b: int,
    e: int,
    arch: Arch,
    eager: bool,
    checkpointing: bool,
    offload_checkpoints: bool = False,
    adapter_inputs: float = 0.0,
    compiled: bool = False,
) -> float:
    """All layers; with full activation checkpointing (Chen et al. 2016, arXiv:1604.06174) only each
    layer's input (sbh) is kept and one layer is recomputed at a time. Unsloth offloads those
    inputs to CPU RAM, leaving one in flight. `adapter_inputs`: what the LoRA adapters of one layer
    save on top (`lora_input_bytes_per_layer`); `compiled`: torch.compile (`stored_elements_per_layer`)."""
    layer = training_layer_bytes(s, b, e, arch, eager, compiled) + adapter_inputs
    if not checkpointing:
        return arch.L * layer
    boundaries = (1 if offload_checkpoints else arch.L) * s * b * arch.h * e
    return boundaries + layer


def training_loss_bytes(s: int, b: int, V: int, e: int) -> float:
    """Logits and cross-entropy buffers at their largest, while every layer's activations are alive.

    transformers' ForCausalLMLoss (transformers/loss/loss_utils.py) upcasts the logits
    (`logits = logits.float()`) and calls F.cross_entropy = log_softmax + nll_loss, which saves
    the fp32 log-probabilities. Per logit:
    - end of forward: the logits (e) + their fp32 upcast (4; none when e = 4) + the saved
      log-probabilities (4);
    - start of backward: the saved log-probabilities (4) + nll_loss's fp32 gradient (4) +
      log_softmax's fp32 gradient (4). The upcast is gone (nothing saved it) and so are the 16-bit
      logits under HF Trainer, whose `compute_loss` keeps only the loss.
    The larger is 12 bytes per logit whatever the compute dtype.
    """
    forward = e + (FP32 if e < FP32 else 0) + FP32
    backward_start = 3 * FP32
    return s * b * V * max(forward, backward_start)


# torchtune's chunked cross-entropy splits the tokens in 8 (CEWithChunkedOutputLoss /
# LinearCrossEntropyLoss `num_output_chunks = 8`, torchtune/modules/loss/).
TORCHTUNE_LOSS_CHUNKS = 8


def chunked_loss_bytes(s: int, b: int, V: int, e: int, chunks: int = TORCHTUNE_LOSS_CHUNKS) -> float:
    """torchtune's loss: the LM head runs per chunk of tokens and each chunk is upcast on its own
    (torchtune/modules/loss/ce_chunked_output_loss.py: "saves memory by only upcasting one chunk at
    a time"). Per logit: at the end of forward the 16-bit logits (e) and the fp32 log-probabilities
    each chunk's cross_entropy saved (4), plus one chunk's fp32 upcast; at the start of backward
    (the recipe `del logits` first) the saved log-probabilities plus one chunk's nll and
    log_softmax gradients (fp32) and its logits gradient (e): the full logits gradient never
    exists, the head's backward runs chunk by chunk. Includes `logits_gradient_bytes`."""
    forward = e + FP32 + FP32 / chunks
    backward_start = FP32 + (2 * FP32 + e) / chunks
    return s * b * V * max(forward, backward_start)


def compiled_chunked_loss_bytes(s: int, b: int, V: int, e: int, chunks: int = TORCHTUNE_LOSS_CHUNKS) -> float:
    """torchtune's chunked loss under `compile: True`: the recipe calls `training.compile_loss`, which
    compiles `compute_cross_entropy` alone (`apply_compile_strategy`, torchtune/modules/loss/
    cross_entropy_loss.py: the LM head, the fp32 upcast and F.cross_entropy of one chunk in one
    graph). Inductor's partitioner saves for the backward the cheapest cut: the 16-bit logits (e)
    and per-row statistics, not the fp32 upcast or log-probabilities (it recomputes those pointwise
    ops; matmuls it does not recompute). Per logit: the saved 16-bit logits of every chunk, plus one
    chunk's fp32 softmax and 16-bit gradient while its backward runs. Published: a compiled
    non-chunked cross-entropy peaks at 2.63 GB where eager takes 4.72 GB (malaysia-ai/Chunk-loss-LoRA
    README, after Chillee's gist)."""
    return s * b * V * (e + (FP32 + e) / chunks)


def lora_input_elements_per_token(arch: Arch, attention_only: bool) -> float:
    """Input widths of the linears LoRA adapts in one layer, per token: q and v (h each), or all
    linears: q, k, v (h each), o (a·d), the MLP's gate and up (h each; up only when ungated) and
    down (i), the MLP per expert a token is routed to."""
    if attention_only:
        return 2 * arch.h
    experts = arch.active_experts if arch.experts > 1 else 1
    mlp_in = (2 if arch.gated else 1) * arch.h + arch.i
    return 3 * arch.h + arch.q_dim + experts * mlp_in


def lora_input_bytes_per_layer(
    s: int,
    b: int,
    arch: Arch,
    attention_only: bool,
    input_bytes: int,
    cast: bool,
    dropout: float,
    compiled: bool = False,
) -> float:
    """What the adapters of one layer save for backward besides the base layer's activations.

    peft's LoRA Linear.forward (peft/tuners/lora/layer.py) computes `lora_B(lora_A(dropout(x)))`
    on `x` cast to the adapter's dtype (`_cast_input_dtype`). lora_A saves its input: the base
    layer's own `x` (nothing new) when there is no cast (`cast` false: the adapter runs in the
    compute dtype) and dropout is off (nn.Identity); otherwise a new tensor of `input_bytes` per
    element for every adapted module — plus, with dropout, its mask (bool). Under torch.compile the
    cast and the masking are pointwise and recomputed (`stored_elements_per_layer`): only the
    dropout masks stay.
    """
    if not cast and dropout <= 0:
        return 0.0
    mask = MASK_BYTES if dropout > 0 else 0
    per_element = mask if compiled else input_bytes + mask
    return s * b * lora_input_elements_per_token(arch, attention_only) * per_element


def logits_gradient_bytes(s: int, b: int, V: int, e: int) -> float:
    """The gradient of the logits in the compute dtype, alive while the LM head's backward runs."""
    return s * b * V * e


def prefill_activation_bytes(s: int, b: int, arch: Arch, e: int, eager: bool = False) -> float:
    """Inference working set. Without autograd every intermediate is freed once consumed, so the peak
    is the larger stage of one layer for all tokens processed at once: attention holds the residual,
    the normed input, Q, the attention output (4h) and K, V (2kd); the MLP holds the residual, the
    normed input (2h) and activation, up projection and their product (3i; 2i ungated)."""
    m = 3 if arch.gated else 2
    attention = 4 * arch.h + 2 * arch.kv_dim
    mlp = 2 * arch.h + m * mlp_intermediate(arch)
    working: float = s * b * max(attention, mlp) * e
    if eager:  # scores and their fp32 softmax of one layer, for the whole prompt
        working += attention_scores_elements(s, b, arch.a) * (e + FP32)
    return working


def inference_logits_bytes(sequences: int, V: int) -> float:
    """`generate` and serving engines compute logits for the last position only, in fp32."""
    return sequences * V * FP32
