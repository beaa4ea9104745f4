"""Decode speed of the configurations named, and the host (RAM, disk) around the recommended one."""

from __future__ import annotations

import math

from core.catalogue.specs import GpuSpec, ModelSpec
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
from core.formulas.params import Arch, linear_params, mlp_params_per_layer
from core.formulas.peak import peak_breakdown, pipeline_download_bytes
from core.formulas.precision import (
    EXPERTS_ONLY_ON_MOE,
    QUANTIZED_ON_LOAD,
    WIDE_BITS,
    bits_per_weight,
    embedding_bits,
)
from core.formulas.training import lora_params
from core.formulas.weights import model_weight_bytes, weight_bytes

from .sizing import Sizer

# Decode reads every weight once per step; real kernels reach ~70% of peak bandwidth:
# Llama-2-7B bf16 on an A100-80GB decodes at 1418.93 GB/s of 2039 GB/s (torchao README benchmark;
# torchao counts the whole model, its 2% of input embedding included, which a decode step does not
# read in full: 0.68-0.70 either way).
DECODE_BANDWIDTH_EFFICIENCY = 0.70
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
# - A mixture-of-experts layer at small batch: routing (top-k, sort and align the tokens by expert)
#   and a grouped GEMM whose few rows per expert leave most of the GPU idle; a fixed time per MoE
#   layer, not per byte, and a property of the engine's MoE kernels (measured, per engine):
#   - vLLM (fused_moe, Triton): gpt-oss-120b on one A100-80GB decodes at 90 and 88 tok/s at TP=1
#     (vllm-project/vllm#22331; "if local expert count per device is small, the MoE layer starts to
#     slow down"): 1/90 s less its ~5 GB read at 70% of 2039 GB/s, over 36 layers = 0.22 ms. It puts
#     DeepSeek R1 on 8x H200 at ~58 tok/s; published single-stream runs: 30.29 (SGLang v0.4.1.post2
#     release, batch 1, sgl-project/sglang#2643) and 13 (sgl-project/sglang#3196).
#   - llama.cpp (CUDA `mul_mat_vec_id`, one kernel per expert matrix for the token's experts, CUDA
#     graphs): Qwen3-30B-A3B Q4_0 on an RTX 4090 decodes at 205.87 tok/s (llama-bench, micro-batch 1
#     over a 4096-token prompt, ggml-org/llama.cpp#15631, the CUDA maintainer's table): 1/205.87 s
#     less its 2.92 ms of bytes (weights and the mean 2K-token KV at 70% of 1008 GB/s), over 48 MoE
#     layers = 0.040 ms. Checked on another card and model: gpt-oss-20b on an RTX 3090, 186.29 tok/s
#     in the same table (tests/core/fixtures/speed_cases.jsonl).
#   - transformers: no published single-stream MoE decode found; its per-expert Python loop is no
#     faster than vLLM's fused kernel, so vLLM's value (a floor; eager launches: EAGER_LAYER_LAUNCH_S).
MOE_LAYER_FIXED_S: dict[Engine, float] = {
    Engine.VLLM: 220e-6,
    Engine.LLAMA_CPP: 40e-6,
    Engine.TRANSFORMERS: 220e-6,
}
MOE_LAYER_FIXED_DEFAULT_S = MOE_LAYER_FIXED_S[Engine.VLLM]  # an engine without a measurement
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
# GGUF conversions of MXFP4 checkpoints (ggml-org/gpt-oss-*-GGUF, the files llama.cpp's gpt-oss guide
# loads, ggml-org/llama.cpp#15396) store the tensors MXFP4 leaves in BF16 (attention, embeddings, LM
# head) as Q8_0: gpt-oss-20b-mxfp4.gguf is 11.27 GiB against 12.8 GiB of safetensors, and "the
# ggml-org model uses Q8_0 for the weights of the embedding layer ... The attention and output layers
# are also similar" (community.frame.work thread 73280, comparing it with a F16 GGUF).
GGUF_MXFP4_WIDE_BITS = bits_per_weight(Precision.Q8_0)
HOST_RAM_RECOMMENDED_FACTOR = 2  # RAM ≥ the weights to load and pin them; 2× for page cache and data loaders
CHECKPOINT_BYTES_PER_PARAM = 4 + 8  # fp32 weights + AdamW moments in a resumable full checkpoint


def decode_weight_bytes(spec: ModelSpec, arch: Arch, req: Request) -> float:
    """Weight bytes one decode step reads: every weight but the input embedding table (a row lookup
    per token; when tied it is the LM head, read once), each at its own precision; on a mixture of
    experts only the routed experts the router picks, plus what runs for every token — attention,
    shared experts, dense layers, router and LM head (`active_params_b` of the model card, which
    counts them; gpt-oss-120b: 5.13B = 0.96B attention + 3.58B of 4 experts + 0.58B LM head)."""
    assert req.precision
    bits, wide = bits_per_weight(req.precision), embedding_bits(req.precision)
    mxfp4_gguf = req.precision in EXPERTS_ONLY_ON_MOE and req.engine is Engine.LLAMA_CPP
    if mxfp4_gguf:
        wide = GGUF_MXFP4_WIDE_BITS
    head = arch.V * arch.h
    body = linear_params(arch)  # decoder blocks: attention, MLP or experts, norms
    if arch.experts <= 1:
        return weight_bytes(body, bits) + weight_bytes(head, wide)
    experts = min(arch.L * mlp_params_per_layer(arch.h, arch.i, arch.gated, arch.experts), body)
    routed = experts * arch.active_experts / arch.experts
    if spec.active_params_b:
        dense = max(spec.active_params_b * 1e9 - routed - head, 0.0)
    else:
        dense = body - experts
    dense_bits = bits
    if req.precision in EXPERTS_ONLY_ON_MOE:
        dense_bits = GGUF_MXFP4_WIDE_BITS if mxfp4_gguf else WIDE_BITS
    return weight_bytes(routed, bits) + weight_bytes(dense, dense_bits) + weight_bytes(head, wide)


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


def moe_layer_s(engine: Engine | None) -> float:
    """The fixed decode time of one mixture-of-experts layer under `engine` (MOE_LAYER_FIXED_S)."""
    return MOE_LAYER_FIXED_S.get(engine, MOE_LAYER_FIXED_DEFAULT_S) if engine else MOE_LAYER_FIXED_DEFAULT_S


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
        from core.advice.offload import offloaded_throughput  # part of the model in RAM (issue 22)

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
    else:  # diffusion pipelines: each component's file (core.formulas.peak.pipeline_download_bytes)
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
