"""Runtime memory outside the model's own tensors: CUDA context, the caching allocator's reserve
(and the blocks left by quantizing on load), engine runtime (vLLM) and NCCL buffers.

Kept as one breakdown component, `overhead`, so a caller comparing with
`torch.cuda.max_memory_allocated` (which sees none of them) subtracts it.
"""

from __future__ import annotations

from core.contract import Engine
from core.units import MiB

# CUDA context + cuBLAS/cuDNN handles with lazy module loading (CUDA >= 11.7, PyTorch >= 2).
# Measured 0.3-1.4 GB (../shared/gpu-measure README); 1343 MiB on PyTorch 1.x without lazy loading
# (transformers docs, model_memory_anatomy). We take the modern middle.
CUDA_CONTEXT_BYTES = 500 * MiB

# PyTorch's caching allocator rounds blocks and keeps freed ones: `max_memory_reserved` exceeds
# `max_memory_allocated`. Fitted on the calibration cases measured as reserved or with nvidia-smi
# (docs/estimator.md), applied to everything that is allocated and freed while running (not to the
# weights, which are allocated once in exactly sized blocks).
ALLOCATOR_RESERVE_FRACTION = 0.10

# Quantizing a 16-bit checkpoint on load passes each 16-bit tensor through the GPU; the caching
# allocator keeps those blocks reserved afterwards. Fitted, as a share of the 16-bit bytes of the
# weights quantized on load: 11-13% for bitsandbytes NF4/int8 on FLUX.1-dev (diffusers blog
# "memory after loading" minus the weights) and torchao int8 on Llama-2-7B; 6% for torchao int4.
QUANTIZE_ON_LOAD_RESIDUE_FRACTION = 0.10
# ... and capped at one checkpoint shard. What the loaders do (read for this bound):
# transformers/diffusers `create_quantized_param` (quantizers/quantizer_bnb_4bit.py; diffusers
# quantizers/bitsandbytes/bnb_quantizer.py, adapted from it) takes one tensor of the shard, keeps it
# on the CPU (`param_value.to("cpu")`) and calls `Params4bit(...).to(device)`; bitsandbytes
# `Params4bit._quantize` copies that one 16-bit tensor to the GPU (`self.data.contiguous().to(device)`),
# allocates the packed 4-bit output and its absmax, and drops the copy. So one 16-bit tensor is on the
# GPU at a time, and the shard itself stays in host memory. What stays reserved is the caching
# allocator's: it keeps the freed 16-bit blocks and, best fit, carves the next tensors' persistent
# 4-bit outputs out of them (PyTorch CUDACachingAllocator splits large-pool blocks), so the leftover
# slivers pile up tensor after tensor. That grows with the number of tensors, as the measured 6-13%
# above does (up to FLUX's 16.7B quantized parameters), and one decoder layer (~1 GB of 16-bit
# tensors at 32B) cannot bound it: FLUX's measured residue (11-13% of 33 GB, ~4 GB) is some six of
# its ~0.7 GB transformer blocks.
# The cap is kept where nothing is measured (above ~17B), and is not generous: at ~30B quantized on
# load a 24 GB card runs out of memory while quantizing (Qwen3-30B-A3B `load_in_4bit` on an RTX 4090,
# unslothai/unsloth#2504: "requires 29.6GB VRAM to load"), and the bitsandbytes quantizers hold back
# 10% of every card when placing layers (`adjust_max_memory`: "need more space for buffers that are
# created during quantization"). One shard: `save_pretrained` / `push_to_hub` split checkpoints at
# `max_shard_size="5GB"` by default (transformers modeling_utils.py and utils/hub.py; "5GB" =
# 5 * 10^9 bytes, `convert_file_size_to_int`), which is how Hub checkpoints are cut.
CHECKPOINT_SHARD_BYTES = 5 * 10**9

# Engine runtime outside PyTorch's allocator, per GPU. vLLM: CUDA graphs + NCCL + sampler
# workspace; its profiler reports `non_torch_memory` 1.79 GiB for Llama-3-8B on an H100
# (vllm-project/vllm#10511), of which the CUDA context is counted above.
ENGINE_RUNTIME_BYTES: dict[Engine, int] = {
    Engine.VLLM: 1290 * MiB,
}

# Micro-batches of varying length (no packing, no padding to one length: ms-swift's
# `truncation_strategy='delete'` drops longer samples and pads each batch to its own longest, as HF
# Trainer's collators do) leave the caching allocator holding the logit-sized blocks of earlier steps:
# a longer step's logits fit none of them, so it cudaMallocs new segments, and the old ones stay
# reserved (PyTorch "CUDA semantics" docs, `expandable_segments`: "if it runs at size N + 1, then it
# will have to make new allocations that are slightly larger ... leaving unusable free slices").
# They are given back before an out-of-memory error (c10/cuda/CUDACachingAllocator.cpp `malloc`:
# `release_cached_blocks()`, then retry), so they are not part of what must fit: only
# `torch.cuda.max_memory_reserved` on a card with room to spare reads them. Counted in fp32 logit
# blocks of the longest micro-batch (4 · b · s · V bytes, the size of the loss's largest tensors),
# read off the one sweep that shows it (ms-swift's LoRA benchmark, tests/core/fixtures cases
# c179-c192): 7-8.6 blocks when a run goes over the whole dataset (max_length <= 2048), 3.2-4.9 when
# it stops after 1000 samples (longer max_length; scripts/benchmark/test_memory_time/run_single.py),
# alike for Qwen-1.8B and 7B, batch 1 and 2, with and without checkpointing, LoRA and QLoRA: it
# follows the logits, not the model. How many shorter lengths stay cached depends on the order the
# lengths come in, which no request states; 5 lies between the two groups.
VARIABLE_LENGTH_CACHED_LOGIT_BLOCKS = 5


def variable_length_cached_bytes(s: int, b: int, V: int) -> float:
    """Logit-sized blocks of earlier, shorter micro-batches the caching allocator keeps reserved on a
    roomy card when lengths vary (see the constant): read by a `max_memory_reserved` meter, not
    needed to fit."""
    return VARIABLE_LENGTH_CACHED_LOGIT_BLOCKS * 4 * s * b * V


# NCCL communication buffers per GPU when a model is split over several GPUs: NCCL_BUFFSIZE is
# 4 MiB per channel and peer (NCCL docs, env NCCL_BUFFSIZE); with up to 32 channels x 2 directions.
NCCL_BUFFER_BYTES = 256 * MiB


def quantize_on_load_residue_bytes(params_quantized_on_load: float) -> float:
    """Allocator blocks left reserved by quantizing 16-bit weights (2 bytes each) on load: the
    fitted share of their 16-bit bytes (fragmentation grows tensor by tensor), capped at one
    checkpoint shard where no measurement reaches (see the constants above)."""
    return min(QUANTIZE_ON_LOAD_RESIDUE_FRACTION * 2 * params_quantized_on_load, CHECKPOINT_SHARD_BYTES)


def overhead_bytes(
    dynamic_bytes: float, engine: Engine, num_gpus: int, params_quantized_on_load: float = 0.0
) -> float:
    """CUDA context + engine runtime + NCCL when split + allocator reserve on the memory that churns
    + blocks left by quantizing on load."""
    runtime = ENGINE_RUNTIME_BYTES.get(engine, 0)
    nccl = NCCL_BUFFER_BYTES if num_gpus > 1 else 0
    return (
        CUDA_CONTEXT_BYTES
        + runtime
        + nccl
        + ALLOCATOR_RESERVE_FRACTION * dynamic_bytes
        + quantize_on_load_residue_bytes(params_quantized_on_load)
    )
