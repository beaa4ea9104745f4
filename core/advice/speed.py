"""Decode speed of the configurations named, and the host (RAM, disk) around the recommended one."""

from __future__ import annotations

from core.contract import HostAdvice, Method, Recommendation, Request, Task, Throughput
from core.formulas.params import Arch
from core.formulas.peak import peak_breakdown
from core.formulas.training import lora_params
from core.formulas.weights import model_weight_bytes
from core.precision import bits_per_weight
from core.specs import GpuSpec, ModelSpec

# Decode reads every weight once per step; real kernels reach ~70% of peak bandwidth:
# Llama-2-7B bf16 on an A100-80GB decodes at 1418.93 GB/s of 2039 GB/s (torchao README benchmark).
DECODE_BANDWIDTH_EFFICIENCY = 0.70
HOST_RAM_RECOMMENDED_FACTOR = 2  # RAM ≥ VRAM to load and pin weights; 2× for page cache and data loaders
CHECKPOINT_BYTES_PER_PARAM = 4 + 8  # fp32 weights + AdamW moments in a resumable full checkpoint


def throughput(
    req: Request, spec: ModelSpec, arch: Arch | None, configs: list[tuple[GpuSpec, int]]
) -> list[Throughput]:
    """Decode speed per sequence and in all, on each of `configs` (GPU, cards)."""
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
    for gpu, count in configs:
        step_s = step_bytes / (gpu.bandwidth_gb_s * 1e9 * DECODE_BANDWIDTH_EFFICIENCY * count)
        out.append(
            Throughput(
                gpu=gpu.id,
                count=count,
                tokens_per_s=round(1 / step_s, 1),
                aggregate_tokens_per_s=round(req.concurrency / step_s, 1),
            )
        )
    return out


def host(
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
