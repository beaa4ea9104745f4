"""Decode speed of the configurations named, and the host (RAM, disk) around the recommended one."""

from __future__ import annotations

import math

from core.advice.decode import DECODE_BANDWIDTH_EFFICIENCY, decode_weight_bytes, moe_layer_s
from core.advice.offload import offloaded_throughput
from core.catalogue.gpus import GpuSpec
from core.catalogue.models import ModelSpec
from core.contract import (
    Engine,
    HostAdvice,
    Method,
    Precision,
    Recommendation,
    Request,
    Task,
    Throughput,
)
from core.formulas.params import Arch
from core.formulas.peak import peak_breakdown
from core.formulas.peak_diffusion import pipeline_download_bytes
from core.formulas.precision import (
    QUANTIZED_ON_LOAD,
)
from core.formulas.training import lora_params
from core.formulas.weights import model_weight_bytes

from .sizing import Sizer

# Tensor-parallel decode does not scale linearly: every layer all-reduces its activations twice
# (Megatron-LM), a latency-bound exchange of a few KB per token. The factor is the speed-up kept per
# doubling of cards, by the interconnect of the GPU (gpus.toml `interconnect`):
# - pcie: vLLM on 2x RTX 4090 (no NVLink, no P2P) serves 1.38x (DeepSeek-R1-Distill-Qwen-7B,
#   4623.98 vs 3344.91 output tok/s) and 1.47x (-Llama-8B, 3349.59 vs 2285.44) of one card
#   (databasemart.com blog "vLLM Distributed Inference Optimization"): 0.69-0.73 of 2x, so 0.70;
# - nvlink: TP=2 over an NVLink bridge gave +25% at concurrency 1 over the same pair over PCIe
#   (4x RTX 3090, vLLM 0.20.1, Qwen3.6-27B AWQ; r/LocalLLaMA post 1t6susj): 0.70 x 1.25 = 0.875;
# - infinity_fabric (MI300X): direct GPU-to-GPU links like NVLink; no measurement found, NVLink's.
TENSOR_PARALLEL_DECODE_EFFICIENCY: dict[str, float] = {
    "pcie": 0.70,
    "nvlink": 0.875,
    "infinity_fabric": 0.875,
}
# What a decode step costs beyond the bytes it reads (the 70% above is measured on a whole dense
# step on one card, its own small kernels under CUDA graphs included):
# - Tensor-parallel all-reduces: two per decoder layer (Megatron-LM: after attention's output
#   projection and after the MLP's down projection; vLLM `RowParallelLinear`), each a latency-bound
#   exchange of one token's hidden state. NCCL's own cost model (src/graph/tuning.cc, ring, LL
#   protocol): `baseLat` 6.6 us plus `hwLat` per step, 0.6 us over NVLink and 1.0 us over PCIe, a ring
#   all-reduce taking 2(n-1) steps: 7.8 us on 2 NVLink GPUs (measured ~6 us on 2x H100 with CUDA graphs,
#   NVIDIA/nccl#1259), 15 us on 8.
ALLREDUCES_PER_LAYER = 2
NCCL_BASE_LATENCY_S = 6.6e-6
NCCL_HOP_LATENCY_S: dict[str, float] = {"pcie": 1.0e-6, "nvlink": 0.6e-6, "infinity_fabric": 0.6e-6}
# Eager transformers `generate()` launches every kernel of every layer from Python, one token at a
# time: the GPU waits for the CPU whenever launching a layer takes longer than running it. The
# CPU enqueues ahead within a step, so a step takes the longer of the two, not their sum.
# Measured: eager Llama-2-7B (32 layers) on an A100 at 25.5 tok/s where the same code compiled (no
# launches: CUDA graphs) reaches 107.0, the bandwidth ceiling ("Accelerating Generative AI with
# PyTorch II: GPT, Fast", pytorch.org/blog/accelerating-generative-ai-2, "Starting Point (25.5
# tok/s) ... it's heavily CPU overhead bound"): 1/25.5 s over 32 layers = 1.23 ms per layer.
# Checked against transformers itself: LLaMA-7B fp16 `generate()` on an A10G, 23.15 tok/s
# (fxmarty/accelerated-pytorch-transformers-generation README; speed_cases.jsonl s022), where the
# bytes alone allow ~31.
# A property of the host CPU as much as the card; vLLM and llama.cpp replay CUDA graphs and pay none.
EAGER_LAYER_LAUNCH_S = 1 / 25.5 / 32
EAGER_ENGINES = frozenset({Engine.TRANSFORMERS})
HOST_RAM_RECOMMENDED_FACTOR = 2  # RAM ≥ the weights to load and pin them; 2× for page cache and data loaders
CHECKPOINT_BYTES_PER_PARAM = 4 + 8  # fp32 weights + AdamW moments in a resumable full checkpoint


def multi_gpu_speedup(gpu: GpuSpec, count: int, engine: Engine | None) -> float:
    """How much faster `count` cards decode one token than one. vLLM splits every layer (tensor
    parallel): `TENSOR_PARALLEL_DECODE_EFFICIENCY` kept per doubling. transformers (`device_map`)
    and llama.cpp (`--split-mode layer`) spread whole layers: a token passes the cards in turn, one
    works at a time (accelerate big-model inference docs), so no faster than one card."""
    if count <= 1:
        return 1.0
    if engine is not Engine.VLLM:
        return 1.0
    return count * TENSOR_PARALLEL_DECODE_EFFICIENCY[gpu.interconnect] ** math.log2(count)


def allreduce_latency_s(gpu: GpuSpec, count: int) -> float:
    """One small all-reduce over `count` cards (NCCL ring, LL protocol: base + 2(n-1) hops)."""
    return NCCL_BASE_LATENCY_S + 2 * (count - 1) * NCCL_HOP_LATENCY_S[gpu.interconnect]


def fixed_step_s(arch: Arch, gpu: GpuSpec, count: int, engine: Engine | None) -> float:
    """Seconds of a decode step that do not shrink with the bytes: the tensor-parallel all-reduces
    (vLLM splits every layer; transformers and llama.cpp pass whole layers, no all-reduce) and the
    fixed cost of each mixture-of-experts layer, by engine (every layer counted as MoE: DeepSeek's
    3 dense of 61 are within the constant's precision)."""
    tp = count > 1 and engine is Engine.VLLM
    per_layer = ALLREDUCES_PER_LAYER * allreduce_latency_s(gpu, count) if tp else 0.0
    if arch.experts > 1:
        per_layer += moe_layer_s(engine)
    return arch.L * per_layer


def eager_launch_s(arch: Arch, engine: Engine | None) -> float:
    """Seconds the CPU takes to launch one decode step's kernels under an eager engine (0 for one
    that replays CUDA graphs): EAGER_LAYER_LAUNCH_S per decoder layer."""
    return arch.L * EAGER_LAYER_LAUNCH_S if engine in EAGER_ENGINES else 0.0


def throughput(
    req: Request,
    spec: ModelSpec,
    arch: Arch | None,
    configs: list[tuple[GpuSpec, int]],
    sizer: Sizer | None = None,
) -> list[Throughput]:
    """Decode speed per sequence and in all, on each of `configs` (GPU, cards). `sizer`: the
    request's, whose one-card breakdown is then not sized again."""
    if req.task is not Task.INFERENCE or arch is None:
        return []
    if req.engine is Engine.LLAMA_CPP and (req.gpu_layers is not None or req.n_cpu_moe):
        return offloaded_throughput(req, spec, arch, configs)
    assert req.precision and req.context_length and req.kv_cache_precision
    weights = decode_weight_bytes(spec, arch, req)
    if sizer is not None:
        one_card = sizer.breakdown(num_gpus=1)
    else:
        one_card = peak_breakdown(req.model_copy(update={"num_gpus": 1}), spec, arch)
    kv = one_card.get("kv_cache", 0.0)
    step_bytes = weights + kv
    out = []
    for gpu, count in configs:
        bandwidth = gpu.bandwidth_gb_s * 1e9 * DECODE_BANDWIDTH_EFFICIENCY
        step_s = step_bytes / (bandwidth * multi_gpu_speedup(gpu, count, req.engine))
        step_s += fixed_step_s(arch, gpu, count, req.engine)
        step_s = max(step_s, eager_launch_s(arch, req.engine))
        out.append(
            Throughput(
                gpu=gpu.id,
                count=count,
                tokens_per_s=round(1 / step_s, 1),
                aggregate_tokens_per_s=round(req.concurrency / step_s, 1),
            )
        )
    return out


def checkpoint_precision(req: Request, spec: ModelSpec) -> Precision:
    """The precision of the checkpoint to download: a format quantized while loading (bitsandbytes,
    torchao) starts from the published 16-bit (or shipped) checkpoint; Unsloth downloads its
    pre-quantized `-bnb-4bit` uploads."""
    assert req.precision
    on_load = req.precision in QUANTIZED_ON_LOAD and req.precision is not spec.native_precision
    if not on_load or req.engine is Engine.UNSLOTH:
        return req.precision
    return spec.native_precision or Precision.BF16


def host(
    req: Request, spec: ModelSpec, arch: Arch | None, pick: Recommendation | None, total: int
) -> HostAdvice:
    """RAM and disk of the server. Inference and generation: RAM holds the weights to load and pin
    (the KV cache, activations and allocator blocks live on the GPUs only); training: as much as the
    cards hold (checkpoints, data loaders, offloaded states). Disk: the checkpoint as downloaded."""
    count = pick.count if pick else req.num_gpus
    vram = (pick.bytes_per_gpu if pick else total) * count
    assert req.precision
    if arch is not None:
        weights = model_weight_bytes(arch.params, req.precision, arch)
        disk = model_weight_bytes(arch.params, checkpoint_precision(req, spec), arch)
    else:  # diffusion pipelines: each component's file (core.formulas.peak_diffusion.pipeline_download_bytes)
        weights = disk = pipeline_download_bytes(req, spec)
    ram = vram if req.task is Task.TRAINING else weights
    if req.task is Task.TRAINING:
        trainable = (
            spec.params_b * 1e9
            if req.method is Method.FULL or arch is None
            else lora_params(arch, req.lora_rank, req.lora_targets)
        )
        disk += trainable * CHECKPOINT_BYTES_PER_PARAM
    return HostAdvice(
        ram_min_bytes=round(ram),
        ram_recommended_bytes=round(ram * HOST_RAM_RECOMMENDED_FACTOR),
        disk_bytes=round(disk),
    )
