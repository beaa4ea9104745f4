"""Parameter counts derived from a transformer's architecture.

Notation as in Korthikanti et al. 2022 ("Reducing Activation Recomputation in Large Transformer
Models", arXiv:2205.05198): L layers, h hidden size, a attention heads, d head dim, i MLP
intermediate size, V vocabulary; plus k KV heads for GQA/MQA (Ainslie et al. 2023).
"""

from __future__ import annotations

from dataclasses import dataclass

from core.catalogue.models import ModelSpec
from core.contract import Precision
from core.formulas import BILLION


@dataclass(frozen=True, slots=True)
class Arch:
    """The numbers the formulas need, with defaults resolved."""

    L: int
    h: int
    a: int
    k: int  # KV heads
    d: int  # head dim
    i: int  # MLP intermediate size (per expert for MoE)
    V: int
    experts: int
    active_experts: int
    tied: bool
    gated: bool  # SwiGLU/GeGLU MLP: three matrices instead of two
    params: float  # total, as published
    dropout: float
    attention_dropout: float
    # Parameters the published checkpoint in `unquantized_format` keeps 16-bit in its decoder layers
    # (ModelSpec.unquantized: Llama 3.1 405B FP8 leaves self-attention and layers 0 and 125 wide).
    unquantized_params: float = 0.0
    unquantized_format: Precision | None = None

    @property
    def q_dim(self) -> int:
        return self.a * self.d

    @property
    def kv_dim(self) -> int:
        return self.k * self.d


def embedding_params(V: int, h: int, tied: bool) -> int:
    """Token embeddings plus the LM head (one matrix when tied)."""
    return V * h * (1 if tied else 2)


def attention_params_per_layer(h: int, q_dim: int, kv_dim: int) -> int:
    """W_q, W_o (h × a·d) and W_k, W_v (h × k·d); biases ignored."""
    return 2 * h * q_dim + 2 * h * kv_dim


def mlp_params_per_layer(h: int, i: int, gated: bool, experts: int = 1) -> int:
    """Two matrices (up, down) or three for gated MLPs (gate, up, down), per expert."""
    return (3 if gated else 2) * h * i * max(experts, 1)


def transformer_params(
    L: int, h: int, q_dim: int, kv_dim: int, i: int, gated: bool, experts: int, V: int, tied: bool
) -> int:
    per_layer = attention_params_per_layer(h, q_dim, kv_dim) + mlp_params_per_layer(h, i, gated, experts)
    return L * per_layer + embedding_params(V, h, tied)


# Arch per spec object (by identity; the spec is held, so its id is not reused): an estimate resolves
# its model's ~3 times and a draft model's once per variant sized. Specs are never changed in place
# (a changed one is a `model_copy`, a new object). Cleared when full: catalogue specs refill it.
_ARCHS: dict[int, tuple[ModelSpec, Arch | None]] = {}
ARCH_MEMO_SIZE = 1024


def arch_of(spec: ModelSpec) -> Arch | None:
    """`Arch` of `spec` (`resolve_arch`), memoised per spec object."""
    known = _ARCHS.get(id(spec))
    if known is not None and known[0] is spec:
        return known[1]
    if len(_ARCHS) >= ARCH_MEMO_SIZE:
        _ARCHS.clear()
    arch = resolve_arch(spec)
    _ARCHS[id(spec)] = (spec, arch)
    return arch


def resolve_arch(spec: ModelSpec) -> Arch | None:
    """Resolve an LLM/encoder spec into `Arch`; None for specs without a transformer architecture.

    Whether the MLP is gated comes from the catalogue (`gated_ffn`); where it is unknown (custom
    models), pick the variant whose analytic parameter count is closer to the published one
    (BERT/OPT/GPT-2 ungated, Llama/Qwen/Mistral gated).
    """
    if not (spec.layers and spec.hidden_size and spec.attention_heads):
        return None
    h, a = spec.hidden_size, spec.attention_heads
    d = spec.resolved_head_dim or h // a
    k = spec.kv_heads or a
    experts = spec.experts or 1
    i = spec.moe_intermediate_size if spec.is_moe and spec.moe_intermediate_size else spec.intermediate_size
    i = i or 4 * h
    V = spec.vocab_size or 32_000
    layers = spec.layers + (spec.encoder_layers or 0)
    published = spec.params_b * BILLION

    def count(gated: bool) -> int:
        return transformer_params(layers, h, a * d, k * d, i, gated, experts, V, spec.tied_embeddings)

    gated = (
        spec.gated_ffn
        if spec.gated_ffn is not None
        else abs(count(True) - published) < abs(count(False) - published)
    )
    wide = spec.unquantized
    unquantized = 0.0
    if wide is not None:
        unquantized = wide.attention_layers * attention_params_per_layer(
            h, a * d, k * d
        ) + wide.mlp_layers * mlp_params_per_layer(h, i, gated, experts)
    return Arch(
        L=layers,
        h=h,
        a=a,
        k=k,
        d=d,
        i=i,
        V=V,
        experts=experts,
        active_experts=spec.active_experts or 1,
        tied=spec.tied_embeddings,
        gated=gated,
        params=published,
        dropout=spec.dropout,
        attention_dropout=spec.attention_dropout,
        unquantized_params=unquantized,
        unquantized_format=wide.precision if wide else None,
    )


def linear_params(arch: Arch) -> float:
    """Parameters in the decoder blocks' linear layers: what quantizers and LoRA act on."""
    return max(arch.params - embedding_params(arch.V, arch.h, arch.tied), 0.0)
