"""A GPU of the catalogue (`core/data/gpus.toml`): its memory, bandwidth, compute, interconnect and the
formats its tensor cores run."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field


class GpuSpec(BaseModel):
    model_config = ConfigDict(extra="forbid")

    id: str = Field(pattern=r"^[a-z0-9][a-z0-9._-]*$")
    name: str
    short_name: str | None = Field(
        default=None, min_length=1, description="as answers name it; default: name"
    )
    aliases: list[str] = Field(default_factory=list)
    vendor: Literal["nvidia", "amd"] = "nvidia"
    marketing_memory_gb: float = Field(gt=0, description="the number on the box")
    usable_bytes: int = Field(gt=0, description="total memory as the driver reports it (nvidia-smi)")
    bandwidth_gb_s: float = Field(gt=0, description="memory bandwidth, GB/s (10^9)")
    bf16: bool
    fp8: bool
    fp16_tflops: float | None = Field(default=None, gt=0, description="dense tensor-core TFLOPS")
    fp8_tflops: float | None = Field(default=None, gt=0, description="dense FP8 tensor-core TFLOPS")
    interconnect: Literal["nvlink", "pcie", "infinity_fabric"] = "pcie"
    same_compute_as: str | None = Field(
        default=None,
        description="another card with the same chip and clocks (fp16/fp8 TFLOPS and bandwidth equal, "
        "checked at load): compute-bound published figures of that card serve this one (core.inverse.cost)",
    )
    datacenter: bool = False
    source: str
