"""From a sized request to advice: verdicts per GPU configuration, the offer to rent, the fastest
one, mitigations when it does not fit, decode speed and host sizing.

- `sizing`: request variants sized through the same formulas, fit verdicts;
- `ranking`: the offers that fit, ordered by the operator's policy (`[ranking]` in the offers file);
- `mitigations`: what to change so it fits the target cards;
- `speed`: decode speed and host RAM/disk.

When the request names GPUs (`gpus`, the user's own card), `Advice.target` is the verdict on
`gpus[0] × num_gpus` and mitigations aim at those cards; the recommendation is still an offer:
the best offer of a named GPU that fits, else the best of all offers.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

from core.catalog import Catalog
from core.contract import (
    Assumption,
    HostAdvice,
    Mitigation,
    Recommendation,
    Request,
    Sharding,
    Task,
    Throughput,
    Verdict,
)
from core.formulas.params import Arch
from core.notes import note
from core.specs import GpuSpec, ModelSpec

from .mitigations import MIN_CONTEXT, MIN_QUANTIZE_STEP_BITS, MIN_SEQ_LEN, mitigations
from .ranking import Candidate, best, catalogue_candidates, fastest, offer_candidates, recommend
from .sizing import (
    CARD_COUNTS,
    TIGHT_HEADROOM,
    Sizer,
    tensor_parallel_divides,
    verdict,
    verdict_fields,
    verdict_kind,
    verdicts,
)
from .speed import (
    CHECKPOINT_BYTES_PER_PARAM,
    DECODE_BANDWIDTH_EFFICIENCY,
    HOST_RAM_RECOMMENDED_FACTOR,
    host,
    throughput,
)

__all__ = [
    "CARD_COUNTS",
    "CHECKPOINT_BYTES_PER_PARAM",
    "DECODE_BANDWIDTH_EFFICIENCY",
    "HOST_RAM_RECOMMENDED_FACTOR",
    "MIN_CONTEXT",
    "MIN_QUANTIZE_STEP_BITS",
    "MIN_SEQ_LEN",
    "TIGHT_HEADROOM",
    "Advice",
    "Sizer",
    "advise",
    "tensor_parallel_divides",
    "verdict_fields",
    "verdict_kind",
]


@dataclass
class Advice:
    verdicts: list[Verdict]
    recommendation: Recommendation | None
    alternatives: list[Recommendation]
    mitigations: list[Mitigation]
    throughput: list[Throughput]
    host: HostAdvice
    assumptions: list[Assumption] = field(default_factory=list)
    target: Verdict | None = None


def advise(
    req: Request, spec: ModelSpec, arch: Arch | None, catalog: Catalog, total: int, extra_bytes: int = 0
) -> Advice:
    """`total`: the per-card need as asked, `extra_bytes` (models beside this one) included."""
    sizer = Sizer(req, spec, arch, extra_bytes)
    named = _unique(catalog.gpu(g) for g in req.gpus) if req.gpus else []
    rows = verdicts(named or list(catalog.gpus.values()), sizer)
    pick, fast = _choose(req, catalog, sizer, named, rows)
    recommendation = recommend(pick, "cheapest") if pick else None
    alternatives = [recommend(fast, "fastest")] if fast and fast != pick else []
    target = verdict(named[0], req.num_gpus, total) if named else None

    notes: list[Assumption] = []
    if pick is not None and pick.offer is None:
        notes.append(note("not_in_offers", gpu=pick.gpu.id, count=pick.count))
    if req.task is Task.TRAINING and req.sharding is Sharding.NONE:
        notes.append(note("multi_gpu_fsdp"))
    targets = named or _unique(catalog.gpus[o.gpu] for o in catalog.offers) or list(catalog.gpus.values())
    fixes = mitigations(req, spec, catalog, sizer, total, targets)
    configs = [(c.gpu, c.count) for c in (pick, fast) if c is not None]
    if target is not None and target.verdict != "does_not_fit":
        configs.append((named[0], req.num_gpus))
    speeds = throughput(req, spec, arch, list({(g.id, n): (g, n) for g, n in configs}.values()))
    if speeds:
        notes.append(note("decode_bandwidth_bound", efficiency=DECODE_BANDWIDTH_EFFICIENCY))
    if named:  # the configurations recommended on other GPUs get their verdict rows too
        shown = {v.gpu for v in rows}
        rows += [verdict(c.gpu, c.count, c.needed) for c in (pick, fast) if c and c.gpu.id not in shown]
    return Advice(
        rows,
        recommendation,
        alternatives,
        fixes,
        speeds,
        host(req, spec, arch, recommendation, total),
        notes,
        target,
    )


def _choose(
    req: Request, catalog: Catalog, sizer: Sizer, named: list[GpuSpec], rows: list[Verdict]
) -> tuple[Candidate | None, Candidate | None]:
    """(the recommendation, the fastest offer). The recommendation: the best offer of a named GPU
    that fits, else the best of all offers that fit; only when no offer fits, the best catalogue
    configuration (not in the offers: named GPUs first). The fastest: of all offers that fit."""
    policy = catalog.ranking
    offers = offer_candidates(catalog, sizer)
    named_ids = {g.id for g in named}
    pick = best([c for c in offers if c.gpu.id in named_ids], policy) or best(offers, policy)
    if pick is None:
        fallback = catalogue_candidates(rows, catalog)
        if not fallback and named:
            fallback = catalogue_candidates(verdicts(list(catalog.gpus.values()), sizer), catalog)
        pick = best(fallback, policy)
    return pick, fastest(offers, policy, req.task)


def _unique(gpus: Iterable[GpuSpec]) -> list[GpuSpec]:
    return list({g.id: g for g in gpus}.values())
