"""vLLM's memory budget and the KV cache it pre-allocates in it.

vLLM does not grow its memory with the load: at start-up it takes `gpu_memory_utilization` of each
card's total memory (`requested_memory = ceil(total_memory * gpu_memory_utilization)`,
vllm/v1/worker/utils.py `request_memory`), loads the weights, profiles one forward pass at
`max_num_batched_tokens`, and turns what is left into KV-cache blocks in one allocation:
`available_kv_cache_memory = requested_memory - non_kv_cache_memory` (weights + activation peak +
memory outside PyTorch; vllm/v1/worker/gpu_worker.py `determine_available_memory`). It then logs
"GPU KV cache size: N tokens" and "Maximum concurrency for M tokens per request: X.XXx"
(vllm/v1/core/kv_cache_utils.py `_report_kv_cache_config`, `get_num_blocks`,
`get_max_concurrency_for_kv_cache_config`). The functions below follow those files.
"""

from __future__ import annotations

import math

from core.contract import Engine

# CacheConfig.gpu_memory_utilization default (vllm/config/cache.py; `--gpu-memory-utilization`).
VLLM_GPU_MEMORY_UTILIZATION = 0.9
# CacheConfig.block_size: tokens per KV-cache block, 16 by default on CUDA (vllm/config/cache.py).
VLLM_BLOCK_SIZE = 16


def memory_fraction(engine: Engine | None, gpu_memory_utilization: float | None) -> float:
    """The share of each card an engine may use: vLLM's `gpu_memory_utilization`, else all of it."""
    if engine is not Engine.VLLM:
        return 1.0
    return gpu_memory_utilization or VLLM_GPU_MEMORY_UTILIZATION


def budget_bytes(total_bytes: int, fraction: float) -> int:
    """`request_memory`: ceil(total_memory × gpu_memory_utilization)."""
    return total_bytes if fraction >= 1 else math.ceil(total_bytes * fraction)


def kv_cache_tokens(pool_bytes: float, bytes_per_token: float, block_size: int = VLLM_BLOCK_SIZE) -> int:
    """Tokens the KV pool holds: whole blocks of `block_size` tokens (`get_num_blocks`:
    available_memory // page_size // num_layers, page_size = block_size × one layer's bytes per token)."""
    if pool_bytes <= 0 or bytes_per_token <= 0:
        return 0
    return int(pool_bytes // (bytes_per_token * block_size)) * block_size


def max_concurrency(
    tokens: int, context_length: int, block_size: int = VLLM_BLOCK_SIZE, windowed_share: float = 1.0
) -> float:
    """Requests of `context_length` tokens the pool holds at once: blocks / blocks per request
    (`get_max_concurrency_for_kv_cache_config`). `tokens` count every layer at the whole context;
    `windowed_share` (< 1 with sliding-window layers, which keep only their window) is the share of
    that a request really takes."""
    return (tokens // block_size) / (math.ceil(context_length / block_size) * windowed_share)


def kv_pool_bytes(budget: int, needed_bytes: float, kv_cache_bytes: float) -> float:
    """`available_kv_cache_memory`: the budget less everything that is not KV cache (the sized peak
    without its KV part: weights, activation peak, CUDA context, engine runtime, NCCL)."""
    return budget - (needed_bytes - kv_cache_bytes)
