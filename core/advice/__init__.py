"""From a sized request to advice: verdicts per GPU configuration, the offer to rent, the fastest
one, mitigations when it does not fit, decode speed and host sizing.

`sizing`: request variants sized through the same formulas, fit verdicts; `ranking`: the offers that
fit, ordered by the operator's policy (`[ranking]` in the offers file); `mitigations`: what to change
so it fits the target cards (`mitigation_*`, `smaller_model`); `speed`: decode speed and host RAM/disk
(`decode`: one decode step, shared with `offload`); `offload`: llama.cpp with part of the model in
host RAM; `latency`: time to first token and the servers a load takes; `launch`: the command that runs
what was sized. When the request names GPUs (`gpus`, the user's own card), `Advice.target` is the
verdict on `gpus[0] × num_gpus` and mitigations aim at those cards; the recommendation is still an
offer: the best offer of a named GPU that fits, else the best of all offers.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

from core.catalogue.catalog import Catalog
from core.catalogue.gpus import GpuSpec
from core.catalogue.models import ModelKind, ModelSpec
from core.contract import (
    Assumption,
    Engine,
    HostAdvice,
    Mitigation,
    Recommendation,
    Request,
    ServingCapacity,
    Sharding,
    Task,
    Throughput,
    Verdict,
)
from core.formulas import vllm
from core.formulas.kv_cache import model_kv_cache_bytes
from core.formulas.params import Arch
from core.formulas.precision import kv_bytes_per_element
from core.language.words import note

from .mitigation_rules import MIN_CONTEXT, MIN_QUANTIZE_STEP_BITS
from .mitigation_training import MIN_SEQ_LEN
from .mitigations import mitigations
from .ranking import (
    Candidate,
    best,
    catalogue_candidates,
    fastest,
    lead,
    offer_candidates,
    recommend,
    safe_workload,
)
from .sizing import (
    CARD_COUNTS,
    TIGHT_HEADROOM,
    Sizer,
    fits_within,
    tensor_parallel_divides,
    variant,
    verdict,
    verdict_fields,
    verdict_kind,
    verdicts,
)
from .speed import (
    ALLREDUCES_PER_LAYER,
    CHECKPOINT_BYTES_PER_PARAM,
    DECODE_BANDWIDTH_EFFICIENCY,
    HOST_RAM_RECOMMENDED_FACTOR,
    TENSOR_PARALLEL_DECODE_EFFICIENCY,
    allreduce_latency_s,
    eager_launch_s,
    host,
    moe_layer_s,
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
    "TENSOR_PARALLEL_DECODE_EFFICIENCY",
    "TIGHT_HEADROOM",
    "Advice",
    "Sizer",
    "advise",
    "fits_within",
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
    serving: ServingCapacity | None = None


def advise(
    req: Request,
    spec: ModelSpec,
    arch: Arch | None,
    catalog: Catalog,
    total: int,
    extra_bytes: int = 0,
    given: Request | None = None,
    parts: dict[str, float] | None = None,
) -> Advice:
    """`req` has every default filled; `given` is the request as asked (its unset fields tell which
    defaults a mitigation that switches the method must recompute), `req` when not given. `total`:
    the per-card need as asked, `extra_bytes` (models beside this one) included; `parts`: the peak
    breakdown of `req`, where the caller has it."""
    sizer = Sizer(req, spec, arch, extra_bytes, parts, catalog.ranking.bands)
    named = _unique(catalog.gpu(g) for g in req.gpus) if req.gpus else []
    rows = verdicts(named or list(catalog.gpus.values()), sizer)
    pick, fast, roomy = _choose(req, catalog, sizer, named, rows)
    recommendation = _with_breakdown(recommend(pick, "cheapest"), sizer) if pick else None
    alternatives = [_with_breakdown(recommend(fast, "fastest"), sizer)] if fast and fast is not pick else []
    target = verdict(named[0], req.num_gpus, total, sizer.usable(named[0]), sizer.bands) if named else None

    notes: list[Assumption] = []
    if pick is not None and roomy is not None:  # a tight priced offer leads: the comfortable one second
        alternatives.append(_with_breakdown(recommend(roomy, "most_headroom"), sizer))
        safe = safe_workload(pick, sizer, catalog.ranking)
        notes.append(
            note(
                "tight_offer",
                percent=round(catalog.ranking.comfortable_headroom * 100),
                context_length=safe.context_length or 0,
                concurrency=safe.concurrency or 0,
                micro_batch=safe.micro_batch or 0,
                accumulation=safe.accumulation or 0,
            )
        )
    if pick is not None and pick.offer is None:
        notes.append(note("not_in_offers", gpu=pick.gpu.id, count=pick.count))
    taken = _sold_out_pick(catalog, sizer, named)
    if taken is not None and taken.offer is not None:
        gpu_name = taken.gpu.short_name or taken.gpu.name
        notes.append(note("offer_sold_out", gpu=gpu_name, count=taken.count, offer=taken.offer.id))
    if req.task is Task.TRAINING and req.sharding in (Sharding.NONE, Sharding.FSDP):
        notes.append(note("multi_gpu_fsdp"))
    targets = named or _unique(catalog.gpus[o.gpu] for o in catalog.offers) or list(catalog.gpus.values())
    fixes = mitigations(req, spec, catalog, sizer, total, targets, given=given)
    configs = [(c.gpu, c.count) for c in (pick, fast, roomy) if c is not None]
    if target is not None and target.verdict != "does_not_fit":
        configs.append((named[0], req.num_gpus))
    speeds = throughput(req, spec, arch, list({(g.id, n): (g, n) for g, n in configs}.values()), sizer)
    if spec.kind in (ModelKind.SPEECH, ModelKind.TTS):
        speeds = []  # a text decode speed says nothing of audio transcribed or spoken per second
    if speeds:
        notes += _decode_notes(req, arch, configs)
    if named:  # the configurations recommended on other GPUs get their verdict rows too
        shown = {v.gpu for v in rows}
        rows += [
            verdict(c.gpu, c.count, c.needed, sizer.usable(c.gpu), sizer.bands)
            for c in (pick, fast, roomy)
            if c and c.gpu.id not in shown
        ]
    serving = None
    if req.engine is Engine.VLLM and req.task is Task.INFERENCE and arch is not None:
        config = (named[0], req.num_gpus) if named else (pick.gpu, pick.count) if pick else None
        serving = serving_capacity(req, spec, arch, sizer, *config) if config else None
        if serving is not None:
            # a whole percent, without NUMBER(): Fluent's number formatting costs ~0.1 ms per note
            percent = round(serving.gpu_memory_utilization * 100)
            notes.append(note("vllm_budget", percent=percent))
    return Advice(
        rows,
        recommendation,
        alternatives,
        fixes,
        speeds,
        host(req, spec, arch, recommendation, total),
        notes,
        target,
        serving,
    )


def serving_capacity(
    req: Request, spec: ModelSpec, arch: Arch, sizer: Sizer, gpu: GpuSpec, count: int
) -> ServingCapacity:
    """What vLLM would log on `count` × `gpu`: its KV pool (budget less the rest of the sized peak)
    in tokens, and the requests of the requested context it holds (core.formulas.vllm)."""
    assert req.context_length
    parts = sizer.breakdown(**sizer.count_changes(count)) if count != req.num_gpus else sizer.breakdown()
    budget = sizer.usable(gpu)
    # a draft's attention layers are KV-cache layers of the same pool (vLLM v1 registers the
    # drafter's layers with the KV-cache config): its cache is pool, and every token holds both
    kv = parts.get("kv_cache", 0.0) + parts.get("draft_kv_cache", 0.0)
    pool = vllm.kv_pool_bytes(budget, sum(parts.values()), kv)
    # vLLM counts its pool in tokens of every layer (sliding-window layers included); a request
    # takes less where layers keep only their window (the hybrid KV-cache manager)
    assert req.kv_cache_precision
    e = kv_bytes_per_element(req.kv_cache_precision)
    full = model_kv_cache_bytes(spec, req.context_length, 1, e, windows=False)
    windowed = (model_kv_cache_bytes(spec, req.context_length, 1, e) / full if full else 0.0) or 1.0
    per_token = kv / (req.context_length * req.concurrency * windowed)
    tokens = vllm.kv_cache_tokens(pool, per_token)
    concurrency = vllm.max_concurrency(tokens, req.context_length, windowed_share=windowed)
    return ServingCapacity(
        gpu=gpu.id,
        count=count,
        gpu_memory_utilization=vllm.memory_fraction(req.engine, req.gpu_memory_utilization),
        budget_bytes=budget,
        kv_cache_bytes=max(round(pool), 0),
        kv_cache_tokens=tokens,
        context_length=req.context_length,
        max_concurrency=round(concurrency, 2),
    )


def _decode_notes(req: Request, arch: Arch | None, configs: list[tuple[GpuSpec, int]]) -> list[Assumption]:
    """What the decode speeds shown assume (core.advice.speed)."""
    notes = [note("decode_bandwidth_bound", efficiency=DECODE_BANDWIDTH_EFFICIENCY)]
    notes += _multi_gpu_decode_notes(req, [(g, n) for g, n in configs if n > 1])
    if arch is not None and arch.experts > 1:
        notes.append(note("decode_moe_layers", layers=arch.L, us=round(moe_layer_s(req.engine) * 1e6)))
    if arch is not None and eager_launch_s(arch, req.engine):
        launch = eager_launch_s(arch, req.engine)
        ms, speed = round(launch * 1e3), round(1 / launch)
        notes.append(note("decode_eager_launch", layers=arch.L, ms=ms, tokens_per_s=speed))
    return notes


def _multi_gpu_decode_notes(req: Request, configs: list[tuple[GpuSpec, int]]) -> list[Assumption]:
    """How speed scales on the multi-card configurations shown (core.advice.speed)."""
    if not configs:
        return []
    if req.engine is not Engine.VLLM:
        return [note("decode_layer_split")]
    links = {g.interconnect: TENSOR_PARALLEL_DECODE_EFFICIENCY[g.interconnect] for g, _ in configs}
    notes = [
        note("decode_tensor_parallel", interconnect=link, percent=round(eff * 100))
        for link, eff in sorted(links.items())
    ]
    gpu, count = max(configs, key=lambda c: c[1])
    us = round(allreduce_latency_s(gpu, count) * 1e6, 1)
    return [*notes, note("decode_allreduce", count=count, us=us, per_layer=ALLREDUCES_PER_LAYER)]


def _choose(
    req: Request, catalog: Catalog, sizer: Sizer, named: list[GpuSpec], rows: list[Verdict]
) -> tuple[Candidate | None, Candidate | None, Candidate | None]:
    """(the recommendation, the fastest offer, the comfortable offer named second when the
    recommendation is a tight priced one: `ranking.lead`). The recommendation: the best offer of a
    named GPU that fits, else the best of all offers that fit; only when no offer fits, the best
    catalogue configuration (not in the offers: named GPUs first). The fastest: of all offers that fit."""
    policy = catalog.ranking
    offers = offer_candidates(catalog, sizer)
    named_ids = {g.id for g in named}
    pick, roomy = lead([c for c in offers if c.gpu.id in named_ids], policy)
    if pick is None:
        pick, roomy = lead(offers, policy)
    if pick is None:
        fallback = catalogue_candidates(rows, catalog)
        if not fallback and named:
            fallback = catalogue_candidates(verdicts(list(catalog.gpus.values()), sizer), catalog)
        pick = best(fallback, policy)
    return pick, fastest(offers, policy, req.task), roomy


def _sold_out_pick(catalog: Catalog, sizer: Sizer, named: list[GpuSpec]) -> Candidate | None:
    """The sold-out offer that would have been recommended were it free (`_choose` with the taken
    ones counted), or None. Sized only when some offer is sold out."""
    if not any(o.availability == "sold_out" for o in catalog.offers):
        return None
    offers = offer_candidates(catalog, sizer, sold_out=True)
    named_ids = {g.id for g in named}
    pick, _ = lead([c for c in offers if c.gpu.id in named_ids], catalog.ranking)
    if pick is None:
        pick, _ = lead(offers, catalog.ranking)
    if pick is None or pick.offer is None or pick.offer.availability != "sold_out":
        return None
    return pick


def _with_breakdown(rec: Recommendation, sizer: Sizer) -> Recommendation:
    """The recommendation with its own per-card breakdown, where its card count is not the request's
    (an answer that leads with it shows what its figure is made of, not the request's)."""
    if rec.count == sizer.req.num_gpus:
        return rec
    parts = {k: round(v) for k, v in sizer.breakdown(**sizer.count_changes(rec.count)).items()}
    breakdown = {k: v for k, v in parts.items() if v > 0 or k == "overhead"}
    if sizer.extra_bytes:
        breakdown["extra_models"] = sizer.extra_bytes
    return variant(rec, {"breakdown": breakdown})


def _unique(gpus: Iterable[GpuSpec]) -> list[GpuSpec]:
    return list({g.id: g for g in gpus}.values())
