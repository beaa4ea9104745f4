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
# ... but the loaders quantize tensor by tensor, one checkpoint shard at a time: transformers'
# `_load_state_dict_into_meta_model` walks the state dict of one shard and hands each tensor to
# `hf_quantizer.create_quantized_param`; bitsandbytes `Params4bit._quantize` copies that one 16-bit
# tensor to the GPU (`self.data.contiguous().to(device)`), quantizes it and drops the copy. The
# freed 16-bit blocks are reused for the next tensors, so what stays reserved is bounded by what is
# in flight, about one shard, not by the model. One shard: `save_pretrained` / `push_to_hub` split
# checkpoints at `max_shard_size="5GB"` by default (transformers modeling_utils.py and utils/hub.py;
# "5GB" = 5 * 10^9 bytes, `convert_file_size_to_int`), which is how Hub checkpoints are cut.
CHECKPOINT_SHARD_BYTES = 5 * 10**9

# Engine runtime outside PyTorch's allocator, per GPU. vLLM: CUDA graphs + NCCL + sampler
# workspace; its profiler reports `non_torch_memory` 1.79 GiB for Llama-3-8B on an H100
# (vllm-project/vllm#10511), of which the CUDA context is counted above.
ENGINE_RUNTIME_BYTES: dict[Engine, int] = {
    Engine.VLLM: 1290 * MiB,
}

# NCCL communication buffers per GPU when a model is split over several GPUs: NCCL_BUFFSIZE is
# 4 MiB per channel and peer (NCCL docs, env NCCL_BUFFSIZE); with up to 32 channels x 2 directions.
NCCL_BUFFER_BYTES = 256 * MiB


def quantize_on_load_residue_bytes(params_quantized_on_load: float) -> float:
    """Allocator blocks left reserved by quantizing 16-bit weights (2 bytes each) on load: the
    fitted share of their 16-bit bytes, at most one checkpoint shard (what is in flight)."""
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
