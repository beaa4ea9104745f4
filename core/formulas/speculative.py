"""Speculative decoding: what a draft adds to the card, and what it buys.

A draft proposes k tokens per step and the target verifies k + 1 positions in one forward pass
(Leviathan et al. 2023, "Fast Inference from Transformers via Speculative Decoding",
arXiv:2211.17192, sec. 2.3; Chen et al. 2023, arXiv:2302.01318). On the card that is the draft's
weights, the draft's own KV cache (a draft model caches every one of its layers; an EAGLE head or an
MTP layer caches one layer of the target's shape), and the verify scratch: the target's
probabilities over the vocabulary for the k + 1 positions of every sequence and the draft's for its
k, in fp32 (vLLM v1 `RejectionSampler`, vllm/v1/sample/rejection_sampler.py: `target_probs`
[num_tokens, vocab_size] and `draft_probs` float32). n-gram (prompt lookup) proposes from the
prompt: no weights, no cache, no draft probabilities.
"""

from __future__ import annotations

from core.formulas.params import Arch, attention_params_per_layer, embedding_params, mlp_params_per_layer

FP32 = 4


def verify_scratch_bytes(b: int, k: int, V: int, V_draft: int) -> float:
    """fp32 probabilities of k + 1 verified positions over the target's vocabulary `V` and of the k
    proposed over the draft's `V_draft` (0: a method without draft probabilities), for b sequences."""
    return b * ((k + 1) * V + k * V_draft) * FP32


def eagle_head_params(arch: Arch, fused_features: int, draft_vocab: int, dense_i: int) -> float:
    """An EAGLE head: one decoder layer of the target's width with a dense MLP (`dense_i`), the fc
    that fuses `fused_features` hidden vectors into one (EAGLE: token embedding + feature, 2·h;
    EAGLE-3: low, mid and high features, 3·h, its attention reading 2·h: one more h-wide input to
    q, k, v), and an LM head over `draft_vocab` tokens where the head has its own (EAGLE-3; 0: it
    shares the target's). The token embedding is the target's (SafeAILab/EAGLE `model/cnets.py`)."""
    layer = attention_params_per_layer(arch.h, arch.q_dim, arch.kv_dim) + mlp_params_per_layer(
        arch.h, dense_i, arch.gated
    )
    wider_qkv = arch.h * (arch.q_dim + 2 * arch.kv_dim) if fused_features >= 3 else 0
    return layer + wider_qkv + fused_features * arch.h * arch.h + draft_vocab * arch.h


def mtp_params(arch: Arch, layers: int) -> float:
    """Multi-token-prediction layers as the checkpoint ships them (DeepSeek-V3, arXiv:2412.19437,
    sec. 2.2): per layer a full decoder layer of the target (its experts too; the average of the
    published total over the layers), the projection of [h; embedding] (2·h × h) and its own
    embedding and output head (the checkpoint's `model.layers.61` holds `embed_tokens` and
    `shared_head`)."""
    per_layer = (arch.params - embedding_params(arch.V, arch.h, arch.tied)) / arch.L
    return layers * (per_layer + 2 * arch.h * arch.h + embedding_params(arch.V, arch.h, False))


def expected_tokens_per_step(alpha: float, k: int) -> float:
    """Tokens one verify step yields on average with per-token acceptance `alpha`: (1 − α^(k+1)) /
    (1 − α) (Leviathan et al. 2023, eq. 1) — the "acceptance length" τ papers report."""
    if alpha >= 1:
        return float(k + 1)
    return (1 - alpha ** (k + 1)) / (1 - alpha)


def speedup(alpha: float, k: int, c: float) -> float:
    """Walltime improvement factor (Leviathan et al. 2023, Theorem 3.8): τ / (k·c + 1), `c` the cost
    of one draft step over one target step — at batch 1 decode is memory-bound, so the bytes each
    reads per token (draft weights over the target's active weights)."""
    return expected_tokens_per_step(alpha, k) / (k * c + 1)
