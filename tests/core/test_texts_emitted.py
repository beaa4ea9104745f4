"""Every assumption `code` and mitigation `action` the estimator emits has a ru and an en text.

Two nets: a sweep of representative requests collects what is actually emitted, with its params,
and each text must format in both languages without Fluent errors; a scan of the sources catches
codes the sweep does not reach (Hugging Face lookups, rare branches).
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from core.catalogue.catalog import default_catalog
from core.contract import Result
from core.language.words import LANGUAGES, message_ids, translate
from core.sizing.estimate import estimate

CORE = Path(__file__).resolve().parents[2] / "core"

SMALL = ["t4"]  # one 16 GB card: most requests do not fit, so mitigations are offered
SWEEP: list[dict[str, Any]] = [
    # inference
    {"task": "inference", "model": "llama-3.1-8b"},
    {"task": "inference", "model": "llama-3.1-8b", "precision": "awq-int4", "context_length": 200_000},
    {"task": "inference", "model": "llama-3.1-8b", "precision": "q4_k_m"},
    {"task": "inference", "model": "llama-3.1-70b", "engine": "vllm", "num_gpus": 2, "concurrency": 8},
    {
        "task": "inference",
        "model": "llama-3.1-70b",
        "concurrency": 16,
        "context_length": 32768,
        "gpus": SMALL,
    },
    {"task": "inference", "model": "llama-3.1-70b", "cpu_offload": "model"},
    {"task": "inference", "model": "mixtral-8x7b", "precision": "fp8"},
    {"task": "inference", "model": "qwen3-30b-a3b", "precision": "nf4"},
    {"task": "inference", "model": "deepseek-v3", "precision": "int4", "gpus": SMALL},
    {"task": "inference", "model": "13B"},
    {"task": "inference", "model": "8x3b"},
    {"task": "inference", "model": {"params_b": 7}},
    {"task": "inference", "model": {"params_b": 7, "layers": 32, "hidden_size": 4096, "attention_heads": 32}},
    {"task": "inference", "model": {"params_b": 47, "experts": 8}},
    {"task": "inference", "model": "meta-llama/Llama-3.1-8B-Instruct-AWQ"},
    # training: full, LoRA, QLoRA, multi-GPU, offload, not fitting
    {"task": "training", "model": "llama-3.1-8b"},
    {"task": "training", "model": "llama-3.1-8b", "gradient_checkpointing": True, "seq_len": 256},
    {"task": "training", "model": "llama-3.1-8b", "gradient_accumulation_steps": 4, "attention": "eager"},
    {"task": "training", "model": "llama-3.1-8b", "method": "lora", "gpus": SMALL},
    {"task": "training", "model": "llama-3.1-8b", "method": "qlora", "precision": "bf16"},
    {"task": "training", "model": "llama-3.1-8b", "method": "qlora", "engine": "unsloth"},
    {"task": "training", "model": "llama-3.1-70b", "num_gpus": 8, "sharding": "zero3"},
    {"task": "training", "model": "llama-3.1-70b", "num_gpus": 2, "sharding": "zero2", "gpus": SMALL},
    {"task": "training", "model": "llama-3.1-70b", "gpus": SMALL},
    {"task": "training", "model": "llama-3.1-8b", "cpu_offload": "sequential", "optimizer": "adafactor"},
    {"task": "training", "model": "bert-large", "precision": "fp32", "mixed_precision": "none"},
    {"task": "training", "model": "flux.1-dev", "method": "lora"},
    # image and video
    {"task": "image_generation", "model": "flux.1-dev"},
    {"task": "image_generation", "model": "sdxl", "images": 8, "gpus": SMALL},
    {"task": "image_generation", "model": "flux.1-dev", "images": 4, "gpus": SMALL},
    {"task": "image_generation", "model": "sd-3.5-large", "cpu_offload": "sequential", "vae_tiling": True},
    {"task": "video_generation", "model": "wan2.1-t2v-14b", "gpus": SMALL},
    {"task": "video_generation", "model": "hunyuanvideo", "frames": 129, "cpu_offload": "model"},
]


def _emitted() -> list[tuple[str, dict[str, Any]]]:
    catalog = default_catalog()
    out: list[tuple[str, dict[str, Any]]] = []
    for request in SWEEP:
        result: Result = estimate(request, catalog)
        out += [(f"assumption-{a.code}", a.params) for a in result.assumptions]
        out += [(f"action-{m.action}", m.params) for m in result.mitigations]
    return out


EMITTED = _emitted()


def test_the_sweep_reaches_the_branches_that_matter() -> None:
    keys = {key for key, _ in EMITTED}
    for expected in (
        "assumption-training_peak_backward",
        "assumption-training_peak_optimizer_step",
        "assumption-training_peak_accumulation",
        "assumption-cfg_single_pass",
        "assumption-cfg_double_batch",
        "assumption-cpu_offload_layers",
        "assumption-cpu_offload_zero",
        "assumption-cpu_offload_slow",
        "assumption-typical_moe",
        "assumption-custom_mha",
        "action-use_qlora",
        "action-vae_tiling",
        "action-shorten_context",
    ):
        assert expected in keys, expected


@pytest.mark.parametrize("lang", LANGUAGES)
def test_every_emitted_code_has_a_text_that_formats(lang: str) -> None:
    missing = sorted({key for key, _ in EMITTED if key not in message_ids(lang)})
    assert not missing, f"{lang}: no text for {missing}"
    broken = sorted({key for key, params in EMITTED if translate(key, lang, **params) is None})
    assert not broken, f"{lang}: Fluent errors formatting {broken}"


def _source_codes() -> set[str]:
    """Codes written literally in the estimator's sources (`note("x"`, `code="x"`, `add("x"`)."""
    keys: set[str] = set()
    for path in CORE.rglob("*.py"):
        text = path.read_text(encoding="utf-8")
        keys |= {f"assumption-{c}" for c in re.findall(r'\b_?note\(\s*"([a-z0-9_]+)"', text)}
        keys |= {f"assumption-{c}" for c in re.findall(r'\bcode="([a-z0-9_]+)"', text)}
        keys |= {f"action-{c}" for c in re.findall(r'\badd\(\s*"([a-z0-9_]+)"', text)}
        keys |= {f"action-{c}" for c in re.findall(r'\(\s*"(quantize_[a-z0-9_]+)"', text)}
    return keys


@pytest.mark.parametrize("lang", LANGUAGES)
def test_every_code_in_the_sources_has_a_text(lang: str) -> None:
    codes = _source_codes()
    assert len(codes) > 40
    missing = sorted(codes - message_ids(lang))
    assert not missing, f"{lang}: no text for {missing}"
