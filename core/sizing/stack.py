"""Retrieval stacks: models served beside the request's model on one card (`Request.extra_models`).

Each extra model (an embedding model, a reranker, another LLM) is sized for inference on its own:
weights at its precision, the activations of one batch of `batch_size` inputs of `context_length`
tokens (encoders keep no KV cache and compute no logits), and its own CUDA context and allocator
reserve — the usual deployment runs it in a server process of its own (text-embeddings-inference,
Infinity, a second vLLM), and every CUDA process holds its own context. Their sum is added to every
card's need of the main model (`core.advice.Sizer.extra_bytes`): the verdicts, the offer and the
mitigations are about the whole stack. Also here: reading a stack out of free text ("qwen2.5 7b +
bge-m3 + bge-reranker на 4090"); the words for the roles are data (`[stack]` in
core/data/embedders.toml).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

from core.catalogue.catalog import Catalog
from core.catalogue.load import read_toml
from core.catalogue.models import ModelKind, ModelSpec
from core.contract import (
    MAX_EXTRA_MODELS,
    STACK_DEFAULT_TOKENS,
    Assumption,
    Engine,
    Precision,
    Request,
    StackModel,
    StackPart,
    Task,
)
from core.errors import CoreError, EstimateError
from core.formulas.params import arch_of
from core.formulas.peak import peak_breakdown
from core.formulas.vllm import VLLM_GPU_MEMORY_UTILIZATION  # vLLM's share of the card
from core.language.words import note
from core.sizing.defaults import fill_defaults

DATA_FILE = Path(__file__).parents[1] / "data" / "embedders.toml"
# Text-embeddings-inference and Infinity serve encoders in fp16/bf16 on GPUs by default.
DEFAULT_STACK_PRECISION = Precision.BF16
_RERANKER_NAME = re.compile(r"rerank", re.IGNORECASE)


def size_stack(req: Request, catalog: Catalog, hub: Any = None) -> tuple[list[StackPart], list[Assumption]]:
    """Each of `req.extra_models` sized, and what was assumed."""
    from core.model.resolve import resolve_model  # resolve imports the catalogue's machinery: not at import

    parts: list[StackPart] = []
    for i, extra in enumerate(req.extra_models):
        lookup = True if hub is not None else None
        try:
            spec, resolved, _ = resolve_model(extra.model, catalog, hf_lookup=lookup, hub=hub)
        except CoreError as e:
            e.field = f"extra_models.{i}.model"  # the JSON contract names the field at fault
            raise
        if spec.kind in (ModelKind.IMAGE, ModelKind.VIDEO):
            raise EstimateError(
                f"{spec.name} is a diffusion pipeline, not a model to serve beside an LLM",
                f"extra_models.{i}.model",
            )
        role = extra.role or role_of(spec)
        precision = extra.precision or DEFAULT_STACK_PRECISION
        tokens = extra.context_length or min(STACK_DEFAULT_TOKENS, spec.max_context or STACK_DEFAULT_TOKENS)
        variant = Request(
            task=Task.INFERENCE,
            model=extra.model,
            precision=precision,
            engine=Engine.TRANSFORMERS,
            context_length=tokens,
            concurrency=extra.batch_size,
            kv_cache_precision=None,
        )

        filled, _ = fill_defaults(variant, spec)
        breakdown = {k: round(v) for k, v in peak_breakdown(filled, spec, arch_of(spec)).items() if v > 0}
        parts.append(
            StackPart(
                model=resolved,
                role=role,
                precision=precision,
                context_length=tokens,
                batch_size=extra.batch_size,
                total_bytes=sum(breakdown.values()),
                breakdown=breakdown,
            )
        )
    notes = [note("stack_separate_processes", models=len(parts))] if parts else []
    if parts and req.engine is Engine.VLLM:
        notes.append(note("stack_vllm_memory_fraction", fraction=VLLM_GPU_MEMORY_UTILIZATION))
    return parts, notes


def filled_stack(req: Request, parts: list[StackPart]) -> list[StackModel]:
    """`req.extra_models` with the defaults the sizing used filled in (echoed in `Result.request`)."""
    return [
        extra.model_copy(
            update={"role": p.role, "precision": p.precision, "context_length": p.context_length}
        )
        for extra, p in zip(req.extra_models, parts, strict=True)
    ]


def role_of(spec: ModelSpec) -> str:
    if _RERANKER_NAME.search(spec.id) or _RERANKER_NAME.search(spec.name):
        return "reranker"
    return "embedding" if spec.kind is ModelKind.ENCODER else "llm"


# --- reading a stack out of free text ----------------------------------------------------------------


@dataclass(frozen=True)
class StackWords:
    default_embedding: str
    default_reranker: str
    embedding: tuple[str, ...]
    reranker: tuple[str, ...]
    rag: tuple[str, ...]


@lru_cache(maxsize=1)
def stack_words() -> StackWords:
    table = read_toml(DATA_FILE).get("stack")
    if not isinstance(table, dict):
        raise ValueError(f"{DATA_FILE}: no [stack] table")
    try:
        return StackWords(
            default_embedding=str(table["default_embedding"]),
            default_reranker=str(table["default_reranker"]),
            embedding=tuple(str(w).lower() for w in table["embedding_words"]),
            reranker=tuple(str(w).lower() for w in table["reranker_words"]),
            rag=tuple(str(w).lower() for w in table["rag_words"]),
        )
    except KeyError as e:
        raise ValueError(f"{DATA_FILE}: [stack] lacks {e}") from e


# Where a stack's models are listed apart: "+", ",", ";", "и"/"and"/"with"/"плюс"/"с"/"вместе с".
_SEPARATORS = re.compile(r"\s*(?:\+|,|;|\s(?:и|and|with|plus|плюс|вместе с|с|со)\s)\s*", re.IGNORECASE)


def split_stack(text: str, catalog: Catalog) -> tuple[str, list[StackModel], list[Assumption]]:
    """(the text without the stack's extra models, the extra models, notes). Pieces of the text
    (between "+", commas, "и"/"and"/"with") that begin with an encoder's name (bge-m3, e5-large), or
    with a role word (reranker, эмбеддер), are extra models; the rest of each piece stays. "RAG"
    without an embedding model named adds the default one."""
    words = stack_words()
    lowered = text.lower()
    rag = any(re.search(rf"(?<!\w){re.escape(w)}(?!\w)", lowered) for w in words.rag)
    pieces = _SEPARATORS.split(text)
    if len(pieces) < 2 and not rag:
        return text, [], []
    kept: list[str] = []
    extras: list[StackModel] = []
    notes: list[Assumption] = []
    for piece in pieces:
        # past the contract's bound, a longer list in the text stays text
        found = _stack_model_at_start(piece, catalog, words) if len(extras) < MAX_EXTRA_MODELS else None
        if found is None:
            kept.append(piece)
            continue
        model_id, rest, by_role = found
        extras.append(StackModel(model=model_id))
        if by_role:
            notes.append(note("stack_default_model", model=catalog.models[model_id].name))
        kept.append(rest)
    if rag and not any(
        catalog.models[e.model].kind is ModelKind.ENCODER and role_of(catalog.models[e.model]) == "embedding"
        for e in extras
        if e.model in catalog.models
    ):
        extras.insert(0, StackModel(model=words.default_embedding))
        notes.append(note("stack_default_model", model=catalog.models[words.default_embedding].name))
    if not extras:
        return text, [], []
    rest = " ".join(p for p in kept if p.strip())
    for w in words.rag:  # "RAG:" names the stack, not the model
        rest = re.sub(rf"(?<!\w){re.escape(w)}(?!\w)\s*:?", " ", rest, flags=re.IGNORECASE)
    return " ".join(rest.split()), extras, notes


def _stack_model_at_start(piece: str, catalog: Catalog, words: StackWords) -> tuple[str, str, bool] | None:
    """(model id, the piece's rest, named by its role) when `piece` begins with an extra model."""
    tokens = piece.split()
    if not tokens or tokens[0].strip(".:").lower() not in _first_words():  # most pieces: at once
        return None
    for cut in range(min(len(tokens), 4), 0, -1):  # the longest name first: "bge reranker v2 m3"
        head = " ".join(tokens[:cut]).strip(".:").lower()
        rest = " ".join(tokens[cut:])
        if head in words.reranker:
            return words.default_reranker, rest, True
        if head in words.embedding:
            return words.default_embedding, rest, True
        found = catalog.find_model(head)
        if found is not None and found[0].kind is ModelKind.ENCODER and found[0].id in _stack_ids():
            return found[0].id, rest, False
    return None


@lru_cache(maxsize=1)
def _first_words() -> frozenset[str]:
    """The words a stack's model or role can begin with (names, aliases, ids; role words)."""
    rows = [r for r in read_toml(DATA_FILE).get("model") or [] if isinstance(r, dict)]
    keys = ("id", "name", "hf_id")
    names = [str(n) for r in rows for n in [*(r.get(k) for k in keys), *r.get("aliases", [])] if n]
    words = stack_words()
    return frozenset(n.split()[0].lower() for n in [*names, *words.embedding, *words.reranker])


@lru_cache(maxsize=1)
def _stack_ids() -> frozenset[str]:
    """The models of embedders.toml: only they are read as a stack's extra models (BERT-large, say,
    is asked about on its own)."""
    rows = read_toml(DATA_FILE).get("model") or []
    return frozenset(str(r["id"]) for r in rows if isinstance(r, dict) and "id" in r)


# --- changing a stack after an answer ("а без реранкера?", "а с bge-m3?": core.parse.followup) -------

# Words that add a model to the stack or take one out (lower case, whole words).
ADD_WORDS = ("с", "со", "with", "плюс", "plus", "+", "добавь", "добавить", "add", "и", "and")
REMOVE_WORDS = ("без", "without", "no", "убери", "убрать", "remove", "drop")
# Russian inflects the role words ("реранкера", "с эмбеддером"): a word beginning with one of them,
# at least this long, names the role.
_MIN_STEM = 5


def role_named(text: str) -> str | None:
    """'embedding' or 'reranker' when `text` is a role word or an inflected form of one, else None."""
    words = stack_words()
    lowered = " ".join(text.lower().split())
    for role, names in (("reranker", words.reranker), ("embedding", words.embedding)):
        for name in names:
            inflected = len(name) >= _MIN_STEM and lowered.startswith(name) and " " not in lowered
            if lowered == name or inflected:
                return role
    return None


def stack_model_named(text: str, catalog: Catalog) -> str | None:
    """The id of the stack model (embedders.toml) that `text` names whole, or None."""
    found = _stack_model_at_start(text, catalog, stack_words())
    return found[0] if found is not None and not found[1].strip() and not found[2] else None


def stack_role(model: str, catalog: Catalog, given: str | None = None) -> str | None:
    """The role of a stack's model: as given, else from the catalogue (None for a model it lacks)."""
    spec = catalog.models.get(model)
    return given or (role_of(spec) if spec is not None else None)
