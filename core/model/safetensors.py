"""Exact parameter counts from a checkpoint's safetensors header (tensor shapes and dtypes), as hf-mem
does, not from a guess; the header read with a bound on its size."""

from __future__ import annotations

import json
import math
import struct
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from core.errors import CoreError
from core.model.checks import ConfigRefused as ConfigRefused

# safetensors dtypes that pack several weights per element (GPTQ/AWQ int32, MXFP4/NF4 uint8):
# their element count is not the parameter count.
PACKED_DTYPES = frozenset({"I32", "U32", "U8", "I8", "F4", "F8_E8M0"})
# The safetensors header is JSON after an 8-byte little-endian length (safetensors format spec,
# https://github.com/huggingface/safetensors#format); the spec caps it at 100 MB.
_MAX_HEADER_BYTES = 100_000_000


def read_safetensors_header(source: bytes | Path) -> dict[str, Any]:
    """The JSON header of a .safetensors file (or of its first bytes)."""
    data = source if isinstance(source, bytes) else _read_head(source)
    if len(data) < 8:
        raise CoreError("not a safetensors file: shorter than its 8-byte header length", field="model")
    (length,) = struct.unpack("<Q", data[:8])
    if length > _MAX_HEADER_BYTES or len(data) < 8 + length:
        raise CoreError("not a safetensors file: bad header length", field="model")
    try:
        header: dict[str, Any] = json.loads(data[8 : 8 + length])
    except ValueError as e:
        raise CoreError(f"not a safetensors file: header is not JSON ({e})", field="model") from e
    return header


def _read_head(path: Path) -> bytes:
    with path.open("rb") as f:
        head = f.read(8)
        if len(head) < 8:
            return head
        (length,) = struct.unpack("<Q", head)
        return head + f.read(min(length, _MAX_HEADER_BYTES))


def parameter_counts(header: Mapping[str, Any]) -> dict[str, int]:
    """Elements per dtype in a safetensors header, e.g. {"BF16": 8030261248}."""
    counts: dict[str, int] = {}
    for name, tensor in header.items():
        if name == "__metadata__":
            continue
        counts[tensor["dtype"]] = counts.get(tensor["dtype"], 0) + math.prod(tensor["shape"])
    return counts
