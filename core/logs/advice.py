"""What a pasted log's measurement means: the card (matched by its reported memory, and its name
where the log gives one), the memory the run needed per card, what to change, what to rent.

The need per card (`measured_need`, per log format) is "measured" where the log gives all of it and
"at least" where a part is missing (PyTorch's OOM, a failed llama.cpp buffer). The rent: the
operator's offers ranked by their policy (core.advice.ranking.best), where the need fits.
Mitigations are the estimator's own (core.advice.mitigations, via core.sizing.estimate) when the log
names a catalogue model; measured ones (max_model_len, utilization, -ngl) come from the log's numbers.
"""

from __future__ import annotations

import dataclasses
import math
import re
from dataclasses import dataclass, field
from typing import Literal

from core.advice.ranking import Candidate, best
from core.advice.sizing import verdict_kind
from core.catalogue.catalog import Catalog
from core.catalogue.gpus import GpuSpec
from core.catalogue.models import ModelSpec
from core.catalogue.names import strip_variant
from core.contract import Engine, Precision, Request, Result, Task
from core.errors import CoreError
from core.formulas.overhead import CUDA_CONTEXT_BYTES
from core.formulas.vllm import VLLM_GPU_MEMORY_UTILIZATION, budget_bytes

from .reading import LogReading

CARD_MATCH = 0.035
"""Relative gap between the memory a log reports and a card's nvidia-smi total that still names the
card: CUDA's total (PyTorch's "total capacity", vLLM's total_gpu_memory) is 1-2 % under nvidia-smi's
(RTX 4090: 23.65 GiB vs 24564 MiB; RTX 3090: 23.69 GiB vs 24576 MiB, the excerpts in tests)."""
MAX_UTILIZATION = 0.95
"""The highest `--gpu-memory-utilization` suggested: above it vLLM leaves the CUDA graphs and other
processes too little (vLLM docs, "Conserving memory": lower it when other processes share the card)."""
NAME_PREFIXES = ("nvidia ", "geforce ", "tesla ")

Need = Literal["at_least", "measured"]


@dataclass(frozen=True)
class Action:
    """A change the log's numbers size: `code` (words: `log-action-<code>`) and its values."""

    code: str
    params: dict[str, str | int | float] = field(default_factory=dict)


@dataclass(frozen=True)
class LogAdvice:
    reading: LogReading
    cards: tuple[GpuSpec, ...]  # the catalogue cards the log's memory matches, closest first
    need_bytes: int | None  # per card
    need: Need
    rent: Candidate | None
    model: ModelSpec | None
    result: Result | None  # the estimate for that model on that card (its mitigations)
    actions: tuple[Action, ...]

    @property
    def short_bytes(self) -> int | None:
        """How much was missing on the card the log ran on (vLLM V1: the KV cache it said it lacked)."""
        r = self.reading
        if self.need_bytes is None and r.kv_needed_bytes and r.kv_cache_bytes is not None:
            return max(0, r.kv_needed_bytes - r.kv_cache_bytes)
        total = self.reading.total_bytes or (self.cards[0].usable_bytes if self.cards else None)
        if self.need_bytes is None or total is None:
            return None
        return max(0, self.need_bytes - total)


def advise_log(reading: LogReading, catalog: Catalog) -> LogAdvice:
    cards = match_cards(reading, catalog)
    need, kind = measured_need(reading)
    model = find_model(reading.model, catalog)
    result = _estimate(reading, model, cards, catalog) if model else None
    return LogAdvice(
        reading=reading,
        cards=cards,
        need_bytes=need,
        need=kind,
        rent=rent_for(reading, need, catalog) if need else None,
        model=model,
        result=result,
        actions=tuple(measured_actions(reading, cards)),
    )


# --- the card ---------------------------------------------------------------------------------------


def match_cards(reading: LogReading, catalog: Catalog) -> tuple[GpuSpec, ...]:
    """Cards whose memory is within CARD_MATCH of the log's total (closest first), narrowed by the
    name the log gives; by the name alone when the log has no total."""
    named = _by_name(reading.gpu_name, catalog)
    total = reading.total_bytes
    if reading.gpu_name and named is None:
        return ()  # a card the catalogue does not know: never named as another of the same memory
    if total is None:
        return (named,) if named else ()
    near = sorted(
        (g for g in catalog.gpus.values() if abs(g.usable_bytes - total) <= CARD_MATCH * g.usable_bytes),
        key=lambda g: abs(g.usable_bytes - total),
    )
    if named is not None:
        same = [g for g in near if g.id == named.id or _chip(g) == _chip(named)]
        return tuple(same or [named])
    return tuple(near)


def _by_name(name: str | None, catalog: Catalog) -> GpuSpec | None:
    if not name:
        return None
    words = name.lower().strip(" .")
    for prefix in NAME_PREFIXES:
        words = words.removeprefix(prefix)
    return catalog.find_gpu(words) or catalog.find_gpu(name)


def _chip(gpu: GpuSpec) -> str:
    return gpu.same_compute_as or gpu.id


# --- the need ---------------------------------------------------------------------------------------


def measured_need(r: LogReading) -> tuple[int | None, Need]:
    """The memory the run needed per card, and whether that is measured or a lower bound:

    - PyTorch OOM (≥ 2.1): in use by the process − cached but unallocated + the failed allocation (the
      cache could have served part of it, so this is a lower bound: "at least"); older format: already
      allocated + the failed allocation (CUDA context not printed: also "at least").
    - nvidia-smi: the memory in use on the busiest card (measured).
    - vLLM: what one request of `max_model_len` tokens needs: weights + non-torch + activation peak (or
      the budget less the KV pool, `total × gpu_memory_utilization − KV`) + KV bytes per token (the pool
      ÷ its tokens, `vllm/v1/core/kv_cache_utils.py`) × max_model_len. vLLM takes that share of each
      card, so a card holds it when `need ≤ usable × 0.9` (the default utilization, core.formulas.vllm).
    - llama.cpp: the device's model + KV + compute buffers (+ the buffer that failed: "at least").
    """
    if r.kind == "torch_oom":
        base = (
            r.used_bytes - (r.reserved_unused_bytes or 0) if r.used_bytes is not None else r.allocated_bytes
        )
        return _plus(base, r.failed_bytes), "at_least"
    if r.kind == "torch_oom_legacy":
        return _plus(r.allocated_bytes, r.failed_bytes), "at_least"
    if r.kind == "nvidia_smi":
        return r.used_bytes, "measured"
    if r.kind == "vllm":
        return _vllm_need(r)
    parts = [r.weights_bytes, r.kv_cache_bytes if r.gpu_count == 1 else None, r.activation_bytes]
    known = [p for p in parts if p]
    if not known and r.gpu_count > 1:
        return None, "at_least"  # one device's failed buffer says nothing of what the run needs
    total = sum(known) + (r.failed_bytes or 0)
    return (total or None), ("at_least" if r.failed_bytes or len(known) < 3 else "measured")


def _plus(a: int | None, b: int | None) -> int | None:
    return None if a is None else a + (b or 0)


def kv_bytes_per_token(r: LogReading) -> float | None:
    if r.kv_cache_bytes and r.kv_tokens:
        return r.kv_cache_bytes / r.kv_tokens
    return None


def _vllm_non_kv(r: LogReading) -> int | None:
    if r.total_bytes and r.kv_cache_bytes is not None:
        util = r.memory_utilization or VLLM_GPU_MEMORY_UTILIZATION
        return budget_bytes(r.total_bytes, util) - r.kv_cache_bytes
    if r.weights_bytes:
        return r.weights_bytes + (r.non_torch_bytes or 0) + (r.activation_bytes or 0)
    return None


def _vllm_need(r: LogReading) -> tuple[int | None, Need]:
    non_kv, per_token = _vllm_non_kv(r), kv_bytes_per_token(r)
    if non_kv is not None and r.kv_needed_bytes:  # V1 computed the KV of one full request itself
        return non_kv + r.kv_needed_bytes, "measured"
    if non_kv is not None and per_token and r.context_length:
        return non_kv + math.ceil(per_token * r.context_length), "measured"
    return (r.weights_bytes, "at_least") if r.weights_bytes else (None, "at_least")


# --- what to rent -------------------------------------------------------------------------------------


def rent_for(r: LogReading, need: int, catalog: Catalog) -> Candidate | None:
    """The offer the policy ranks first among those whose cards hold `need` per card, at least as
    many cards as the log used (vLLM: within its default utilization share)."""
    out = []
    for position, offer in enumerate(catalog.offers):
        if offer.availability == "sold_out" or offer.count < r.gpu_count:
            continue
        gpu = catalog.gpus[offer.gpu]
        usable = budget_bytes(gpu.usable_bytes, VLLM_GPU_MEMORY_UTILIZATION) if r.kind == "vllm" else 0
        kind = verdict_kind(need, usable or gpu.usable_bytes)
        if kind != "does_not_fit":
            out.append(Candidate(gpu, offer.count, need, kind, offer, position, usable))
    return best(out, catalog.ranking)


# --- the model and its mitigations ------------------------------------------------------------------------

_HUB_CACHE = re.compile(r"models--([\w.-]{1,100})--([\w.-]{1,200})")
_QUANT_TAIL = re.compile(r"(?i)[-.](?:quantized|w\d{1,2}a\d{1,2}|fp8|int[48]|gptq|awq|bnb|gguf)\b")
_GGUF_TAIL = re.compile(r"(?i)[-_.](?:I?Q\d_[A-Z0-9_]{1,8}|BF16|F16|F32)$")


def find_model(name: str | None, catalog: Catalog) -> ModelSpec | None:
    """A catalogue model the log names: a Hub id, a path ending in one, a Hub cache folder, a GGUF
    file name without its type."""
    if not name:
        return None
    tries = [name]
    if m := _HUB_CACHE.search(name):
        tries.append(f"{m.group(1)}/{m.group(2)}")
    parts = name.replace("\\", "/").rstrip("/").split("/")
    tries += ["/".join(parts[-2:]), parts[-1]]
    stem = _GGUF_TAIL.sub("", parts[-1].removesuffix(".gguf"))
    tries.append(re.sub(r"-\d{4}$", "", stem))  # "…-Instruct-2509": a release date
    tries.append(_QUANT_TAIL.split(parts[-1])[0])  # "…-Instruct-quantized.w8a8": a quantized copy
    for t in dict.fromkeys(tries):
        found = catalog.find_model(t) or catalog.find_model(strip_variant(t)[0])
        if found:
            return found[0]
    return None


def _estimate(r: LogReading, model: ModelSpec, cards: tuple[GpuSpec, ...], catalog: Catalog) -> Result | None:
    from core.sizing.estimate import estimate  # the estimator, only when a model is named

    engine = {"vllm": Engine.VLLM, "llama_cpp": Engine.LLAMA_CPP}.get(r.kind)
    fields: dict[str, object] = {"task": Task.INFERENCE, "model": model.id, "engine": engine}
    if r.context_length:
        fields["context_length"] = r.context_length
    if cards:
        fields["gpus"] = [cards[0].id]
        fields["num_gpus"] = r.gpu_count
    precision = _precision(r.precision) or _precision(_name_precision(r.model or ""))
    if precision is not None:
        fields["precision"] = precision
    try:
        return estimate(Request.model_validate(fields), catalog)
    except (CoreError, ValueError):
        return None


_NAME_PRECISION = re.compile(r"(?i)(w8a8|w4a16|fp8|awq|gptq|int8|int4)")


def _name_precision(name: str) -> str | None:
    """A quantized checkpoint's format from its name ("…-quantized.w8a8", "…-AWQ")."""
    m = _NAME_PRECISION.search(name.rsplit("/", 1)[-1])
    if m is None:
        return None
    return {"w8a8": "int8", "w4a16": "gptq"}.get(m.group(1).lower(), m.group(1).lower())


def _precision(hint: str | None) -> Precision | None:
    if not hint:
        return None
    aliases = {"awq": Precision.AWQ_INT4, "awq_marlin": Precision.AWQ_INT4, "gptq": Precision.GPTQ_INT4}
    if hint in aliases:
        return aliases[hint]
    try:
        return Precision(hint)
    except ValueError:
        return None


# --- changes the log's numbers size -------------------------------------------------------------------------


def measured_actions(r: LogReading, cards: tuple[GpuSpec, ...]) -> list[Action]:
    out: list[Action] = []
    if r.kind == "vllm" and r.failure == "kv_too_small" and r.kv_tokens:
        out.append(Action("max_model_len", {"tokens": str(r.kv_tokens)}))  # a flag: no digit grouping
        util = _utilization_needed(r)
        if util is not None:
            out.append(Action("gpu_memory_utilization", {"value": f"{util:.2f}"}))
    if r.kind == "llama_cpp" and r.failure == "oom":
        layers = _layers_that_fit(r, cards)
        out.append(
            Action("n_gpu_layers", {"layers": str(layers)}) if layers else Action("n_gpu_layers_lower")
        )
    if r.kind in ("torch_oom", "torch_oom_legacy"):
        unused, failed = r.reserved_unused_bytes or 0, r.failed_bytes or 0
        if failed and unused >= failed:  # PyTorch's own hint: the cache holds enough, fragmented
            out.append(Action("expandable_segments", {"cached": unused, "asked": failed}))
    return out


def _utilization_needed(r: LogReading) -> float | None:
    per_token, total = kv_bytes_per_token(r), r.total_bytes
    if not per_token or not total or not r.context_length or not r.kv_tokens:
        return None
    util = r.memory_utilization or VLLM_GPU_MEMORY_UTILIZATION
    needed = util + per_token * (r.context_length - r.kv_tokens) / total
    needed = math.ceil(needed * 100) / 100
    return needed if needed <= MAX_UTILIZATION else None


def _layers_that_fit(r: LogReading, cards: tuple[GpuSpec, ...]) -> int | None:
    """Layers whose weights fit beside the KV cache, the compute buffer (or the buffer that failed)
    and the CUDA context, at the log's bytes per layer (model buffer ÷ layers offloaded; llama.cpp
    puts whole layers on the GPU, `-ngl`). The KV cache is kept whole: `-ngl` does not move it
    unless `--no-kv-offload`, a slower choice the answer does not make for the user."""
    total = r.total_bytes or (cards[0].usable_bytes if cards else None)
    if not (r.layers and r.weights_bytes and total and r.layers[0]):
        return None
    per_layer = r.weights_bytes / r.layers[0]
    held = (r.kv_cache_bytes or 0) + (r.activation_bytes or 0) + (r.failed_bytes or 0)
    room = total - held - CUDA_CONTEXT_BYTES
    fit = int(room // per_layer) if room > 0 else 0
    return min(fit, r.layers[0] - 1) if fit > 0 else None


def record(a: LogAdvice) -> dict[str, object]:
    """What a calibration candidate keeps of the log: the numbers read (processes by size only, never
    their names or paths), the card and model matched, the need. JSON-ready."""
    reading = dataclasses.asdict(a.reading)
    reading["processes"] = [size for _, _, size in a.reading.processes]
    model = "/".join(a.reading.model.replace("\\", "/").split("/")[-2:]) if a.reading.model else None
    reading["model"] = model  # a local path's folders may name the user: the last two parts only
    return {
        "kind": a.reading.kind,
        "gpu": a.cards[0].id if a.cards else None,
        "gpu_name": a.reading.gpu_name,
        "model": model,
        "model_id": a.model.id if a.model else None,
        "total_bytes": a.reading.total_bytes,
        "need_bytes": a.need_bytes,
        "failed_bytes": a.reading.failed_bytes,
        "reading": reading,
    }
