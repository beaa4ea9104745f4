"""llama.cpp with part of the model in host RAM (issue 22): the split that fits, the RAM, the speed.

Guarantees:
- the GPU need of an offloaded request is the estimator's own peak (`peak_breakdown` with `gpu_layers`
  / `n_cpu_moe`, core.formulas.offload), so it is never above the full-GPU answer;
- `offload: layers` picks the largest `-ngl` whose need fits the target's tight band and -ngl + 1 does
  not (or all layers); `offload: experts` the fewest `--n-cpu-moe` blocks that fit (all of them and
  then fewer layers when even `--cpu-moe` does not);
- decode speed: the bytes a step reads from the GPU at the card's bandwidth (as core.advice.speed) plus
  the bytes it reads from RAM at the server's RAM bandwidth × a fitted efficiency (core/data/offload.toml),
  plus llama.cpp's fixed cost per MoE layer; on a mixture of experts only the routed experts the router
  picks are read, from wherever they are.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import lru_cache
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from core.advice.decode import DECODE_BANDWIDTH_EFFICIENCY, decode_weight_bytes, moe_layer_s
from core.advice.sizing import variant
from core.catalogue.catalog import Catalog
from core.catalogue.gpus import GpuSpec
from core.catalogue.load import DATA_DIR, read_toml
from core.catalogue.models import ModelKind, ModelSpec
from core.contract import (
    Assumption,
    CpuOffload,
    Engine,
    KvPrecision,
    Offload,
    OffloadMode,
    Precision,
    Request,
    SolveFor,
    Task,
    Throughput,
)
from core.errors import CatalogError, EstimateError
from core.formulas import offload as fo
from core.formulas.kv_cache import model_kv_cache_bytes
from core.formulas.params import Arch
from core.formulas.peak import peak_breakdown
from core.formulas.precision import EXPERTS_ONLY_ON_MOE, is_gguf, kv_bytes_per_element
from core.language.words import note

OFFLOAD_FILE = DATA_DIR / "offload.toml"
SPEED_SOURCE = "llama.cpp runs: AlexsJones/llmfit#755, #774, #775, #778; ikawrakow/ik_llama.cpp#841"
# The GGUF file a weight format asks for when llama.cpp is to run it (what users download for that
# format: Q4_K_M for any 4-bit, Q8_0 for 8-bit); MXFP4 (gpt-oss) and GGUF formats stay as they are.
GGUF_FOR: dict[Precision, Precision] = {
    Precision.INT4: Precision.Q4_K_M,
    Precision.NF4: Precision.Q4_K_M,
    Precision.GPTQ_INT4: Precision.Q4_K_M,
    Precision.AWQ_INT4: Precision.Q4_K_M,
    Precision.INT8: Precision.Q8_0,
    Precision.FP8: Precision.Q8_0,
}
DEFAULT_GGUF = Precision.Q4_K_M  # the file most users run (Unsloth's and bartowski's default pick)
NOT_LLAMA = (ModelKind.IMAGE, ModelKind.VIDEO, ModelKind.ENCODER)
RamSource = Literal["request", "offer", "assumed"]


class OffloadFacts(BaseModel):
    model_config = ConfigDict(extra="forbid", allow_inf_nan=False)

    assumed_ram_bandwidth_gb_s: float = Field(gt=0, le=10_000)
    cpu_decode_bandwidth_efficiency: float = Field(gt=0, le=1)
    prefill_ubatch: int = Field(gt=0, le=65_536)
    pcie_bandwidth_gb_s: float = Field(gt=0, le=10_000)
    prefill_mfu: float = Field(gt=0, le=1)


@lru_cache(maxsize=4)
def facts(path: Path = OFFLOAD_FILE) -> OffloadFacts:
    """The offload facts file, validated; a bad value is refused naming its key."""
    try:
        return OffloadFacts.model_validate(read_toml(path))
    except ValidationError as e:
        first = e.errors()[0]
        where = ".".join(str(p) for p in first["loc"])
        raise CatalogError(f"{path}: {where}: {first['msg']}", field=where) from e


def wants_offload(req: Request) -> bool:
    return req.offload is not None or req.gpu_layers is not None or req.n_cpu_moe is not None


def offload_request(req: Request, spec: ModelSpec) -> tuple[Request, list[Assumption]]:
    """An offload is llama.cpp's: the engine becomes llama.cpp and the format a GGUF file (MXFP4 stays,
    as gpt-oss's GGUF ships it). Another engine named is refused."""
    if not wants_offload(req) and req.solve_for is not SolveFor.GPU_LAYERS:
        return req, []
    if req.offload is OffloadMode.AUTO and (req.task is not Task.INFERENCE or spec.kind in NOT_LLAMA):
        # "offload to RAM" of a training run or a diffusion pipeline: their own CPU offload
        keep = req.cpu_offload not in (None, CpuOffload.NONE)
        return req.model_copy(
            update={"offload": None, "cpu_offload": req.cpu_offload if keep else CpuOffload.MODEL}
        ), []
    if req.engine not in (None, Engine.LLAMA_CPP):
        raise EstimateError("offload to RAM (-ngl, --n-cpu-moe) is llama.cpp's: engine llama.cpp", "engine")
    if req.task is not Task.INFERENCE:
        raise EstimateError("offload to RAM is for inference", "task")
    update: dict[str, Any] = {"engine": Engine.LLAMA_CPP}
    notes: list[Assumption] = []
    precision = req.precision or spec.native_precision
    if precision is None or not (is_gguf(precision) or precision in EXPERTS_ONLY_ON_MOE):
        gguf = GGUF_FOR.get(precision, DEFAULT_GGUF) if precision else DEFAULT_GGUF
        notes.append(note("offload_gguf", precision=str(gguf)))
        precision = gguf
    update["precision"] = precision
    moe = bool(spec.experts and spec.experts > 1)
    if req.offload is OffloadMode.AUTO:
        update["offload"] = OffloadMode.EXPERTS if moe else OffloadMode.LAYERS
    elif req.offload is OffloadMode.EXPERTS and not moe:
        update["offload"] = OffloadMode.LAYERS
        notes.append(note("offload_dense_layers"))
    return variant(req, update), notes


def target(req: Request, catalog: Catalog) -> tuple[GpuSpec | None, int]:
    """The cards the offload is for: gpus[0] × num_gpus, else the operator's first-choice offer."""
    if req.gpus and req.gpus[0] in catalog.gpus:
        return catalog.gpus[req.gpus[0]], req.num_gpus
    if not catalog.offers:
        return None, req.num_gpus
    first = min(catalog.offers, key=lambda o: (o.priority, o.count))
    return catalog.gpus[first.gpu], req.num_gpus


def need(req: Request, spec: ModelSpec, arch: Arch) -> int:
    """Per-card need as `estimate` sums it."""
    return sum(round(v) for k, v in peak_breakdown(req, spec, arch).items() if v > 0 or k == "overhead")


def _largest(size: Callable[[int], int], lo: int, hi: int, limit: int) -> int | None:
    """The largest v in [lo, hi] with size(v) <= limit, size non-decreasing in v; None if even size(lo)
    is above. The answer of a bisection, in fewer sizings: the need of a split is near linear in it, so
    the first probes are where the line through both ends crosses `limit` and its neighbour."""
    top = size(hi)
    if top <= limit:
        return hi
    bottom = size(lo)
    if bottom > limit:
        return None
    good, bad = lo, hi  # size(good) <= limit < size(bad), kept so by every probe
    probe = lo + (limit - bottom) * (hi - lo) // (top - bottom)
    for _ in range(2):
        if not good < probe < bad:
            break
        if size(probe) <= limit:
            good, probe = probe, probe + 1
        else:
            bad, probe = probe, probe - 1
    while bad - good > 1:
        mid = (good + bad) // 2
        good, bad = (mid, bad) if size(mid) <= limit else (good, mid)
    return good


def pick(req: Request, spec: ModelSpec, arch: Arch, limit: int) -> Request:
    """Fill `gpu_layers` (mode layers) or `n_cpu_moe` (mode experts) so the need fits `limit` per card."""
    return _pick(req, spec, arch, limit)[0]


def _pick(req: Request, spec: ModelSpec, arch: Arch, limit: int) -> tuple[Request, int | None]:
    """`pick`, and the need of the request it returns (None where it sized none: nothing to fill)."""
    needs: dict[tuple[int | None, int | None], int] = {}  # by (gpu_layers, n_cpu_moe): all else is `req`'s

    def sized(r: Request) -> int:
        key = (r.gpu_layers, r.n_cpu_moe)
        if key not in needs:
            needs[key] = need(r, spec, arch)
        return needs[key]

    if req.offload is OffloadMode.EXPERTS and req.n_cpu_moe is None:
        base = req  # fewer blocks in RAM fit the worse: search on L − n

        kept = _largest(lambda n: sized(variant(base, {"n_cpu_moe": arch.L - n})), 0, arch.L, limit)
        if kept is not None:
            picked = variant(req, {"n_cpu_moe": arch.L - kept})
            return picked, needs[(picked.gpu_layers, picked.n_cpu_moe)]
        req = variant(req, {"n_cpu_moe": arch.L})
    if req.gpu_layers is None and req.offload is not None:
        top, layered = fo.total_layers(arch), req
        value = _largest(lambda k: sized(variant(layered, {"gpu_layers": k})), 0, top, limit)
        picked = variant(req, {"gpu_layers": top if value == top else (value or 0)})
        return picked, needs[(picked.gpu_layers, picked.n_cpu_moe)]
    return req, None


def prepare(req: Request, spec: ModelSpec, arch: Arch | None, catalog: Catalog) -> Request:
    """The request with its offload filled in for the target cards (a no-op without `offload`)."""
    if arch is None or req.offload is None:
        return req
    gpu, _ = target(req, catalog)
    if gpu is None:
        raise EstimateError("name the GPU (gpus) to offload to RAM for", "gpus")
    limit = round(gpu.usable_bytes * (1 - catalog.ranking.tight_headroom))
    return pick(req, spec, arch, limit)


def _ram_side(
    req: Request, gpu: GpuSpec | None, count: int, catalog: Catalog
) -> tuple[float, RamSource, float | None]:
    """The server's RAM bandwidth and size: the request's, the offer's, else the assumed server's."""
    offer = next((o for o in catalog.offers if gpu and o.gpu == gpu.id and o.count == count), None)
    ram_gb = offer.ram_gb if offer else None
    if req.ram_bandwidth_gb_s:
        return req.ram_bandwidth_gb_s, "request", ram_gb
    if offer is not None and offer.ram_bandwidth_gb_s:
        return offer.ram_bandwidth_gb_s, "offer", ram_gb
    return facts().assumed_ram_bandwidth_gb_s, "assumed", ram_gb


def step_bytes(req: Request, spec: ModelSpec, arch: Arch) -> tuple[float, float, float]:
    """Bytes one decode step reads from the GPU and from RAM, and the KV cache in RAM."""

    assert req.precision and req.context_length and req.kv_cache_precision
    s = fo.split(arch, req.precision, req.gpu_layers, req.n_cpu_moe)
    kv = model_kv_cache_bytes(spec, req.context_length, 1, kv_bytes_per_element(req.kv_cache_precision))
    head = fo.head_bytes(arch, req.precision)
    active = decode_weight_bytes(spec, arch, req)  # read per token: the output layer and the blocks
    per_block = max(active - head, 0.0) / arch.L + kv / arch.L
    routed = (
        fo.routed_expert_bytes_per_block(arch, req.precision) * arch.active_experts / max(arch.experts, 1)
    )
    on_gpu = s.gpu_blocks * per_block + (head if s.output_on_gpu else 0.0) - s.cpu_moe_blocks * routed
    on_gpu = max(on_gpu, 0.0)
    kv_ram = kv * (1 - fo.kv_gpu_share(arch, req.gpu_layers))
    return on_gpu, max(active + kv - on_gpu, 0.0), kv_ram


def decode_tokens_per_s(
    gpu_bytes: float, ram_bytes: float, gpu: GpuSpec, ram_gb_s: float, arch: Arch
) -> float:

    step = gpu_bytes / (gpu.bandwidth_gb_s * 1e9 * DECODE_BANDWIDTH_EFFICIENCY)
    step += ram_bytes / (ram_gb_s * 1e9 * facts().cpu_decode_bandwidth_efficiency)
    if arch.experts > 1:
        step += arch.L * moe_layer_s(Engine.LLAMA_CPP)
    return 1 / step


def prefill_tokens_per_s(req: Request, spec: ModelSpec, arch: Arch, gpu: GpuSpec) -> float | None:
    """A micro-batch of `prefill_ubatch` tokens: the RAM-resident weights (the input embedding aside:
    a row lookup on the CPU) cross PCIe once, and the card computes 2 × active parameters per token."""
    assert req.precision
    f = facts()
    s = fo.split(arch, req.precision, req.gpu_layers, req.n_cpu_moe)
    crossing = max(s.ram_bytes - fo.head_bytes(arch, req.precision), 0.0)
    seconds = crossing / (f.pcie_bandwidth_gb_s * 1e9)
    if gpu.fp16_tflops:
        active = (spec.active_params_b or spec.params_b) * 1e9
        seconds += 2 * active * f.prefill_ubatch / (gpu.fp16_tflops * 1e12 * f.prefill_mfu)
    return f.prefill_ubatch / seconds if seconds > 0 else None


def answer(req: Request, spec: ModelSpec, arch: Arch | None, catalog: Catalog, total: int) -> Offload | None:
    """`Result.offload` for a request that offloads (gpu_layers, n_cpu_moe or offload set)."""
    if arch is None or not wants_offload(req) or req.task is not Task.INFERENCE:
        return None
    gpu, count = target(req, catalog)
    if gpu is None:
        return None
    assert req.precision
    full = need(variant(req, {"gpu_layers": None, "n_cpu_moe": None}), spec, arch)
    s = fo.split(arch, req.precision, req.gpu_layers, req.n_cpu_moe)
    on_gpu, on_ram, kv_ram = step_bytes(req, spec, arch)
    ram_gb_s, source, ram_gb = _ram_side(req, gpu, count, catalog)
    full_gpu, _, _ = step_bytes(variant(req, {"gpu_layers": None, "n_cpu_moe": None}), spec, arch)
    limit = round(gpu.usable_bytes * (1 - catalog.ranking.tight_headroom))
    mode = OffloadMode.EXPERTS if req.n_cpu_moe else (req.offload or OffloadMode.LAYERS)
    return Offload(
        mode=mode,
        gpu=gpu.id,
        gpu_name=gpu.short_name or gpu.name,
        count=count,
        gpu_layers=s.gpu_blocks + int(s.output_on_gpu),
        total_layers=s.total_layers,
        n_cpu_moe=s.cpu_moe_blocks,
        moe_layers=arch.L if arch.experts > 1 else 0,
        fits=total <= limit,
        bytes_per_gpu=total,
        full_gpu_bytes_per_gpu=full,
        usable_bytes=gpu.usable_bytes,
        ram_bytes=round(s.ram_bytes + kv_ram),
        ram_gb=ram_gb,
        ram_bandwidth_gb_s=ram_gb_s,
        ram_bandwidth_source=source,
        gpu_bytes_per_token=round(on_gpu),
        ram_bytes_per_token=round(on_ram),
        tokens_per_s=round(decode_tokens_per_s(on_gpu, on_ram, gpu, ram_gb_s, arch), 1),
        full_gpu_tokens_per_s=round(decode_tokens_per_s(full_gpu, 0.0, gpu, ram_gb_s, arch), 1),
        prefill_tokens_per_s=_round(prefill_tokens_per_s(req, spec, arch, gpu)),
        speed_source=SPEED_SOURCE,
    )


def _round(x: float | None) -> float | None:
    return round(x, 1) if x is not None else None


def notes(off: Offload | None) -> list[Assumption]:
    """What the offload answer assumed: the RAM bandwidth when no offer states it."""
    if off is None or off.ram_bandwidth_source != "assumed":
        return []
    return [note("offload_ram_bandwidth_assumed", ram_bandwidth_gb_s=off.ram_bandwidth_gb_s)]


def mitigation(
    req: Request, spec: ModelSpec, arch: Arch | None, gpu: GpuSpec, usable: int
) -> tuple[str, dict[str, Any], float] | None:
    """The llama.cpp offload that makes an inference request fit `usable` bytes per card of `gpu`, as a
    mitigation: ("offload_experts" | "offload_layers", the request changes, its decode tokens/s at the
    assumed RAM bandwidth); None when the request
    already offloads, needs none, or nothing fits even with every layer in RAM."""
    if arch is None or req.task is not Task.INFERENCE or wants_offload(req) or req.concurrency > 1:
        return None
    mode = OffloadMode.EXPERTS if arch.experts > 1 else OffloadMode.LAYERS
    try:
        base, _ = offload_request(variant(req, {"offload": mode, "engine": None}), spec)
    except EstimateError:
        return None
    base = variant(base, {"gpu_memory_utilization": None, "kv_cache_precision": KvPrecision.FP16})
    picked, needed = _pick(base, spec, arch, usable)
    s = fo.split(arch, picked.precision or DEFAULT_GGUF, picked.gpu_layers, picked.n_cpu_moe)
    if s.gpu_blocks == 0 or (need(picked, spec, arch) if needed is None else needed) > usable:
        return None
    if s.cpu_moe_blocks == 0 and s.gpu_blocks == arch.L and s.output_on_gpu:
        return None  # no offload needed: another mitigation (the GGUF format) says it
    changes = {
        "engine": Engine.LLAMA_CPP,
        "precision": picked.precision,
        "gpu_memory_utilization": None,
        "kv_cache_precision": KvPrecision.FP16,
        "gpu_layers": picked.gpu_layers,
        "n_cpu_moe": picked.n_cpu_moe,
    }
    action = "offload_experts" if picked.n_cpu_moe else "offload_layers"
    on_gpu, on_ram, _ = step_bytes(picked, spec, arch)
    ram = req.ram_bandwidth_gb_s or facts().assumed_ram_bandwidth_gb_s
    return action, changes, decode_tokens_per_s(on_gpu, on_ram, gpu, ram, arch)


def offloaded_throughput(
    req: Request, spec: ModelSpec, arch: Arch, configs: list[tuple[GpuSpec, int]]
) -> list[Throughput]:
    """Decode speed of an offloaded request on each configuration (llama.cpp passes a token through
    the cards in turn: one card's bandwidth), RAM at the request's bandwidth or the assumed one."""
    on_gpu, on_ram, _ = step_bytes(req, spec, arch)
    ram = req.ram_bandwidth_gb_s or facts().assumed_ram_bandwidth_gb_s
    out = []
    for gpu, count in configs:
        tps = decode_tokens_per_s(on_gpu, on_ram, gpu, ram, arch)
        out.append(
            Throughput(
                gpu=gpu.id,
                count=count,
                tokens_per_s=round(tps, 1),
                aggregate_tokens_per_s=round(tps * req.concurrency, 1),
            )
        )
    return out
