"""Which configuration to recommend: the rental offers that fit, ordered by the operator's policy
(`core.catalogue.offers.RankingPolicy`, the `[ranking]` table of the offers file), and the fastest of them.

A recommendation is always an existing offer; a catalogue configuration outside the offers
(`in_offers` false) only when no offer fits at all.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from core.catalogue.catalog import Catalog
from core.catalogue.gpus import GpuSpec
from core.catalogue.models import ModelKind
from core.catalogue.offers import RankingPolicy, RankKey, RentalOffer
from core.contract import Recommendation, Request, Task, Verdict, VerdictKind

from .sizing import Sizer, verdict_kind

_DIFFUSION = (ModelKind.IMAGE, ModelKind.VIDEO)


@dataclass(slots=True)
class Candidate:
    """A configuration that fits (or fits tightly): an offer, or a catalogue one (`offer` None).
    Read-only by convention, not frozen: ~20 are built per estimate, and a frozen dataclass sets
    each field through object.__setattr__ (four times the cost)."""

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
    # read by every ranking (~50 times an estimate): worked out once, from the fields above
    headroom: float = field(init=False, compare=False, repr=False)
    price: float | None = field(init=False, compare=False, repr=False)  # the hourly price; None: on request

    def __post_init__(self) -> None:
        usable = self.usable or self.gpu.usable_bytes
        self.headroom = (usable - self.needed) / usable
        offer = self.offer
        self.price = offer.price_per_hour if offer and offer.availability == "available" else None


def offer_candidates(
    catalog: Catalog, sizer: Sizer, gpus: set[str] | None = None, sold_out: bool = False
) -> list[Candidate]:
    """The offers (of `gpus`, when given) that hold the request; sold-out ones only with `sold_out`
    (a taken server is never recommended: `sold_out` asks which would have been)."""
    out = []
    for position, offer in enumerate(catalog.offers):
        if (gpus is not None and offer.gpu not in gpus) or not sizer.splits(offer.count):
            continue
        if offer.availability == "sold_out" and not sold_out:
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
    found = c._ranks.get(keys)
    if found is None:
        values: list[Any] = []
        for key in keys:
            values += _rank_value(c, key)
        found = c._ranks[keys] = (*values, c.position)
    return found


def best(candidates: list[Candidate], policy: RankingPolicy) -> Candidate | None:
    """The first configuration by the policy, among those it considers."""
    pool = considered(candidates, policy)
    keys = tuple(policy.keys)
    return min(pool, key=lambda c: _rank_key(c, keys)) if pool else None


def tight(c: Candidate, policy: RankingPolicy) -> bool:
    return c.headroom < policy.comfortable_headroom


def lead(candidates: list[Candidate], policy: RankingPolicy) -> tuple[Candidate | None, Candidate | None]:
    """(the configuration to lead with, the comfortable one to name second or None). The policy's
    best (`best`), except under `cheapest_priced_leads` when that best has no price and a priced
    candidate fits, only tightly: the cheapest such leads (a price the user can act on beats "on
    request"), and the best comfortable candidate comes second. A comfortable priced candidate
    still beats a cheaper tight one."""
    pick = best(candidates, policy)
    priced = [c for c in candidates if c.price is not None]
    if pick is None or pick.price is not None or not policy.cheapest_priced_leads or not priced:
        return pick, None
    keys = tuple(policy.keys)
    cheapest = min(priced, key=lambda c: (c.price, _rank_key(c, keys)))
    if cheapest is pick or not tight(cheapest, policy):
        return pick, None
    return cheapest, (None if tight(pick, policy) else pick)


@dataclass(frozen=True)
class SafeWorkload:
    """What keeps a tight configuration comfortable: the longest context and the most users (of the
    request's own values halved, down to `MIN_SAFE_CONTEXT` and 1) whose need leaves the policy's
    headroom free; for training, the largest micro-batch (`micro_batch`, with `accumulation` steps
    that keep the batch per optimizer step); None where none does or the field does not apply."""

    context_length: int | None = None
    concurrency: int | None = None
    micro_batch: int | None = None
    accumulation: int | None = None


MIN_SAFE_CONTEXT = 1024  # shorter than this is no longer the workload asked (core.advice.mitigation_rules)


def safe_workload(c: Candidate, sizer: Sizer, policy: RankingPolicy) -> SafeWorkload:
    """For an LLM served on `c`: the context and the users that leave `comfortable_headroom` free;
    for training on `c`: the micro-batch and accumulation steps that do."""
    req = sizer.req
    budget = (c.usable or c.gpu.usable_bytes) * (1 - policy.comfortable_headroom)
    at_count = sizer.count_changes(c.count)
    if req.task is Task.TRAINING:
        micro = largest_micro_batch(req, lambda changes: sizer.total(**at_count, **changes) <= budget)
        if micro is None:
            return SafeWorkload()
        return SafeWorkload(micro_batch=micro, accumulation=accumulation_for(req, micro))
    if req.task is not Task.INFERENCE or req.context_length is None or sizer.spec.kind in _DIFFUSION:
        return SafeWorkload()

    def largest(field: str, start: int, floor: int) -> int | None:
        value = start // 2
        while value >= floor:
            changes: dict[str, Any] = {**at_count, field: value}
            if sizer.total(**changes) <= budget:
                return value
            value //= 2
        return None

    users = largest("concurrency", req.concurrency, 1) if req.concurrency > 1 else None
    return SafeWorkload(largest("context_length", req.context_length, MIN_SAFE_CONTEXT), users)


def accumulation_for(req: Request, micro_batch: int) -> int:
    """Accumulation steps that keep the request's batch per optimizer step at `micro_batch`."""
    return req.gradient_accumulation_steps * req.batch_size // micro_batch


def largest_micro_batch(req: Request, fits: Callable[[dict[str, Any]], bool]) -> int | None:
    """The largest micro-batch below the request's that divides it (the batch per optimizer step is
    kept by accumulating gradients over the rest: transformers' `gradient_accumulation_steps`,
    `per_device_train_batch_size` the micro-batch) whose variant `fits`; None when none does."""
    for micro in _divisors_below(req.batch_size):
        changes = {"batch_size": micro, "gradient_accumulation_steps": accumulation_for(req, micro)}
        if fits(changes):
            return micro
    return None


def _divisors_below(n: int) -> list[int]:
    """The divisors of `n` smaller than `n`, largest first."""
    small = [d for d in range(1, math.isqrt(n) + 1) if n % d == 0]
    return sorted({*small, *(n // d for d in small)} - {n}, reverse=True)


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
        price_per_hour=c.price,
        currency=c.offer.currency if c.offer else None,
        price_is_from=c.offer.price_is_from if c.price is not None and c.offer else False,
        price_per_month=c.offer.price_per_month if c.price is not None and c.offer else None,
        prices={k: (p.price_per_hour, p.price_per_month) for k, p in c.offer.prices.items()}
        if c.price is not None and c.offer
        else {},
        bytes_per_gpu=c.needed,
        verdict=c.verdict,
        reason=reason,
        in_offers=c.offer is not None,
    )
