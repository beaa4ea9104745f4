"""What a pasted log says: one `LogReading`, bytes and codes only (no prose leaves the core).

Sizes are read as the tools print them: PyTorch's allocator and vLLM write binary units (PyTorch
`c10/cuda/CUDACachingAllocator.cpp` `format_size`: KiB/MiB/GiB = 1024^n; vLLM's older "took 14.99 GB"
is `bytes / float(2**30)`, `vllm/worker/model_runner.py`, i.e. GiB too), llama.cpp and nvidia-smi write
MiB (`ggml-backend`: `size / 1024.0 / 1024.0`; nvidia-smi's "MiB"). So "GB" reads as 2^30 bytes here.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Literal

LogKind = Literal["torch_oom", "torch_oom_legacy", "nvidia_smi", "vllm", "llama_cpp"]
Failure = Literal["oom", "kv_too_small"]

UNITS = {
    "b": 1,
    "byte": 1,
    "bytes": 1,
    "kib": 1 << 10,
    "kb": 1 << 10,
    "mib": 1 << 20,
    "mb": 1 << 20,
    "gib": 1 << 30,
    "gb": 1 << 30,
    "tib": 1 << 40,
    "tb": 1 << 40,
}
# a number and its unit: bounded digits, no nested quantifier (linear on any line)
SIZE = r"(\d{1,9}(?:[.,]\d{1,6})?)\s{0,3}(bytes|byte|[KMGT]i?B|B)\b"
MAX_BYTES = 1 << 50  # a petabyte: anything larger is not a GPU's memory, the line is garbage


def to_bytes(number: str, unit: str) -> int | None:
    """'2.00', 'GiB' → 2147483648; None where the value is out of any GPU's range."""
    value = float(number.replace(",", "."))
    out = round(value * UNITS[unit.lower()])
    return out if 0 <= out <= MAX_BYTES else None


def size_in(pattern: re.Pattern[str], line: str) -> int | None:
    """The first size `pattern` (with SIZE's two groups last) finds in `line`."""
    m = pattern.search(line)
    return to_bytes(m.group(m.lastindex - 1), m.group(m.lastindex)) if m and m.lastindex else None


@dataclass(frozen=True)
class GpuUse:
    """One GPU of an nvidia-smi table."""

    index: int
    name: str | None
    used_bytes: int
    total_bytes: int


@dataclass(frozen=True)
class LogReading:
    """What the log measured. `total_bytes` is the card's memory as the tool reported it (per card);
    `used_bytes` what was in use (by the process, or on the card for nvidia-smi); `failed_bytes` the
    allocation that failed; the rest what the engine printed of its own accounting."""

    kind: LogKind
    failure: Failure | None = None
    gpu_name: str | None = None
    gpu_count: int = 1
    total_bytes: int | None = None
    used_bytes: int | None = None
    free_bytes: int | None = None
    failed_bytes: int | None = None
    allocated_bytes: int | None = None  # PyTorch: allocated by tensors
    reserved_unused_bytes: int | None = None  # PyTorch: cached by the allocator, not allocated
    model: str | None = None  # as the log names it (a Hub id, a path, a GGUF's general.name)
    precision: str | None = None  # a hint: a GGUF type or a vLLM quantization
    context_length: int | None = None
    weights_bytes: int | None = None
    kv_cache_bytes: int | None = None
    kv_tokens: int | None = None
    kv_needed_bytes: int | None = None  # vLLM V1: the KV cache one request of max_model_len needs
    activation_bytes: int | None = None  # vLLM activation peak / llama.cpp compute buffer
    non_torch_bytes: int | None = None
    memory_utilization: float | None = None
    concurrency: float | None = None
    layers: tuple[int, int] | None = None  # llama.cpp: offloaded / total
    tensor_parallel: int | None = None
    gpus: tuple[GpuUse, ...] = field(default=())
    processes: tuple[tuple[int, str, int], ...] = field(default=())  # pid, name, bytes
