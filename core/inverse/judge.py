"""What an inverse question is judged against, and the judge: the target cards (`gpus[0] × num_gpus`,
or a bare memory size) and whether one value of the solved field fits them — by the quick sums of
the peak where that is clear, by the full estimate (its target verdict) near the edge."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from core.advice import TIGHT_HEADROOM
from core.catalogue.catalog import Catalog
from core.catalogue.gpus import GpuSpec
from core.catalogue.models import ModelSpec
from core.contract import Precision, Request, Result
from core.errors import CoreError, EstimateError
from core.formulas.params import arch_of
from core.formulas.peak import peak_breakdown
from core.language.words import note
from core.model.hub import Hub
from core.model.resolve import resolve_model
from core.sizing.defaults import fill_defaults
from core.sizing.estimate import estimate
from core.units import GiB

# Each search step is one estimator run; exponential + binary search over [1, 10^7] takes ~48.
MAX_ESTIMATES = 96
# How far the quick sums may be from the verdict's judgement (a memory budget it applies, rounding):
# values needing up to this much more than the card are confirmed with the full estimate.
EDGE = 0.10


@dataclass(frozen=True)
class Target:
    gpu: GpuSpec | None  # None: a bare memory size
    name: str
    usable: int
    count: int


def solve_target(req: Request, catalog: Catalog) -> tuple[Target, list[Any]]:
    if req.gpus:
        gpu = catalog.gpu(req.gpus[0])
        return Target(gpu, gpu.name, gpu.usable_bytes, req.num_gpus), []
    if req.memory_gb is not None:
        usable = round(req.memory_gb * GiB)
        return Target(None, f"{req.memory_gb:g} GB", usable, req.num_gpus), []
    default = default_gpu(catalog)
    if default is None:
        raise EstimateError("name the GPU (gpus) or its memory (memory_gb) to solve for", "gpus")
    notes = [note("solve_default_target", gpu=default.name)]
    return Target(default, default.name, default.usable_bytes, req.num_gpus), notes


def default_gpu(catalog: Catalog) -> GpuSpec | None:
    """No card named: the operator's first-choice offer (lowest priority, then price) — what we rent."""
    if not catalog.offers:
        return None
    first = min(
        catalog.offers,
        key=lambda o: (o.priority, o.count, o.price_per_hour if o.price_per_hour is not None else 1e18),
    )
    return catalog.gpus[first.gpu]


class Judge:
    """Whether a request variant fits the target: `quick` by the summed formulas, `exact` by the full
    estimate's target verdict (or its total against a bare memory size). Counts the runs."""

    def __init__(
        self,
        base: Request,
        target: Target,
        catalog: Catalog,
        searched: str | None = None,
        hub: Hub | None = None,
    ) -> None:
        self.base, self.target, self.catalog, self.hub = base, target, catalog, hub
        # the most a value may need and still fit: the tight band of the ranking policy (a full card
        # is no fit), as the target verdict judges it
        self.limit = round(target.usable * (1 - catalog.ranking.tight_headroom))
        self.searched = searched  # a count field whose value no default depends on (see `_count_base`)
        self.runs = 0
        self.max_runs = MAX_ESTIMATES  # the estimates a search may take
        self._resolved: dict[str, tuple[ModelSpec, Any]] = {}
        self._filled: dict[str, Request] = {}
        self._results: dict[tuple[tuple[str, Any], ...], Result | None] = {}

    def variant(self, **changes: Any) -> Request:
        if "precision" in changes:  # the contract's enum, so the result serialises as it validates
            changes["precision"] = Precision(changes["precision"])
        return self.base.model_copy(update=changes)

    def quick_need(self, req: Request) -> int:
        self._count()
        key = req.model if isinstance(req.model, str) else repr(req.model)
        if key not in self._resolved:
            spec, _, _ = resolve_spec(req.model, self.catalog, self.hub)
            self._resolved[key] = (spec, arch_of(spec))
        spec, arch = self._resolved[key]
        if self.searched is None:
            filled, _ = fill_defaults(req, spec)
        else:  # the defaults are those of the first probe: only the searched value changes
            if key not in self._filled:
                self._filled[key] = fill_defaults(req, spec)[0]
            filled = self._filled[key].model_copy(update={self.searched: getattr(req, self.searched)})
        parts = peak_breakdown(filled, spec, arch).items()
        return sum(round(v) for k, v in parts if v > 0 or k == "overhead")

    def near_edge(self, req: Request) -> bool:
        """Within `EDGE` of the card's memory by the quick sums: where the verdict may judge otherwise."""
        try:
            return self.quick_need(req) <= self.target.usable * (1 + EDGE)
        except CoreError:
            return False

    def quick(self, req: Request) -> bool:
        try:
            return self.quick_need(req) <= self.limit
        except CoreError:
            return False

    def result(self, req: Request, key: tuple[tuple[str, Any], ...]) -> Result | None:
        """The full estimate of a variant (None when the estimator refuses it), run once per key."""
        if key not in self._results:
            self._count()
            try:
                self._results[key] = estimate(req, self.catalog, hub=self.hub)
            except CoreError:
                self._results[key] = None
        return self._results[key]

    def exact(self, req: Request, key: tuple[tuple[str, Any], ...]) -> Result | None:
        """The estimate when it fits the target, else None."""
        result = self.result(req, key)
        return result if result is not None and self.fits(result) else None

    def fits(self, result: Result) -> bool:
        if self.target.gpu is not None and result.target is not None:
            return result.target.verdict != "does_not_fit"
        return result.total_bytes <= self.limit

    def need(self, result: Result) -> int:
        return result.target.bytes_per_gpu if result.target is not None else result.total_bytes

    def comfortable(self, result: Result) -> bool:
        """Whether it fits with the recommended headroom: the target's verdict "fits" (not "tight"),
        the same band the answer shows; a bare memory size by `TIGHT_HEADROOM`."""
        if self.target.gpu is not None and result.target is not None:
            return result.target.verdict == "fits"
        return self.need(result) <= self.target.usable * (1 - TIGHT_HEADROOM)

    def _count(self) -> None:
        self.runs += 1
        if self.runs > self.max_runs:
            raise EstimateError(f"the search took more than {self.max_runs} estimates", "solve_for")


def resolve_spec(model: Any, catalog: Catalog, hub: Hub | None) -> tuple[ModelSpec, Any, Any]:
    """The model as `estimate` resolves it: a looked-up Hugging Face model from `hub` when given."""
    return resolve_model(model, catalog, hf_lookup=True if hub is not None else None, hub=hub)
