"""KV cache: what attention keeps per token of context.

Standard multi-head / grouped-query attention (Pope et al. 2022, "Efficiently Scaling Transformer
Inference", sec. 2; GQA: Ainslie et al. 2023): 2 (K and V) × L × b × s × k × d elements.
"""

from __future__ import annotations

from core.catalogue.models import ModelKind, ModelSpec


def kv_cache_bytes(L: int, k: int, d: int, s: int, b: int, e: float) -> float:
    """Keys and values for b sequences of s tokens, k KV heads of dim d, e bytes per element."""
    return 2 * L * k * d * s * b * e


def sliding_window_kv_cache_bytes(
    L: int, L_sw: int, window: int, k: int, d: int, s: int, b: int, e: float
) -> float:
    """`L_sw` of the L layers attend to the last `window` tokens only (Mistral, Gemma 2/3)."""
    return kv_cache_bytes(L - L_sw, k, d, s, b, e) + kv_cache_bytes(L_sw, k, d, min(s, window), b, e)


def mla_kv_cache_bytes(L: int, kv_lora_rank: int, rope_dim: int, s: int, b: int, e: float) -> float:
    """Multi-head latent attention caches one compressed vector per token and layer
    (DeepSeek-V2, arXiv:2405.04434, sec. 2.1): kv_lora_rank + the decoupled RoPE key."""
    return L * (kv_lora_rank + rope_dim) * s * b * e


def model_kv_cache_bytes(spec: ModelSpec, s: int, b: int, e: float, windows: bool = True) -> float:
    """Pick the formula the architecture calls for; encoders keep no cache. `windows=False`: as if
    every layer kept the whole context (how vLLM counts its "GPU KV cache size" in tokens)."""
    if spec.kind is ModelKind.ENCODER or not (spec.layers and spec.attention_heads):
        return 0.0
    L = spec.attention_layers  # a hybrid's recurrent layers keep a state instead (formulas.recurrent)
    if spec.kv_lora_rank:
        return mla_kv_cache_bytes(L, spec.kv_lora_rank, spec.qk_rope_head_dim or 0, s, b, e)
    k = spec.kv_heads or spec.attention_heads
    d = spec.resolved_head_dim or 128
    if not windows:
        return kv_cache_bytes(L, k, d, s, b, e)
    if spec.sliding_window and spec.sliding_window_layers:
        return sliding_window_kv_cache_bytes(
            L, spec.sliding_window_layers, spec.sliding_window, k, d, s, b, e
        )
    if spec.sliding_window:  # every layer windowed (Mistral 7B v0.1)
        return kv_cache_bytes(L, k, d, min(s, spec.sliding_window), b, e)
    return kv_cache_bytes(L, k, d, s, b, e)
