"""Speculative decoding, sized: the draft's share of each card and the expected speed-up.

The methods and their published acceptance rates are data (`core/data/speculative.toml`, validated at
load, a bad row named). `speculative_parts` adds three breakdown keys to an inference peak —
`draft_model`, `draft_kv_cache`, `speculative_scratch` — after everything else is sized, so the total
is the request's without speculation plus those three (`Result.speculative.without_bytes`). A draft
model is a catalogue model (its own layers, KV heads and vocabulary); EAGLE heads and MTP layers are
sized from the target's shape (core/formulas/speculative.py).
"""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, model_validator

from core.catalogue.catalog import Catalog, default_catalog
from core.catalogue.load import DATA_DIR, load_rows
from core.catalogue.models import ModelSpec
from core.contract import Assumption, Engine, Request, Speculative, SpeculativeMethod
from core.errors import EstimateError
from core.formulas import speculative as sf
from core.formulas.kv_cache import model_kv_cache_bytes
from core.formulas.params import Arch, arch_of, embedding_params
from core.formulas.precision import bytes_per_weight, kv_bytes_per_element
from core.formulas.weights import model_weight_bytes
from core.language.words import note

SPECULATIVE_FILE = DATA_DIR / "speculative.toml"
PARTS = ("draft_model", "draft_kv_cache", "speculative_scratch")


class MethodRow(BaseModel):
    """One method of `speculative.toml`."""

    model_config = ConfigDict(extra="forbid")

    id: SpeculativeMethod
    default_tokens: int = Field(gt=0, le=32)
    acceptance_low: float = Field(gt=0, lt=1)
    acceptance_high: float = Field(gt=0, lt=1)
    words: list[str] = Field(min_length=1)
    source: str = Field(min_length=10)
    cite: str = Field(min_length=3, max_length=60, description="the source, short, as answers name it")
    draft_features: int = Field(default=0, ge=0, le=4, description="EAGLE: hidden vectors its fc fuses")
    draft_vocab: int = Field(default=0, ge=0, description="EAGLE-3: its own LM head's vocabulary")

    @model_validator(mode="after")
    def _ordered(self) -> MethodRow:
        if self.acceptance_low > self.acceptance_high:
            raise ValueError("acceptance_low exceeds acceptance_high")
        return self


@lru_cache(maxsize=4)
def methods(path: Path = SPECULATIVE_FILE) -> dict[SpeculativeMethod, MethodRow]:
    rows = load_rows(path, "method", MethodRow)
    return {row.id: row for row in rows}


def draft_spec(name: str, catalog: Catalog | None = None) -> ModelSpec:
    """The draft model named by `name` (a catalogue id, name or alias); an `EstimateError` on
    `draft_model` when the catalogue lacks it or it is not a decoder language model."""
    found = (catalog or default_catalog()).find_model(name)
    if found is None or found[0].kind.value != "llm":
        raise EstimateError(f"draft_model {name!r} is not a language model of the catalogue", "draft_model")
    return found[0]


def _kv_share(req: Request, spec: ModelSpec, kv_heads: int) -> float:
    """The share of a KV cache one card keeps (as `core.formulas.peak_llm.llm_inference`)."""
    n = req.num_gpus
    if n <= 1:
        return 1.0
    heads = 1 if spec.kv_lora_rank else kv_heads
    return max(1 / n, 1 / heads) if req.engine is Engine.VLLM else 1 / n


def _head_params(row: MethodRow, spec: ModelSpec, arch: Arch) -> float:
    if row.id is SpeculativeMethod.MTP:
        return sf.mtp_params(arch, spec.mtp_layers or 1)
    dense_i = spec.intermediate_size or 4 * arch.h
    return sf.eagle_head_params(arch, row.draft_features, row.draft_vocab, dense_i)


def speculative_parts(req: Request, spec: ModelSpec, arch: Arch) -> dict[str, float]:
    """The three speculative parts per card; empty without `req.speculative`."""
    if req.speculative is None:
        return {}
    assert req.precision and req.context_length and req.kv_cache_precision and req.num_speculative_tokens
    row = methods()[req.speculative]
    k, b, n = req.num_speculative_tokens, req.concurrency, req.num_gpus
    kv_e = kv_bytes_per_element(req.kv_cache_precision)
    weights = kv = 0.0
    draft_vocab = arch.V
    if req.speculative is SpeculativeMethod.DRAFT_MODEL:
        assert req.draft_model
        draft = draft_spec(req.draft_model)
        draft_arch = arch_of(draft)
        assert draft_arch is not None
        weights = model_weight_bytes(draft_arch.params, req.precision, draft_arch) / n
        kv = model_kv_cache_bytes(draft, req.context_length, b, kv_e) * _kv_share(req, draft, draft_arch.k)
        draft_vocab = draft_arch.V
    elif req.speculative is SpeculativeMethod.NGRAM:
        draft_vocab = 0
    else:  # a head of the target's shape caches one layer like the target's
        weights = _head_params(row, spec, arch) * bytes_per_weight(req.precision) / n
        layers = (spec.mtp_layers or 1) if row.id is SpeculativeMethod.MTP else 1
        one_layer = model_kv_cache_bytes(spec, req.context_length, b, kv_e) / max(spec.attention_layers, 1)
        kv = layers * one_layer * _kv_share(req, spec, arch.k)
        draft_vocab = row.draft_vocab or arch.V
    scratch = sf.verify_scratch_bytes(b, k, arch.V, draft_vocab)
    return {"draft_model": weights, "draft_kv_cache": kv, "speculative_scratch": scratch}


def cost_ratio(req: Request, spec: ModelSpec, arch: Arch) -> float:
    """c: one draft step's cost over one target step's — at batch 1 decode reads the weights, so the
    draft's (or head's) parameters read per token over the target's active ones."""
    assert req.speculative is not None
    row = methods()[req.speculative]
    active = (spec.active_params_b or spec.params_b) * 1e9
    if req.speculative is SpeculativeMethod.NGRAM:
        return 0.0
    if req.speculative is SpeculativeMethod.DRAFT_MODEL:
        assert req.draft_model
        draft = draft_spec(req.draft_model)
        return (draft.active_params_b or draft.params_b) * 1e9 / active
    if row.id is SpeculativeMethod.MTP:  # one layer's active share and its output head, per MTP layer
        body = (active - embedding_params(arch.V, arch.h, arch.tied)) / arch.L
        return (spec.mtp_layers or 1) * (body + arch.V * arch.h) / active
    return _head_params(row, spec, arch) / active


def speedup_range(req: Request, spec: ModelSpec, arch: Arch) -> tuple[float, float]:
    """The expected decode speed-up at one user, over the method's acceptance range."""
    assert req.speculative is not None and req.num_speculative_tokens
    row = methods()[req.speculative]
    c, k = cost_ratio(req, spec, arch), req.num_speculative_tokens
    return sf.speedup(row.acceptance_low, k, c), sf.speedup(row.acceptance_high, k, c)


def fill_speculative(req: Request, spec: ModelSpec, catalog: Catalog) -> dict[str, object]:
    """The speculative fields with their defaults (the method from `draft_model`, k per method, the
    draft's catalogue id); an `EstimateError` naming the field when they cannot go together."""
    method = req.speculative
    if method is None and req.draft_model is None:
        return {}
    if req.task.value != "inference":
        raise EstimateError("speculative decoding is for inference", "speculative")
    if method is None:
        method = SpeculativeMethod.DRAFT_MODEL
    update: dict[str, object] = {"speculative": method}
    if method is SpeculativeMethod.DRAFT_MODEL:
        if req.draft_model is None:
            raise EstimateError("speculative draft_model needs a draft_model", "draft_model")
        update["draft_model"] = draft_spec(req.draft_model, catalog).id
    elif req.draft_model is not None:
        raise EstimateError(f"draft_model is for speculative draft_model, not {method.value}", "draft_model")
    if method is SpeculativeMethod.MTP and not spec.mtp_layers:
        raise EstimateError(f"{spec.name} ships no multi-token-prediction layers", "speculative")
    if req.num_speculative_tokens is None:
        update["num_speculative_tokens"] = methods()[method].default_tokens
    return update


def speculative_result(
    req: Request, spec: ModelSpec, arch: Arch, breakdown: dict[str, int], total: int
) -> Speculative | None:
    """`Result.speculative` of a filled request and its per-card breakdown."""
    if req.speculative is None or req.num_speculative_tokens is None:
        return None
    row = methods()[req.speculative]
    low, high = speedup_range(req, spec, arch)
    draft, draft_kv, scratch = (breakdown.get(key, 0) for key in PARTS)
    return Speculative(
        method=req.speculative,
        draft_model=req.draft_model,
        num_speculative_tokens=req.num_speculative_tokens,
        without_bytes=total - draft - draft_kv - scratch,
        draft_bytes=draft,
        draft_kv_bytes=draft_kv,
        scratch_bytes=scratch,
        acceptance_low=row.acceptance_low,
        acceptance_high=row.acceptance_high,
        speedup_low=round(low, 2),
        speedup_high=round(high, 2),
        source=row.source,
        cite=row.cite,
    )


def speculative_notes(req: Request) -> list[Assumption]:
    """Where the speed-up's acceptance rate comes from (the note `speculative_source`)."""
    if req.speculative is None:
        return []
    return [note("speculative_source", source=methods()[req.speculative].source)]
