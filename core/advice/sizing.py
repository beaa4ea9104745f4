"""Sizing configurations: the per-GPU peak of request variants, and fit verdicts.

Every configuration is sized by re-running the component formulas on a variant of the request
(more cards, another precision...), so advice and estimate never disagree.
"""

from __future__ import annotations

from typing import Any, TypeVar

from pydantic import BaseModel, TypeAdapter

from core.catalogue.gpus import GpuSpec
from core.catalogue.models import ModelKind, ModelSpec
from core.catalogue.offers import DEFAULT_BANDS, Bands
from core.contract import Engine, Request, Sharding, Task, Verdict, VerdictKind
from core.formulas.params import Arch
from core.formulas.peak import peak_breakdown
from core.formulas.vllm import budget_bytes, memory_fraction

CARD_COUNTS = (1, 2, 4, 8)
# Below 10% free memory a run is "tight" (the default comfortable band; the operator's is
# `RankingPolicy.comfortable_headroom`): allocator fragmentation and spikes (longer prompts, a
# larger batch) commonly take that much (PyTorch CUDA memory management notes).
TIGHT_HEADROOM = DEFAULT_BANDS.comfortable

_VERDICT_LIST = TypeAdapter(list[Verdict])
_set_attr = object.__setattr__
M = TypeVar("M", bound=BaseModel)


def variant(model: M, changes: dict[str, Any]) -> M:
    """`model.model_copy(update=changes)`, the same object (fields, fields set), without pydantic's
    generic copy: the sizing of each mitigation and offload split makes one, ~20 per estimate. As with
    `model_copy`, `changes` are trusted (not validated)."""
    if model.__pydantic_extra__ is not None or model.__pydantic_private__ is not None:
        return model.model_copy(update=changes)
    cls = type(model)
    new = cls.__new__(cls)
    fields = model.__dict__.copy()
    fields.update(changes)
    _set_attr(new, "__dict__", fields)
    _set_attr(new, "__pydantic_extra__", None)
    _set_attr(new, "__pydantic_fields_set__", model.__pydantic_fields_set__ | changes.keys())
    _set_attr(new, "__pydantic_private__", None)
    return new


class Sizer:
    """Per-GPU peak of request variants, memoised by the fields that change."""

    def __init__(
        self,
        req: Request,
        spec: ModelSpec,
        arch: Arch | None,
        extra_bytes: int = 0,
        parts: dict[str, float] | None = None,
        bands: Bands = DEFAULT_BANDS,
    ) -> None:
        """`parts`: `peak_breakdown` of `req` itself, where the caller has it (not sized again);
        `bands`: the fit bands of the ranking policy, for every verdict on a variant."""
        self.req, self.spec, self.arch = req, spec, arch
        self.bands = bands
        # Models served beside this one on each card (a RAG stack, core.sizing.stack): added to every variant.
        self.extra_bytes = extra_bytes
        self._parts: dict[tuple[Any, ...], dict[str, float]] = {}
        if parts is not None:
            self._parts[(spec.id,)] = parts
        self._totals: dict[tuple[Any, ...], int] = {}
        self._by_count: dict[int, int] = {}
        self._usable: dict[str, int] = {}
        self._splits: dict[int, bool] = {}
        self._fraction = memory_fraction(req.engine, req.gpu_memory_utilization)

    def breakdown(
        self, spec: ModelSpec | None = None, arch: Arch | None = None, **changes: Any
    ) -> dict[str, float]:
        """`peak_breakdown` of the variant `changes` describe (of this model, or of `spec`), memoised."""
        return self._breakdown(*self._key(spec, changes), spec, arch)

    def total(self, spec: ModelSpec | None = None, arch: Arch | None = None, **changes: Any) -> int:
        """The per-card need of the variant: its own peak and the models beside it."""
        key, changes = self._key(spec, changes)
        if key not in self._totals:
            parts = self._breakdown(key, changes, spec, arch)
            self._totals[key] = round(sum(parts.values())) + self.extra_bytes
        return self._totals[key]

    def _breakdown(
        self, key: tuple[Any, ...], changes: dict[str, Any], spec: ModelSpec | None, arch: Arch | None
    ) -> dict[str, float]:
        if key not in self._parts:
            req = variant(self.req, changes) if changes else self.req
            self._parts[key] = peak_breakdown(req, spec or self.spec, arch or self.arch)
        return self._parts[key]

    def _key(self, spec: ModelSpec | None, changes: dict[str, Any]) -> tuple[tuple[Any, ...], dict[str, Any]]:
        """The memo key of a variant, by the fields that really change (one equal to the request's
        own is no change), and those changes."""
        req = self.req
        changes = {k: v for k, v in changes.items() if getattr(req, k) != v}
        return ((spec or self.spec).id, *sorted(changes.items())), changes

    def fraction(self, changes: dict[str, Any] | None = None) -> float:
        """The share of each card the request (or the variant `changes` describe) may use: all of
        it, or under vLLM `gpu_memory_utilization` (0.9 by default)."""
        if not changes:
            return self._fraction
        engine = changes.get("engine", self.req.engine)
        return memory_fraction(engine, changes.get("gpu_memory_utilization", self.req.gpu_memory_utilization))

    def usable(self, gpu: GpuSpec, **changes: Any) -> int:
        """The bytes of one card the request (or the variant `changes` describe) may use."""
        if changes:
            return budget_bytes(gpu.usable_bytes, self.fraction(changes))
        if gpu.id not in self._usable:
            self._usable[gpu.id] = budget_bytes(gpu.usable_bytes, self._fraction)
        return self._usable[gpu.id]

    def at_count(self, count: int) -> int:
        if count not in self._by_count:
            self._by_count[count] = self.total(**self.count_changes(count))
        return self._by_count[count]

    def splits(self, count: int) -> bool:
        """Whether `count` GPUs can run the request: vLLM's tensor parallelism needs the attention
        heads to divide evenly (vLLM `verify_with_parallel_config`). A diffusion pipeline generates
        on one card (diffusers has no model split): more cards never help it, so none are sized.
        Memoised: asked for every GPU and offer at each count."""
        if count not in self._splits:
            self._splits[count] = self._splits_uncached(count)
        return self._splits[count]

    def _splits_uncached(self, count: int) -> bool:
        if (
            count > 1
            and self.spec.kind in (ModelKind.IMAGE, ModelKind.VIDEO)
            and self.req.task is not Task.TRAINING
        ):
            return False
        return tensor_parallel_divides(self.req, self.arch, count)

    def count_changes(self, count: int) -> dict[str, Any]:
        changes: dict[str, Any] = {"num_gpus": count}
        if self.req.task is Task.TRAINING and count > 1 and self.req.sharding is Sharding.NONE:
            changes["sharding"] = Sharding.FSDP  # replicas (DDP) would not help the fit
        elif self.req.task is Task.TRAINING and count == 1 and self.req.num_gpus > 1:
            changes["sharding"] = Sharding.NONE  # one card runs without sharding (nothing to shard over)
        return changes


def tensor_parallel_divides(req: Request, arch: Arch | None, count: int) -> bool:
    """vLLM splits attention heads across tensor-parallel ranks: their number must divide evenly."""
    if req.engine is not Engine.VLLM or req.task is not Task.INFERENCE or arch is None:
        return True
    return arch.a % count == 0


def verdict_kind(needed: int, usable: int, bands: Bands = DEFAULT_BANDS) -> VerdictKind:
    """Fits with at least `bands.comfortable` of the card free, tightly with at least `bands.tight`;
    with less it does not fit reliably (a full card is no fit)."""
    free = usable - needed
    if free < bands.tight * usable:
        return "does_not_fit"
    return "tight" if free < bands.comfortable * usable else "fits"


def fits_within(needed: int, usable: int, bands: Bands = DEFAULT_BANDS) -> bool:
    """Whether `needed` fits `usable` at all (comfortably or tightly): the bound every "then it
    fits" of a mitigation uses."""
    return verdict_kind(needed, usable, bands) != "does_not_fit"


def verdict_fields(
    gpu: str, gpu_name: str, usable: int, count: int, needed: int, bands: Bands = DEFAULT_BANDS
) -> dict[str, Any]:
    """The fields of a `Verdict`: `count` cards of `usable` bytes each, `needed` bytes per card."""
    return {
        "gpu": gpu,
        "gpu_name": gpu_name,
        "count": count,
        "bytes_per_gpu": needed,
        "usable_bytes": usable,
        "headroom": round((usable - needed) / usable, 4),
        "headroom_bytes": usable - needed,
        "verdict": verdict_kind(needed, usable, bands),
    }


def verdict(
    gpu: GpuSpec, count: int, needed: int, usable: int | None = None, bands: Bands = DEFAULT_BANDS
) -> Verdict:
    """`usable`: the bytes per card the request may use (`Sizer.usable`); default the whole card."""
    return Verdict(**verdict_fields(gpu.id, gpu.name, usable or gpu.usable_bytes, count, needed, bands))


def verdicts(gpus: list[GpuSpec], sizer: Sizer) -> list[Verdict]:
    """Each GPU at 1, 2, 4, 8 cards, stopping at the first count that fits. Validated in one call:
    ~80 verdicts per estimate, one pydantic call each would dominate the estimate's time."""
    counts = [n for n in CARD_COUNTS if sizer.splits(n)]
    bands, at_count, rows = sizer.bands, sizer.at_count, []
    for gpu in gpus:
        usable = sizer.usable(gpu)
        for count in counts:
            row = verdict_fields(gpu.id, gpu.name, usable, count, at_count(count), bands)
            rows.append(row)
            if row["verdict"] == "fits":
                break
    return _VERDICT_LIST.validate_python(rows)
