"""Time to first token, and how many servers a load of requests a second takes.

Prefill is compute-bound: its FLOPs (`prefill_flops`) divided by the card's dense tensor peak
(`gpus.toml`) times the engine's prefill efficiency (`core/data/prefill.toml`, each row a published
measurement); vLLM splits every layer over its cards (tensor parallel), transformers and llama.cpp
pass a prompt through their cards one after another (no faster than one). The first token is the
prefill plus one decode step. Under load (`requests_per_second`) each server prefills one prompt at a
time, an M/D/1 queue (`mdl_wait`); servers are added (`servers_for`) until the mean first token (wait
+ prefill + a step) meets `ttft_target_s`, no server is busier than `MAX_UTILIZATION`, and the
requests in flight (Little's law: arrivals x time in the system at the decode speed of one user) fit
the KV cache of a server.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from core.advice.sizing import variant
from core.catalogue.catalog import Catalog
from core.catalogue.gpus import GpuSpec
from core.catalogue.load import DATA_DIR, read_toml
from core.catalogue.models import ModelSpec
from core.contract import Engine, Latency, Precision, Result, Task, Throughput
from core.errors import CatalogError
from core.formulas.params import Arch, linear_params
from core.formulas.precision import is_quantized

PREFILL_FILE = DATA_DIR / "prefill.toml"
# Without a target, servers are added until none is busier than this: the M/D/1 wait is then twice
# the prefill (0.8 / (2 x 0.2)); it doubles again by 0.89 and has no bound at 1.
MAX_UTILIZATION = 0.8
MAX_SERVERS = 4096  # the search's bound: past any load a rental answer is for
# tokens generated per request when not given (as core.inverse.cost prices serving)
DEFAULT_OUTPUT_TOKENS = 500
# prompt tokens per request under a load when not given (core.inverse.cost's too)
DEFAULT_PROMPT_TOKENS = 1000
# Formats whose prefill computes in fp8 on cards with fp8 tensor cores (vLLM's W8A8 FP8 path).
FP8_COMPUTE = frozenset({Precision.FP8})


class _Row(BaseModel):
    model_config = ConfigDict(extra="forbid")

    id: str = Field(pattern=r"^[a-z0-9][a-z0-9._-]*$")
    engines: list[str] = Field(min_length=1)
    weights: Literal["16bit", "quantized", "*"]
    mfu: float = Field(gt=0, le=1)
    source: str = Field(min_length=20)


class _File(BaseModel):
    model_config = ConfigDict(extra="forbid")

    efficiency: list[_Row] = Field(min_length=1)


def load_efficiency(path: Path | None = None) -> list[_Row]:
    """The prefill efficiency rows; a CatalogError naming the row when one is wrong."""
    file = PREFILL_FILE if path is None else path
    try:
        data = _File.model_validate(read_toml(file))
    except ValidationError as e:
        first = e.errors()[0]
        where = ".".join(str(p) for p in first["loc"])
        raise CatalogError(f"{file}: {where}: {first['msg']}", field=where) from e
    known = {str(e) for e in Engine} | {"*"}
    for index, row in enumerate(data.efficiency):
        unknown = [e for e in row.engines if e not in known]
        if unknown:
            raise CatalogError(f"{file}: efficiency.{index}: unknown engine {unknown[0]!r}", field="engines")
    if not any("*" in r.engines and r.weights == "*" for r in data.efficiency):
        raise CatalogError(f"{file}: no row for any engine and weights ('*', '*')", field="efficiency")
    return data.efficiency


@lru_cache(maxsize=1)
def efficiency_rows() -> tuple[_Row, ...]:
    return tuple(load_efficiency())


@lru_cache(maxsize=256)
def efficiency(engine: Engine | None, precision: Precision) -> _Row:
    """The row for `engine` and the weights' kind: the engine's own first, else any engine's."""
    kind = "quantized" if is_quantized(precision) and precision not in FP8_COMPUTE else "16bit"
    name = engine.value if engine else "*"
    for engines in (name, "*"):
        for row in efficiency_rows():
            if engines in row.engines and row.weights in (kind, "*"):
                return row
    raise CatalogError("prefill.toml: no row applies", field="efficiency")  # load_efficiency forbids it


def prefill_params(spec: ModelSpec, arch: Arch) -> float:
    """Parameters every prompt token goes through: the decoder blocks, only the routed experts a token
    picks on a mixture of experts (`active_params_b` less its LM head and embedding)."""
    body = linear_params(arch)
    if arch.experts > 1 and spec.active_params_b:
        return min(body, max(spec.active_params_b * 1e9 - arch.V * arch.h, 0.0))
    return body


def prefill_flops(spec: ModelSpec, arch: Arch, tokens: int) -> float:
    """FLOPs of one prompt's prefill: 2 x active decoder parameters x tokens (every prompt token
    through every weight at once), causal attention 2 x L x T^2 x (heads x head_dim) (QK^T and AV,
    half of the square each: FlashAttention's count), and the LM head for the last token only."""
    linear = 2 * prefill_params(spec, arch) * tokens
    attention = 2 * arch.L * tokens * tokens * arch.q_dim
    return linear + attention + 2 * arch.V * arch.h


def peak_flops(gpu: GpuSpec, precision: Precision, engine: Engine | None) -> float | None:
    """A card's dense tensor peak for the prefill's precision: fp8 where vLLM computes in it on a
    card with fp8 tensor cores, else fp16/bf16; None when the catalogue has no figure."""
    if precision in FP8_COMPUTE and engine is Engine.VLLM and gpu.fp8 and gpu.fp8_tflops:
        return gpu.fp8_tflops * 1e12
    return gpu.fp16_tflops * 1e12 if gpu.fp16_tflops else None


@dataclass(frozen=True)
class Prefill:
    flops: float
    peak: float  # per card
    mfu: float
    source: str
    seconds: float


def prefill(
    spec: ModelSpec,
    arch: Arch,
    gpu: GpuSpec,
    count: int,
    engine: Engine | None,
    precision: Precision,
    tokens: int,
) -> Prefill | None:
    """One prompt's prefill on `count` cards of `gpu`; None without the card's compute figure."""
    peak = peak_flops(gpu, precision, engine)
    if peak is None:
        return None
    row = efficiency(engine, precision)
    cards = count if engine is Engine.VLLM else 1  # layer split: one card works at a time
    flops = prefill_flops(spec, arch, tokens)
    return Prefill(flops, peak, row.mfu, row.id, flops / (cards * peak * row.mfu))


def prompt_tokens(result: Result) -> int:
    """The prompt whose first token is timed: `prompt_tokens` when given; else the whole sized context
    for one request (the longest it can be), and under a load the serving default of core.inverse.cost
    (`DEFAULT_PROMPT_TOKENS`, a typical chat turn) within the context."""
    req = result.request
    if req.prompt_tokens:
        return req.prompt_tokens
    context = req.context_length or 0
    return min(context, DEFAULT_PROMPT_TOKENS) if req.requests_per_second is not None else context


def mdl_wait(rate: float, service: float) -> float:
    """Mean wait in an M/D/1 queue (Poisson arrivals at a fixed service time; Pollaczek-Khinchine
    with no variance in service): rho S / 2(1-rho)."""
    rho = rate * service
    return math.inf if rho >= 1 else rho * service / (2 * (1 - rho))


@dataclass(frozen=True)
class Load:
    rps: float
    target: float | None
    output_tokens: int
    ttft: float  # one request alone
    service: float  # a server's prefill of one prompt
    tokens_per_s: float | None
    max_in_flight: int | None


@dataclass(frozen=True)
class Plan:
    servers: int
    utilization: float
    wait: float
    ttft: float
    in_flight: float
    limit: Literal["prefill", "target", "memory"] | None
    met: bool


def check(load: Load, servers: int) -> tuple[Literal["prefill", "target", "memory"] | None, Plan]:
    """`servers` under `load`: what it fails on first (None: it meets every bound), and the plan."""
    rate = load.rps / servers
    rho = rate * load.service
    wait = mdl_wait(rate, load.service)
    ttft = load.ttft + wait
    decode = load.output_tokens / load.tokens_per_s if load.tokens_per_s else 0.0
    in_flight = rate * (ttft + decode) if math.isfinite(ttft) else math.inf
    cap = load.target is None and rho > MAX_UTILIZATION
    failed: Literal["prefill", "target", "memory"] | None = None
    if rho >= 1 or cap:
        failed = "prefill"
    elif load.target is not None and ttft > load.target:
        failed = "target"
    elif load.max_in_flight is not None and in_flight > load.max_in_flight:
        failed = "memory"
    return failed, Plan(servers, rho, wait, ttft, in_flight, None, failed is None)


def servers_for(load: Load) -> Plan:
    """The fewest servers meeting the load (`Plan.limit`: what ruled out one fewer); `met` false when
    even `MAX_SERVERS` do not (a target below one request's own TTFT)."""
    low = max(1, math.ceil(load.rps * load.service / (1 if load.target else MAX_UTILIZATION)))
    last: Literal["prefill", "target", "memory"] | None = "prefill" if low > 1 else None
    if load.target is not None and load.ttft > load.target:
        _, plan = check(load, low)
        return Plan(plan.servers, plan.utilization, plan.wait, plan.ttft, plan.in_flight, "target", False)
    servers = low
    while servers <= MAX_SERVERS:
        failed, plan = check(load, servers)
        if failed is None:
            return Plan(plan.servers, plan.utilization, plan.wait, plan.ttft, plan.in_flight, last, True)
        last = failed
        servers = servers + 1 if servers < 64 else math.ceil(servers * 1.05)
    _, plan = check(load, MAX_SERVERS)
    return Plan(MAX_SERVERS, plan.utilization, plan.wait, plan.ttft, plan.in_flight, last, False)


# --- the result ---------------------------------------------------------------------------------


def _shown(result: Result) -> tuple[str, str, int, int | None] | None:
    """(gpu, name, count, usable bytes per card) of the configuration the answer shows."""
    if result.target is not None:
        t = result.target
        return t.gpu, t.gpu_name, t.count, t.usable_bytes
    rec = result.recommendation
    if rec is not None:
        return rec.gpu, rec.gpu_name, rec.count, None
    return None


def _max_in_flight(
    result: Result, gpu: GpuSpec, count: int, usable: int | None, catalog: Catalog
) -> int | None:
    """Sequences one server's memory holds: vLLM's own pool (`serving_capacity`) where sized, else
    the card's room past everything but the KV cache, over one sequence's KV cache."""
    cap = result.serving_capacity
    if cap is not None and (cap.gpu, cap.count) == (gpu.id, count):
        return max(int(cap.max_concurrency), 0)
    rec = result.recommendation
    breakdown = result.breakdown
    if result.target is None and rec is not None and rec.breakdown:  # the recommended cards' own need
        breakdown = rec.breakdown
    kv = breakdown.get("kv_cache", 0)
    if kv <= 0:
        return None
    per_sequence = kv / result.request.concurrency
    room = (usable or gpu.usable_bytes) * (1 - catalog.ranking.tight_headroom)
    return max(int((room - (sum(breakdown.values()) - kv)) // per_sequence), 0)


def attach_latency(result: Result, spec: ModelSpec, arch: Arch | None, catalog: Catalog) -> Result:
    """`result` with each throughput's TTFT and `latency` for the configuration it shows (and the
    servers `requests_per_second` takes). Inference of language models only."""
    req = result.request
    tokens = prompt_tokens(result)
    if req.task is not Task.INFERENCE or arch is None or req.precision is None or tokens <= 0:
        return result
    precision = req.precision
    prefills: dict[tuple[str, int], Prefill | None] = {}  # the shown configuration is one of the speeds'

    def prefill_on(gpu: GpuSpec, count: int) -> Prefill | None:
        key = (gpu.id, count)
        if key not in prefills:
            prefills[key] = prefill(spec, arch, gpu, count, req.engine, precision, tokens)
        return prefills[key]

    speeds = []
    for t in result.throughput:
        gpu = catalog.gpus.get(t.gpu)
        p = prefill_on(gpu, t.count) if gpu else None
        ttft = round(p.seconds + 1 / t.tokens_per_s, 3) if p and t.tokens_per_s > 0 else None
        speeds.append(variant(t, {"ttft_s": ttft}))
    latency = _latency(result, catalog, speeds, tokens, prefill_on)
    return variant(result, {"throughput": speeds, "latency": latency})


def _latency(
    result: Result,
    catalog: Catalog,
    speeds: list[Throughput],
    tokens: int,
    prefill_on: Callable[[GpuSpec, int], Prefill | None],
) -> Latency | None:
    req = result.request
    shown = _shown(result)
    if shown is None or shown[0] not in catalog.gpus or req.precision is None:
        return None
    gpu_id, name, count, usable = shown
    gpu = catalog.gpus[gpu_id]
    p = prefill_on(gpu, count)
    if p is None:
        return None
    speed = next((t.tokens_per_s for t in speeds if (t.gpu, t.count) == (gpu_id, count)), None)
    ttft = p.seconds + (1 / speed if speed else 0.0)
    latency = Latency(
        gpu=gpu_id,
        gpu_name=name,
        count=count,
        prompt_tokens=tokens,
        prefill_flops=p.flops,
        peak_tflops=p.peak / 1e12,
        mfu=p.mfu,
        mfu_source=p.source,
        prefill_s=round(p.seconds, 4),
        ttft_s=round(ttft, 4),
        tokens_per_s=speed,
        burst_wait_s=round((req.concurrency - 1) * p.seconds, 4) if req.concurrency > 1 else None,
    )
    if req.requests_per_second is None:
        return latency
    load = Load(
        rps=req.requests_per_second,
        target=req.ttft_target_s,
        output_tokens=req.tokens_per_request or DEFAULT_OUTPUT_TOKENS,
        ttft=ttft,
        service=p.seconds,
        tokens_per_s=speed,
        max_in_flight=_max_in_flight(result, gpu, count, usable, catalog),
    )
    plan = servers_for(load)
    return variant(
        latency,
        {
            "requests_per_second": load.rps,
            "ttft_target_s": load.target,
            "output_tokens": load.output_tokens,
            "servers": plan.servers,
            "cards": plan.servers * count,
            "utilization": round(plan.utilization, 3),
            "wait_s": round(plan.wait, 4) if math.isfinite(plan.wait) else None,
            "ttft_under_load_s": round(plan.ttft, 4) if math.isfinite(plan.ttft) else None,
            "in_flight": round(plan.in_flight, 2) if math.isfinite(plan.in_flight) else None,
            "max_in_flight": load.max_in_flight,
            "limit": plan.limit,
            "met": plan.met,
        },
    )
