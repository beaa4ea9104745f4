"""Turn the request's `model` (catalogue name, size, architecture or Hugging Face id) into a ModelSpec.

Order: catalogue (id, alias, HF id; instruct/chat/quantised variants tolerated) -> a bare size
("13B", "8x7b", "405 млрд") -> a Hugging Face `org/name` looked up online when enabled -> an
`UnknownModelError` with close suggestions. Every guess is reported as an `Assumption`.
"""

from __future__ import annotations

import math
import os
import re
from typing import Literal

from pydantic import ValidationError

from core.catalogue.catalog import Catalog
from core.catalogue.models import ModelKind, ModelSpec
from core.catalogue.sizes import read_size
from core.contract import Assumption, CustomModel, ResolvedModel
from core.errors import CoreError, UnknownModelError
from core.language.words import note
from core.model import config as hf_config
from core.model import hub as hf

HF_LOOKUP_ENV = "GPUFIT_HF_LOOKUP"
MAX_PARAMS_B = 20_000  # same bound as CustomModel.params_b: beyond any published model

# Typical dense decoder shapes by size: real catalogue models (their config.json numbers, cited in
# models.toml), none with sliding windows or MoE. A bare size takes the nearest one by parameter
# count. 7B and 13B pick the Llama 2 shapes with full multi-head attention (the KV cache of the
# era those sizes name); 8B and larger pick GQA shapes, what current models of those sizes use.
TYPICAL_DENSE_REFERENCES = (
    "qwen2.5-0.5b",
    "llama-3.2-1b",
    "qwen2.5-1.5b",
    "llama-3.2-3b",
    "llama-2-7b",
    "llama-3.1-8b",
    "llama-2-13b",
    "qwen2.5-14b",
    "qwen2.5-32b",
    "llama-3.1-70b",
    "llama-3.1-405b",
)
# Within 10% of the reference's size the shape is used as is (so "7B" is exactly Llama 2 7B's);
# beyond it the layer count is scaled (at a fixed width, parameters grow linearly with depth).
_SAME_SIZE_RATIO = 1.1
# Share of a dense decoder's weights in its FFNs: Mistral 7B, 5.64B of 7.24B (from its config).
_DENSE_FFN_SHARE = 0.78
# Share of an MoE's weights in its experts: Mixtral 8x7B, 45.1B of 46.7B (from its config).
_MOE_EXPERT_SHARE = 0.966
# MoE given only as "NxMb": Mixtral routes each token to 2 of its experts (Jiang et al. 2024,
# arXiv:2401.04088), the common choice for that naming.
_TYPICAL_ACTIVE_EXPERTS = 2

_ARCH_FIELDS = (
    "layers",
    "hidden_size",
    "attention_heads",
    "kv_heads",
    "head_dim",
    "intermediate_size",
    "vocab_size",
)
ResolvedSource = Literal["catalogue", "size", "custom", "huggingface"]


def resolve_model(
    model: str | CustomModel,
    catalog: Catalog,
    *,
    hf_lookup: bool | None = None,
    hub: hf.Hub | None = None,
) -> tuple[ModelSpec, ResolvedModel, list[Assumption]]:
    """The architecture to size, how it was found, and what was assumed.

    `hf_lookup`: read unknown `org/name` ids from the Hugging Face Hub (default: the
    GPUFIT_HF_LOOKUP=1 environment setting). `hub` replaces the network client (tests).
    """
    if isinstance(model, CustomModel):
        spec, assumptions = spec_from_custom(model, catalog)
        return spec, _resolved(spec, "custom", None), assumptions

    text = model.strip()
    if not text:
        raise CoreError("model is empty", field="model")
    found = catalog.find_model(text)
    if found:
        spec, dropped = found
        assumptions = []
        if dropped:
            assumptions.append(note("variant_same_architecture", model=spec.name, variant="-".join(dropped)))
        return spec, _resolved(spec, "catalogue", spec.id), assumptions

    size = parse_size(text)
    if size is not None:
        params_b, experts = size
        spec, assumptions = spec_for_size(params_b, catalog, experts=experts)
        return spec, _resolved(spec, "size", None), assumptions

    if hf.looks_like_hf_id(text):
        if hf_lookup is None:
            hf_lookup = os.environ.get(HF_LOOKUP_ENV, "") == "1"
        if hf_lookup:
            spec, assumptions = hf_config.fetch_model_spec(text, hub or hf.default_hub())
            return spec, _resolved(spec, "huggingface", text), assumptions
    raise UnknownModelError(text, catalog.suggest(text))


def parse_size(text: str) -> tuple[float, int | None] | None:
    """`13B` -> (13.0, None); `8x7b` -> (7.0, 8); `405 млрд` -> (405.0, None); `350m` -> (0.35, None).

    Returns (billions per expert, experts) or None when the text is not a bare size.
    Raises CoreError for sizes no model has (<= 0 or > 20 000 B).
    """
    size = read_size(text)  # the catalogue's size reader, the one the parser and name search use
    if size is None:
        return None
    value, experts = size.billions, size.experts
    total = value * (experts or 1)
    if value <= 0 or (experts is not None and experts < 1) or total > MAX_PARAMS_B:
        raise CoreError(
            f"model size {text!r} is outside 0 < size <= {MAX_PARAMS_B} billion parameters", field="model"
        )
    return value, experts


def typical_reference(params_b: float, catalog: Catalog) -> ModelSpec:
    """The catalogue model whose size is nearest (on a log scale) to `params_b`."""
    references = [catalog.models[i] for i in TYPICAL_DENSE_REFERENCES if i in catalog.models]
    if not references:
        raise CoreError("the model catalogue has no typical reference shapes", field="model")
    return min(references, key=lambda m: abs(math.log(m.params_b / params_b)))


def spec_for_size(
    params_b: float, catalog: Catalog, experts: int | None = None
) -> tuple[ModelSpec, list[Assumption]]:
    """A typical dense (or, with `experts`, Mixtral-style MoE) architecture of that size."""
    if params_b <= 0 or params_b * (experts or 1) > MAX_PARAMS_B:
        raise CoreError(f"model size {params_b}B is out of range", field="model")
    reference = typical_reference(params_b, catalog)
    shape = _scaled_shape(reference, params_b)
    label = f"{experts}x{params_b:g}B" if experts else f"{params_b:g}B"
    assumptions = [note("typical_architecture", size=label, reference=reference.name, layers=shape["layers"])]
    total_b, active_b = params_b, None
    moe: dict[str, int] = {}
    if experts and experts > 1:
        total_b, active_b = _moe_params(shape, params_b, experts, _TYPICAL_ACTIVE_EXPERTS)
        moe = {"experts": experts, "active_experts": _TYPICAL_ACTIVE_EXPERTS}
        assumptions.append(note("typical_moe", total_b=round(total_b, 2), active_b=round(active_b, 2)))
    spec = ModelSpec(
        id=_slug(f"size-{label}"),
        name=label,  # the assumption `typical_architecture` says which shape was used
        family="typical",
        kind=ModelKind.LLM,
        source=f"typical shape of {reference.name}: {reference.source}",
        params_b=total_b,
        active_params_b=active_b,
        tied_embeddings=reference.tied_embeddings,
        gated_ffn=reference.gated_ffn,
        max_context=reference.max_context,
        **shape,
        **moe,
    )
    return spec, assumptions


def spec_from_custom(model: CustomModel, catalog: Catalog) -> tuple[ModelSpec, list[Assumption]]:
    """The user's architecture, with missing numbers filled from the typical shape of its size.

    An MoE's total counts every expert, so its shape is that of the dense model whose FFN,
    replicated into the experts, gives that total.
    """
    dense_b = model.params_b
    if model.experts and model.experts > 1:
        dense_b = model.params_b / (1 + (model.experts - 1) * _DENSE_FFN_SHARE)
    reference = typical_reference(dense_b, catalog)
    typical = _scaled_shape(reference, dense_b)
    given = {f: getattr(model, f) for f in _ARCH_FIELDS if getattr(model, f) is not None}
    filled = [f for f in _ARCH_FIELDS if f not in given]
    assumptions: list[Assumption] = []
    shape = _custom_shape(given, typical, filled, assumptions)
    if filled:
        assumptions.append(note("custom_filled", fields=", ".join(filled), reference=reference.name))
    moe = _custom_moe(model, shape, assumptions)
    try:
        spec = ModelSpec(
            id="custom",
            name=f"Custom {model.params_b:g}B model",
            family="custom",
            kind=ModelKind.LLM,
            source="architecture given in the request",
            params_b=model.params_b,
            tied_embeddings=model.tied_embeddings,
            gated_ffn=_custom_gated(model, given, reference),
            max_context=reference.max_context,
            **shape,
            **moe,
        )
    except ValidationError as e:
        raise CoreError(f"inconsistent model architecture: {e.errors()[0]['msg']}", field="model") from e
    return spec, assumptions


def _custom_shape(
    given: dict[str, int], typical: dict[str, int], filled: list[str], assumptions: list[Assumption]
) -> dict[str, int]:
    """The typical shape with the given numbers in it, and the filled numbers kept consistent with
    what was given (a `kv_heads` taken as full multi-head attention leaves `filled`)."""
    shape = {**typical, **given}
    if "hidden_size" in given and "intermediate_size" not in given:
        ratio = typical["intermediate_size"] / typical["hidden_size"]
        shape["intermediate_size"] = _round_to(given["hidden_size"] * ratio, 256)
    if "attention_heads" not in given and "hidden_size" in given:
        head_dim = given.get("head_dim") or typical["head_dim"]
        if given["hidden_size"] % head_dim == 0:
            shape["attention_heads"] = given["hidden_size"] // head_dim
            if "kv_heads" not in given:  # keep the reference's query heads per KV head
                group = typical["attention_heads"] // typical["kv_heads"]
                shape["kv_heads"] = max(1, shape["attention_heads"] // group)
                if shape["attention_heads"] % shape["kv_heads"]:
                    shape["kv_heads"] = shape["attention_heads"]
    if "head_dim" not in given and "hidden_size" in given:
        shape["head_dim"] = shape["hidden_size"] // shape["attention_heads"]
    if "kv_heads" not in given and "attention_heads" in given:
        shape["kv_heads"] = given["attention_heads"]  # no GQA stated: full multi-head attention
        assumptions.append(note("custom_mha", kv_heads=shape["kv_heads"]))
        filled.remove("kv_heads")
    if shape["attention_heads"] % shape["kv_heads"]:
        raise CoreError(
            f"attention_heads ({shape['attention_heads']}) must be a multiple of kv_heads "
            f"({shape['kv_heads']})",
            field="model",
        )
    return shape


def _custom_moe(
    model: CustomModel, shape: dict[str, int], assumptions: list[Assumption]
) -> dict[str, int | float]:
    """A custom MoE's experts, the experts active per token (typical when not given) and its active
    parameters; empty for a dense model."""
    if not (model.experts or model.active_experts):
        return {}
    if not model.experts:
        raise CoreError("active_experts given without experts", field="model")
    active = model.active_experts or min(_TYPICAL_ACTIVE_EXPERTS, model.experts)
    if not model.active_experts:
        assumptions.append(note("custom_active_experts", active_experts=active))
    moe: dict[str, int | float] = {"experts": model.experts, "active_experts": active}
    if model.experts > 1:
        moe["active_params_b"] = _active_share(shape, model.params_b, model.experts, active)
    return moe


def _custom_gated(model: CustomModel, given: dict[str, int], reference: ModelSpec) -> bool | None:
    """The MLP kind a custom model states; None (arch_of picks the variant whose count is closer to
    params_b) when its MLP shape is given, as OPT/BLOOM/BERT numbers are not SwiGLU; else the
    typical model's."""
    if model.gated_mlp is not None:
        return model.gated_mlp
    if {"layers", "hidden_size", "intermediate_size"} <= given.keys():
        return None
    return reference.gated_ffn


# --- architecture arithmetic ---------------------------------------------------------------------


def _shape(spec: ModelSpec) -> dict[str, int]:
    values = {f: getattr(spec, f) for f in _ARCH_FIELDS}
    values["head_dim"] = spec.resolved_head_dim
    if values["kv_heads"] is None:
        values["kv_heads"] = spec.attention_heads
    missing = [f for f, v in values.items() if v is None]
    if missing:
        raise CoreError(f"reference model {spec.id} lacks {', '.join(missing)}", field="model")
    return {f: int(v) for f, v in values.items()}


def _scaled_shape(reference: ModelSpec, params_b: float) -> dict[str, int]:
    """The reference's shape, its depth scaled so the layers hold the parameters the embeddings don't."""
    shape = _shape(reference)
    ratio = params_b / reference.params_b
    if not 1 / _SAME_SIZE_RATIO <= ratio <= _SAME_SIZE_RATIO:
        embeddings = _embedding_params_b(shape, reference.tied_embeddings)
        body = max(reference.params_b - embeddings, 1e-9)
        shape["layers"] = max(1, round(shape["layers"] * max(params_b - embeddings, 0) / body))
    return shape


def _embedding_params_b(shape: dict[str, int], tied: bool) -> float:
    return shape["vocab_size"] * shape["hidden_size"] * (1 if tied else 2) / 1e9


def _ffn_params_b(shape: dict[str, int]) -> float:
    """One gated (SwiGLU) FFN per layer: gate, up and down projections, 3 x hidden x intermediate."""
    return shape["layers"] * 3 * shape["hidden_size"] * shape["intermediate_size"] / 1e9


def _moe_params(shape: dict[str, int], dense_b: float, experts: int, active: int) -> tuple[float, float]:
    """(total, active) billions when a `dense_b` model's FFN is replicated into `experts` experts."""
    ffn = min(_ffn_params_b(shape), dense_b)
    shared = dense_b - ffn
    return shared + experts * ffn, shared + active * ffn


def _active_share(shape: dict[str, int], total_b: float, experts: int, active: int) -> float:
    """Active parameters of an MoE given its total: the experts not routed to are subtracted."""
    per_expert = _ffn_params_b(shape)
    if per_expert * experts >= total_b:  # the stated shape cannot hold that many experts
        per_expert = total_b * _MOE_EXPERT_SHARE / experts
    return max(total_b - (experts - active) * per_expert, total_b * active / experts)


def _round_to(value: float, multiple: int) -> int:
    return max(multiple, round(value / multiple) * multiple)


def _slug(text: str) -> str:
    return re.sub(r"[^a-z0-9._-]+", "-", text.lower()).strip("-") or "model"


def _resolved(spec: ModelSpec, source: ResolvedSource, model_id: str | None) -> ResolvedModel:
    return ResolvedModel(
        id=model_id,
        name=spec.name,
        kind=str(spec.kind),
        params_b=spec.params_b,
        active_params_b=spec.active_params_b,
        source=source,
    )
