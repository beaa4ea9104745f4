"""Pasted logs: a PyTorch CUDA OOM, an nvidia-smi table, a vLLM or llama.cpp start-up log, read into
a `LogReading` (`parse.read_log`) and answered from what it measured (`advice.advise_log`)."""

from .parse import MAX_LOG_CHARS, is_pasted_log, looks_like_log, read_log
from .reading import GpuUse, LogReading

__all__ = ["MAX_LOG_CHARS", "GpuUse", "LogReading", "is_pasted_log", "looks_like_log", "read_log"]
