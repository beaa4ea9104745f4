"""From a sized request to advice: verdicts per GPU configuration, the cheapest configuration to
rent, mitigations when it does not fit, decode speed and host sizing.

Every configuration is sized by re-running the component formulas on a variant of the request
(more cards, another precision...), so advice and estimate never disagree.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from pydantic import TypeAdapter

from core.catalog import Catalog
from core.contract import (
    Assumption,
    CpuOffload,
    Engine,
    HostAdvice,
    KvPrecision,
    Method,
    Mitigation,
    MixedPrecision,
    Optimizer,
    Precision,
    Recommendation,
    Request,
    Sharding,
    Task,
    Throughput,
    Verdict,
    VerdictKind,
)
from core.formulas.params import Arch, arch_of
from core.formulas.peak import peak_breakdown
from core.formulas.training import lora_params
from core.formulas.weights import model_weight_bytes
from core.precision import bits_per_weight, kv_bytes_per_element
from core.specs import GpuSpec, ModelKind, ModelSpec, RentalOffer

CARD_COUNTS = (1, 2, 4, 8)
# Below 10% free memory a run is "tight": allocator fragmentation and spikes (longer prompts, a
# larger batch) commonly take that much (PyTorch CUDA memory management notes).
TIGHT_HEADROOM = 0.10
# Decode reads every weight once per step; real kernels reach ~70% of peak bandwidth:
# Llama-2-7B bf16 on an A100-80GB decodes at 1418.93 GB/s of 2039 GB/s (torchao README benchmark).
DECODE_BANDWIDTH_EFFICIENCY = 0.70
HOST_RAM_RECOMMENDED_FACTOR = 2  # RAM ≥ VRAM to load and pin weights; 2× for page cache and data loaders
CHECKPOINT_BYTES_PER_PARAM = 4 + 8  # fp32 weights + AdamW moments in a resumable full checkpoint
MIN_QUANTIZE_STEP_BITS = 2  # offer a format only if it saves ≥ 2 bits per weight (not nf4 → int4)
MIN_CONTEXT = 1024
MIN_SEQ_LEN = 512
MAX_ALTERNATIVES = 2

_VERDICT_LIST = TypeAdapter(list[Verdict])


@dataclass
class Advice:
    verdicts: list[Verdict]
    recommendation: Recommendation | None
    alternatives: list[Recommendation]
    mitigations: list[Mitigation]
    throughput: list[Throughput]
    host: HostAdvice
    assumptions: list[Assumption] = field(default_factory=list)


class Sizer:
    """Per-GPU peak of request variants, memoised by the fields that change."""

    def __init__(self, req: Request, spec: ModelSpec, arch: Arch | None) -> None:
        self.req, self.spec, self.arch = req, spec, arch
        self._cache: dict[tuple[Any, ...], int] = {}
        self._by_count: dict[int, int] = {}

    def total(self, spec: ModelSpec | None = None, arch: Arch | None = None, **changes: Any) -> int:
        spec = spec or self.spec
        key = (spec.id, *sorted(changes.items()))
        if key not in self._cache:
            variant = self.req.model_copy(update=changes) if changes else self.req
            self._cache[key] = round(sum(peak_breakdown(variant, spec, arch or self.arch).values()))
        return self._cache[key]

    def at_count(self, count: int) -> int:
        if count not in self._by_count:
            self._by_count[count] = self.total(**self.count_changes(count))
        return self._by_count[count]

    def splits(self, count: int) -> bool:
        """Whether `count` GPUs can run the request: vLLM's tensor parallelism needs the attention
        heads to divide evenly (vLLM `verify_with_parallel_config`)."""
        return tensor_parallel_divides(self.req, self.arch, count)

    def count_changes(self, count: int) -> dict[str, Any]:
        changes: dict[str, Any] = {"num_gpus": count}
        if self.req.task is Task.TRAINING and count > 1 and self.req.sharding is Sharding.NONE:
            changes["sharding"] = Sharding.FSDP  # replicas (DDP) would not help the fit
        return changes


def tensor_parallel_divides(req: Request, arch: Arch | None, count: int) -> bool:
    """vLLM splits attention heads across tensor-parallel ranks: their number must divide evenly."""
    if req.engine is not Engine.VLLM or req.task is not Task.INFERENCE or arch is None:
        return True
    return arch.a % count == 0


def verdict_kind(needed: int, usable: int) -> VerdictKind:
    if needed > usable:
        return "does_not_fit"
    return "tight" if usable - needed < TIGHT_HEADROOM * usable else "fits"


def verdict_fields(gpu: str, gpu_name: str, usable: int, count: int, needed: int) -> dict[str, Any]:
    """The fields of a `Verdict`: `count` cards of `usable` bytes each, `needed` bytes per card."""
    return {
        "gpu": gpu,
        "gpu_name": gpu_name,
        "count": count,
        "bytes_per_gpu": needed,
        "usable_bytes": usable,
        "headroom": round((usable - needed) / usable, 4),
        "headroom_bytes": usable - needed,
        "verdict": verdict_kind(needed, usable),
    }


def advise(req: Request, spec: ModelSpec, arch: Arch | None, catalog: Catalog, total: int) -> Advice:
    sizer = Sizer(req, spec, arch)
    gpus = [catalog.gpu(g) for g in req.gpus] if req.gpus else list(catalog.gpus.values())
    verdicts = _verdicts(gpus, sizer)
    wanted = {g.id for g in gpus}
    offered = _offer_candidates(catalog, sizer, wanted)
    candidates = offered or _catalogue_candidates(verdicts, catalog)
    recommendation = _cheapest(candidates)
    alternatives = _alternatives(candidates, recommendation, req)
    notes: list[Assumption] = []
    if recommendation is not None and not offered:
        notes.append(
            Assumption(
                code="not_in_offers",
                text=f"no rental offer fits; {recommendation.count} × {recommendation.gpu_name} is a "
                "configuration outside our offers: contact us for it",
                params={"gpu": recommendation.gpu, "count": recommendation.count},
            )
        )
    if req.task is Task.TRAINING and req.sharding is Sharding.NONE:
        notes.append(
            Assumption(
                code="multi_gpu_fsdp",
                text="configurations with several GPUs are sized with "
                "FSDP full sharding (plain data parallel would not reduce memory per GPU)",
            )
        )
    targets = gpus if req.gpus else [catalog.gpus[o.gpu] for o in catalog.offers] or gpus
    mitigations = _mitigations(req, spec, catalog, sizer, total, _unique(targets))
    throughput = _throughput(req, spec, arch, [r for r in [recommendation, *alternatives] if r], catalog)
    if throughput:
        notes.append(
            Assumption(
                code="decode_bandwidth_bound",
                text="decode speed = memory bandwidth × "
                f"{DECODE_BANDWIDTH_EFFICIENCY:.0%} / bytes read per token (weights + KV cache); "
                "several GPUs assumed to split the reads evenly",
                params={"efficiency": DECODE_BANDWIDTH_EFFICIENCY},
            )
        )
    host = _host(req, spec, arch, recommendation, total)
    return Advice(verdicts, recommendation, alternatives, mitigations, throughput, host, notes)


def _unique(gpus: Iterable[GpuSpec]) -> list[GpuSpec]:
    return list({g.id: g for g in gpus}.values())


def _verdicts(gpus: list[GpuSpec], sizer: Sizer) -> list[Verdict]:
    """Each GPU at 1, 2, 4, 8 cards, stopping at the first count that fits. Validated in one call:
    ~80 verdicts per estimate, one pydantic call each would dominate the estimate's time."""
    rows = []
    for gpu in gpus:
        for count in CARD_COUNTS:
            if not sizer.splits(count):
                continue
            row = verdict_fields(gpu.id, gpu.name, gpu.usable_bytes, count, sizer.at_count(count))
            rows.append(row)
            if row["verdict"] == "fits":
                break
    return _VERDICT_LIST.validate_python(rows)


@dataclass(frozen=True)
class _Candidate:
    gpu: GpuSpec
    count: int
    needed: int
    verdict: VerdictKind
    offer: RentalOffer | None


def _offer_candidates(catalog: Catalog, sizer: Sizer, wanted: set[str]) -> list[_Candidate]:
    out = []
    for offer in catalog.offers:
        if offer.gpu not in wanted or not sizer.splits(offer.count):
            continue
        gpu = catalog.gpus[offer.gpu]
        needed = sizer.at_count(offer.count)
        kind = verdict_kind(needed, gpu.usable_bytes)
        if kind != "does_not_fit":
            out.append(_Candidate(gpu, offer.count, needed, kind, offer))
    return out


def _catalogue_candidates(verdicts: list[Verdict], catalog: Catalog) -> list[_Candidate]:
    """No rental offer fits: fall back to catalogue configurations, price on request."""
    return [
        _Candidate(catalog.gpus[v.gpu], v.count, v.bytes_per_gpu, v.verdict, None)
        for v in verdicts
        if v.verdict != "does_not_fit"
    ]


def _cheapest_key(c: _Candidate) -> tuple[Any, ...]:
    price = c.offer.price_per_hour if c.offer else None
    # priced offers first (cheapest), then "on request" ones by the memory they rent
    return (c.verdict != "fits", price is None, price or 0.0, c.count * c.gpu.usable_bytes, c.count)


def _recommend(c: _Candidate, reason: Any) -> Recommendation:
    return Recommendation(
        gpu=c.gpu.id,
        gpu_name=c.gpu.name,
        count=c.count,
        offer_id=c.offer.id if c.offer else None,
        url=c.offer.url if c.offer else None,
        price_per_hour=c.offer.price_per_hour if c.offer else None,
        currency=c.offer.currency if c.offer else None,
        bytes_per_gpu=c.needed,
        verdict=c.verdict,
        reason=reason,
        in_offers=c.offer is not None,
    )


def _cheapest(candidates: list[_Candidate]) -> Recommendation | None:
    return _recommend(min(candidates, key=_cheapest_key), "cheapest") if candidates else None


def _alternatives(
    candidates: list[_Candidate], best: Recommendation | None, req: Request
) -> list[Recommendation]:
    if best is None:
        return []
    fitting = [c for c in candidates if c.verdict == "fits"] or candidates
    fewest: dict[str, _Candidate] = {}  # per GPU model, its smallest configuration that fits
    for c in sorted(fitting, key=lambda c: c.count):
        fewest.setdefault(c.gpu.id, c)
    fitting = list(fewest.values())

    def speed(c: _Candidate) -> float:  # decode is bandwidth-bound; training and diffusion compute-bound
        per_gpu = c.gpu.bandwidth_gb_s if req.task is Task.INFERENCE else (c.gpu.fp16_tflops or 0.0)
        return per_gpu * c.count

    picks: list[Recommendation] = []
    seen = {(best.gpu, best.count)}
    for reason, key in (("fastest", speed), ("most_headroom", lambda c: c.gpu.usable_bytes - c.needed)):
        pick = max(fitting, key=lambda c, k=key: (k(c), -_cheapest_key(c)[3]))  # type: ignore[misc]
        if (pick.gpu.id, pick.count) not in seen and len(picks) < MAX_ALTERNATIVES:
            seen.add((pick.gpu.id, pick.count))
            picks.append(_recommend(pick, reason))
    return picks


# --- mitigations -----------------------------------------------------------------------------------


def _mitigations(
    req: Request, spec: ModelSpec, catalog: Catalog, sizer: Sizer, total: int, targets: list[GpuSpec]
) -> list[Mitigation]:
    """Cheapest first as in practice; each sized in full and checked against the target GPUs."""
    count = req.num_gpus
    out: list[Mitigation] = []
    diffusion = spec.kind in (ModelKind.IMAGE, ModelKind.VIDEO)
    splits_model = not diffusion  # diffusion pipelines run on one GPU: more cards do not help

    def smallest_fitting(needed: int) -> GpuSpec | None:
        ok = [g for g in targets if needed <= g.usable_bytes]
        return min(ok, key=lambda g: g.usable_bytes) if ok else None

    def fits_on(needed: int, n: int) -> str | None:
        gpu = smallest_fitting(needed)
        return f"{n}x {gpu.id}" if gpu else None

    def add(action: str, changes: dict[str, Any], n: int = count, **params: str | int | float) -> None:
        """Size the variant; if it does not fit on `n` cards, find the fewest cards (up to 8) on
        which it would: `fits` stays about the requested count, `fits_on`/`fits_count` say where."""
        variant_total = sizer.total(**changes)
        if variant_total >= total and action != "more_gpus":
            return
        gpu, fit_n = smallest_fitting(variant_total), n
        if gpu is None and splits_model and action != "more_gpus":
            for m in CARD_COUNTS:
                if m > n and sizer.splits(m):
                    gpu = smallest_fitting(sizer.total(**{**sizer.count_changes(m), **changes}))
                    if gpu is not None:
                        fit_n = m
                        break
        out.append(
            Mitigation(
                action=action,
                saves_bytes=total - variant_total,
                total_bytes=variant_total,
                fits=gpu is not None and fit_n == n,
                fits_on=f"{fit_n}x {gpu.id}" if gpu else None,
                fits_gpu=gpu.id if gpu else None,
                fits_gpu_name=gpu.name if gpu else None,
                fits_count=fit_n if gpu else None,
                params=params,
            )
        )

    def largest_fitting(values: list[int], make: Callable[[int], dict[str, Any]]) -> int | None:
        """The largest value (e.g. context length) whose variant fits a target; else the smallest tried."""
        for v in values:
            if fits_on(sizer.total(**make(v)), count):
                return v
        return values[-1] if values else None

    assert req.precision
    bits = bits_per_weight(req.precision)
    if req.task is not Task.TRAINING:
        for action, precision in (("quantize_int8", _int8_for(req)), ("quantize_int4", _int4_for(req))):
            if bits - bits_per_weight(precision) >= MIN_QUANTIZE_STEP_BITS:
                add(action, dict(precision=precision), precision=str(precision))
    if req.task is Task.INFERENCE and not diffusion:
        assert req.kv_cache_precision and req.context_length
        if kv_bytes_per_element(req.kv_cache_precision) > 1:
            add("kv_cache_fp8", dict(kv_cache_precision=KvPrecision.FP8), kv_cache_precision="fp8")
        if req.engine is Engine.TRANSFORMERS and req.cpu_offload is CpuOffload.NONE:
            # transformers' generate prefills every prompt at once; vLLM chunks the prefill
            add("use_vllm", dict(engine=Engine.VLLM), engine="vllm")
        contexts = _halvings(req.context_length, MIN_CONTEXT)
        best = largest_fitting(contexts, lambda v: {"context_length": v})
        if best:
            add("shorten_context", dict(context_length=best), context_length=best)
        if req.concurrency > 1:
            best = largest_fitting(_halvings(req.concurrency, 1), lambda v: {"concurrency": v})
            if best:
                add("reduce_concurrency", dict(concurrency=best), concurrency=best)
    if req.task is Task.TRAINING:
        _training_mitigations(req, spec, add, largest_fitting)
    if diffusion and req.task is not Task.TRAINING:
        if not req.vae_tiling:
            add("vae_tiling", dict(vae_tiling=True), vae_tiling=1)
        if req.images > 1 and not req.vae_slicing:
            add("vae_slicing", dict(vae_slicing=True), vae_slicing=1)
        if req.images > 1:
            add("fewer_images", dict(images=1), images=1)
        if req.frames and req.frames > 1:
            frames = max(1, req.frames // 2)
            add("fewer_frames", dict(frames=frames), frames=frames)
        if req.resolution and min(req.resolution) >= 512:
            w, h = req.resolution
            add("lower_resolution", {"resolution": (w // 2, h // 2)}, width=w // 2, height=h // 2)
    smaller = _smaller_model(spec, catalog)
    if smaller is not None:
        add(
            "smaller_model",
            dict(spec=smaller, arch=arch_of(smaller), model=smaller.id),
            model=smaller.id,
        )
    if not diffusion:
        for n in CARD_COUNTS:
            if n > count and sizer.splits(n) and fits_on(sizer.at_count(n), n):
                add(
                    "more_gpus",
                    sizer.count_changes(n),
                    n=n,
                    num_gpus=n,
                    **_str_values(sizer.count_changes(n)),
                )
                break
    _offload_mitigations(req, add)
    return out


def _training_mitigations(
    req: Request,
    spec: ModelSpec,
    add: Callable[..., None],
    largest_fitting: Callable[..., int | None],
) -> None:
    if req.optimizer in (Optimizer.ADAMW, Optimizer.PAGED_ADAMW):
        add("optimizer_8bit", dict(optimizer=Optimizer.ADAMW_8BIT), optimizer="adamw_8bit")
    if req.batch_size > 1:
        add("smaller_batch", dict(batch_size=1), batch_size=1)
    if spec.kind not in (ModelKind.IMAGE, ModelKind.VIDEO) and req.seq_len:
        best = largest_fitting(_halvings(req.seq_len, MIN_SEQ_LEN), lambda v: {"seq_len": v})
        if best:
            add("shorter_sequence", dict(seq_len=best), seq_len=best)
    lora: dict[str, Any] = {
        "method": Method.LORA,
        "mixed_precision": MixedPrecision.NONE,
        "precision": Precision.BF16 if req.precision is Precision.FP32 else req.precision,
    }
    if req.method is Method.FULL:
        add("use_lora", lora, method="lora")
    if req.method is not Method.QLORA:
        add(
            "use_qlora",
            dict(method=Method.QLORA, precision=Precision.NF4, mixed_precision=MixedPrecision.NONE),
            method="qlora",
        )
    if not req.gradient_checkpointing:
        add("gradient_checkpointing", dict(gradient_checkpointing=True), gradient_checkpointing=1)
    if req.num_gpus > 1 and req.sharding is not Sharding.ZERO3 and req.sharding is not Sharding.FSDP:
        add("shard", dict(sharding=Sharding.ZERO3), sharding="zero3")


def _offload_mitigations(req: Request, add: Callable[..., None]) -> None:
    """Last resort, for experiments: several times slower. `model` then `sequential`, as the request's
    `cpu_offload` field means them (for language models `model` already streams every layer)."""
    modes = [CpuOffload.MODEL, CpuOffload.SEQUENTIAL]
    if req.task is Task.INFERENCE:
        modes = [CpuOffload.MODEL]
    elif req.task is Task.TRAINING and req.method is not Method.FULL:
        modes = [CpuOffload.SEQUENTIAL]  # LoRA has next to no optimizer state to offload
    for mode in modes:
        if req.cpu_offload is CpuOffload.NONE or (
            mode is CpuOffload.SEQUENTIAL and req.cpu_offload is CpuOffload.MODEL
        ):
            add("cpu_offload", dict(cpu_offload=mode), cpu_offload=str(mode), experiments_only=1)


def _halvings(value: int, floor: int) -> list[int]:
    out = []
    v = value // 2
    while v >= floor:
        out.append(v)
        v //= 2
    return out


def _int8_for(req: Request) -> Precision:
    return Precision.Q8_0 if req.engine is Engine.LLAMA_CPP else Precision.INT8


def _int4_for(req: Request) -> Precision:
    if req.engine is Engine.LLAMA_CPP:
        return Precision.Q4_K_M
    if req.engine is Engine.VLLM:
        return Precision.AWQ_INT4
    return Precision.NF4


def _smaller_model(spec: ModelSpec, catalog: Catalog) -> ModelSpec | None:
    same = [
        m
        for m in catalog.models.values()
        if m.family == spec.family and m.kind is spec.kind and m.params_b < spec.params_b * 0.8
    ]
    # the same generation first ("llama-3.1-70b" → "llama-3.1-8b", not "llama-2-13b"), then the largest
    line = _model_line(spec.id)
    return max(same, key=lambda m: (_common_prefix(_model_line(m.id), line), m.params_b)) if same else None


_SIZE_SUFFIX = re.compile(r"-\d+(?:\.\d+)?(?:x\d+(?:\.\d+)?)?[bm](?:-.*)?$")


def _model_line(model_id: str) -> str:
    """A catalogue id without its size: "llama-3.1-70b" → "llama-3.1", "qwen3-30b-a3b" → "qwen3"."""
    return _SIZE_SUFFIX.sub("", model_id)


def _common_prefix(a: str, b: str) -> int:
    n = 0
    for x, y in zip(a, b, strict=False):
        if x != y:
            break
        n += 1
    return n


def _str_values(changes: dict[str, Any]) -> dict[str, str | int | float]:
    return {k: v if isinstance(v, int | float) else str(v) for k, v in changes.items() if k != "num_gpus"}


# --- speed and host -----------------------------------------------------------------------------


def _throughput(
    req: Request, spec: ModelSpec, arch: Arch | None, picks: list[Recommendation], catalog: Catalog
) -> list[Throughput]:
    if req.task is not Task.INFERENCE or arch is None:
        return []
    assert req.precision and req.context_length and req.kv_cache_precision
    weights = model_weight_bytes(arch.params, req.precision, arch)
    if spec.active_params_b:
        weights *= spec.active_params_b / spec.params_b
    one = req.model_copy(update={"num_gpus": 1})
    kv = peak_breakdown(one, spec, arch).get("kv_cache", 0.0)
    step_bytes = weights + kv
    out = []
    for pick in picks:
        gpu = catalog.gpus[pick.gpu]
        step_s = step_bytes / (gpu.bandwidth_gb_s * 1e9 * DECODE_BANDWIDTH_EFFICIENCY * pick.count)
        out.append(
            Throughput(
                gpu=gpu.id,
                count=pick.count,
                tokens_per_s=round(1 / step_s, 1),
                aggregate_tokens_per_s=round(req.concurrency / step_s, 1),
            )
        )
    return out


def _host(
    req: Request, spec: ModelSpec, arch: Arch | None, pick: Recommendation | None, total: int
) -> HostAdvice:
    count = pick.count if pick else req.num_gpus
    vram = (pick.bytes_per_gpu if pick else total) * count
    assert req.precision
    if arch is not None:
        disk = model_weight_bytes(arch.params, req.precision, arch)
    else:
        disk = sum(c.params_b * 1e9 * bits_per_weight(c.precision) / 8 for c in spec.components)
    if req.task is Task.TRAINING:
        trainable = (
            spec.params_b * 1e9
            if req.method is Method.FULL or arch is None
            else lora_params(arch, req.lora_rank, req.lora_targets)
        )
        disk += trainable * CHECKPOINT_BYTES_PER_PARAM
    return HostAdvice(
        ram_min_bytes=round(vram),
        ram_recommended_bytes=round(vram * HOST_RAM_RECOMMENDED_FACTOR),
        disk_bytes=round(disk),
    )
