"""Which configuration to recommend: the rental offers that fit, ordered by the operator's policy
(`core.specs.RankingPolicy`, the `[ranking]` table of the offers file), and the fastest of them.

A recommendation is always an existing offer; a catalogue configuration outside the offers
(`in_offers` false) only when no offer fits at all.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from core.catalog import Catalog
from core.contract import Recommendation, Task, Verdict, VerdictKind
from core.specs import GpuSpec, RankingPolicy, RankKey, RentalOffer

from .sizing import Sizer, verdict_kind


@dataclass(frozen=True)
class Candidate:
    """A configuration that fits (or fits tightly): an offer, or a catalogue one (`offer` None)."""

    gpu: GpuSpec
    count: int
    needed: int  # bytes per card
    verdict: VerdictKind
    offer: RentalOffer | None
    position: int  # in the offers file (catalogue order for catalogue configurations): the last tie-break
    usable: int = 0  # bytes per card the request may use (vLLM: its budget); 0: the whole card
    # its rank key per order of the policy's keys (`_rank_key`): each ranking of it reads the key
    _ranks: dict[tuple[RankKey, ...], tuple[Any, ...]] = field(
        default_factory=dict, compare=False, repr=False
    )

    @property
    def headroom(self) -> float:
        usable = self.usable or self.gpu.usable_bytes
        return (usable - self.needed) / usable

    @property
    def price(self) -> float | None:
        return self.offer.price_per_hour if self.offer else None


def offer_candidates(catalog: Catalog, sizer: Sizer, gpus: set[str] | None = None) -> list[Candidate]:
    """The offers (of `gpus`, when given) that hold the request."""
    out = []
    for position, offer in enumerate(catalog.offers):
        if (gpus is not None and offer.gpu not in gpus) or not sizer.splits(offer.count):
            continue
        gpu = catalog.gpus[offer.gpu]
        needed = sizer.at_count(offer.count)
        usable = sizer.usable(gpu)
        kind = verdict_kind(needed, usable, sizer.bands)
        if kind != "does_not_fit":
            out.append(Candidate(gpu, offer.count, needed, kind, offer, position, usable))
    return out


def catalogue_candidates(verdicts: Iterable[Verdict], catalog: Catalog) -> list[Candidate]:
    """No rental offer fits: catalogue configurations that do, price on request."""
    return [
        Candidate(catalog.gpus[v.gpu], v.count, v.bytes_per_gpu, v.verdict, None, position, v.usable_bytes)
        for position, v in enumerate(verdicts)
        if v.verdict != "does_not_fit"
    ]


def considered(candidates: list[Candidate], policy: RankingPolicy) -> list[Candidate]:
    """Those with comfortable headroom; the tight ones only when none has it."""
    comfortable = [c for c in candidates if c.headroom >= policy.comfortable_headroom]
    return comfortable or candidates


def _rank_value(c: Candidate, key: RankKey) -> tuple[Any, ...]:
    if key == "price":
        return (c.price is None, c.price or 0.0)
    if key == "priority":
        return (c.offer.priority if c.offer else math.inf,)
    if key == "cards":
        return (c.count,)
    return (c.count * c.gpu.usable_bytes,)  # memory rented


def rank_key(c: Candidate, policy: RankingPolicy) -> tuple[Any, ...]:
    return _rank_key(c, tuple(policy.keys))


def _rank_key(c: Candidate, keys: tuple[RankKey, ...]) -> tuple[Any, ...]:
    # `policy.keys` builds its list on every read: the callers below read it once per ranking.
    if keys not in c._ranks:
        c._ranks[keys] = (*(v for key in keys for v in _rank_value(c, key)), c.position)
    return c._ranks[keys]


def best(candidates: list[Candidate], policy: RankingPolicy) -> Candidate | None:
    """The first configuration by the policy, among those it considers."""
    pool = considered(candidates, policy)
    keys = tuple(policy.keys)
    return min(pool, key=lambda c: _rank_key(c, keys)) if pool else None


def speed(c: Candidate, task: Task) -> float:
    """Decode is bandwidth-bound; training and diffusion compute-bound (fp16 tensor TFLOPS)."""
    per_gpu = c.gpu.bandwidth_gb_s if task is Task.INFERENCE else (c.gpu.fp16_tflops or 0.0)
    return per_gpu * c.count


def fastest(candidates: list[Candidate], policy: RankingPolicy, task: Task) -> Candidate | None:
    """The fastest configuration considered, each GPU model at its fewest cards that fit (more
    cards of a model that already fits are not shown as "faster"); ties: the least memory rented,
    then the policy."""
    fewest: dict[str, Candidate] = {}
    keys = tuple(policy.keys)
    for c in sorted(considered(candidates, policy), key=lambda c: (c.count, _rank_key(c, keys))):
        fewest.setdefault(c.gpu.id, c)
    if not fewest:
        return None
    return min(
        fewest.values(),
        key=lambda c: (-speed(c, task), c.count * c.gpu.usable_bytes, _rank_key(c, keys)),
    )


def recommend(c: Candidate, reason: Any) -> Recommendation:
    return Recommendation(
        gpu=c.gpu.id,
        gpu_name=c.gpu.name,
        count=c.count,
        offer_id=c.offer.id if c.offer else None,
        url=c.offer.url if c.offer else None,
        price_per_hour=c.offer.price_per_hour if c.offer else None,
        currency=c.offer.currency if c.offer else None,
        price_is_from=c.offer.price_is_from if c.offer else False,
        price_per_month=c.offer.price_per_month if c.offer else None,
        bytes_per_gpu=c.needed,
        verdict=c.verdict,
        reason=reason,
        in_offers=c.offer is not None,
    )
