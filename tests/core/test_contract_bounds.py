"""Bounds of the contract: an architecture given in a request is bounded and consistent with its
parameter count, numbers are finite, and a model is not split across more GPUs than it can be."""

from __future__ import annotations

import math
from typing import Any

import pytest

from core.contract import (
    MAX_EXPERTS,
    MAX_HEAD_DIM,
    MAX_HEADS,
    MAX_HIDDEN_SIZE,
    MAX_INTERMEDIATE_SIZE,
    MAX_LAYERS,
    MAX_VOCAB_SIZE,
    Engine,
    Task,
    max_model_split,
)
from core.errors import CoreError
from core.sizing.estimate import estimate

# Published architectures (config.json): each must pass the consistency checks.
REAL = {
    "gpt2": {"params_b": 0.124, "layers": 12, "hidden_size": 768, "vocab_size": 50257, "attention_heads": 12},
    "llama-3.1-8b": {
        "params_b": 8.03, "layers": 32, "hidden_size": 4096, "attention_heads": 32, "kv_heads": 8,
        "intermediate_size": 14336, "vocab_size": 128256,
    },
    "llama-3.1-405b": {
        "params_b": 405, "layers": 126, "hidden_size": 16384, "attention_heads": 128, "kv_heads": 8,
        "intermediate_size": 53248, "vocab_size": 128256,
    },
    "gemma-2-2b": {
        "params_b": 2.61, "layers": 26, "hidden_size": 2304, "attention_heads": 8, "kv_heads": 4,
        "head_dim": 256, "vocab_size": 256000, "tied_embeddings": True,
    },
    "deepseek-v3": {
        "params_b": 671, "layers": 61, "hidden_size": 7168, "attention_heads": 128, "kv_heads": 128,
        "vocab_size": 129280, "experts": 256, "active_experts": 8,
    },
}  # fmt: skip


def error_of(request: dict[str, Any]) -> CoreError:
    with pytest.raises(CoreError) as caught:
        estimate(request)
    return caught.value


def custom(task: str = "inference", **arch: Any) -> dict[str, Any]:
    return {"task": task, "model": {"params_b": 7, **arch}}


@pytest.mark.parametrize("name", REAL)
def test_published_architectures_pass(name: str) -> None:
    result = estimate({"task": "inference", "model": REAL[name]})
    assert result.total_bytes > 0


@pytest.mark.parametrize(
    ("field", "maximum"),
    [
        ("layers", MAX_LAYERS),
        ("hidden_size", MAX_HIDDEN_SIZE),
        ("attention_heads", MAX_HEADS),
        ("kv_heads", MAX_HEADS),
        ("head_dim", MAX_HEAD_DIM),
        ("intermediate_size", MAX_INTERMEDIATE_SIZE),
        ("vocab_size", MAX_VOCAB_SIZE),
        ("experts", MAX_EXPERTS),
        ("active_experts", MAX_EXPERTS),
    ],
)
def test_each_architecture_field_is_bounded(field: str, maximum: int) -> None:
    error = error_of(custom(**{field: maximum + 1}))
    assert error.field == f"model.{field}"
    assert str(maximum) in error.message
    assert error_of(custom(**{field: 10**400})).field == f"model.{field}"


def test_the_bounds_are_far_past_real_models_and_still_finite() -> None:
    """At every maximum at once the estimate is a finite number, not an OverflowError."""
    request = {
        "task": "inference",
        "model": {
            "params_b": 20_000, "layers": MAX_LAYERS, "hidden_size": MAX_HIDDEN_SIZE,
            "attention_heads": MAX_HEADS, "kv_heads": MAX_HEADS, "head_dim": MAX_HEAD_DIM,
            "intermediate_size": MAX_INTERMEDIATE_SIZE, "vocab_size": MAX_VOCAB_SIZE,
            "experts": MAX_EXPERTS, "active_experts": MAX_EXPERTS,
        },
        "context_length": 10_000_000,
        "concurrency": 100_000,
    }  # fmt: skip
    result = estimate(request)
    assert result.total_bytes > 0 and math.isfinite(float(result.total_bytes))


def test_layers_times_hidden_squared_far_above_params_is_refused() -> None:
    error = error_of(custom(layers=32, hidden_size=40_000))  # 51 B weights in a "7 B" model
    assert error.field == "model.hidden_size"
    assert "layers × hidden_size²" in error.message and "params_b = 7B" in error.message
    estimate(custom(layers=32, hidden_size=4096))  # 0.5 B of the 7: fine


def test_vocab_times_hidden_far_above_params_is_refused() -> None:
    error = error_of(custom(hidden_size=4096, vocab_size=4_000_000))  # a 16 B embedding
    assert error.field == "model.vocab_size" and "vocab_size × hidden_size" in error.message


def test_heads_and_experts_are_consistent() -> None:
    assert error_of(custom(attention_heads=8, kv_heads=16)).field == "model.kv_heads"
    assert error_of(custom(experts=8, active_experts=9)).field == "model.active_experts"


@pytest.mark.parametrize("value", [float("inf"), float("-inf"), float("nan")])
def test_numbers_must_be_finite(value: float) -> None:
    assert error_of({"task": "inference", "model": {"params_b": value}}).field == "model.params_b"
    request = {"task": "inference", "model": "llama-3.1-8b", "context_length": value}
    assert error_of(request).field == "context_length"


def test_more_gpus_than_layers_is_refused_for_inference() -> None:
    error = error_of({**custom(layers=4), "num_gpus": 8})
    assert error.field == "num_gpus" and "4 layers" in error.message
    assert estimate({**custom(layers=4), "num_gpus": 4}).request.num_gpus == 4  # one layer each


def test_vllm_is_limited_by_attention_heads() -> None:
    request = {**custom(layers=32, attention_heads=32), "engine": "vllm", "num_gpus": 64}
    error = error_of(request)
    assert error.field == "num_gpus" and "32 attention heads" in error.message
    estimate({**custom(layers=2, attention_heads=32, kv_heads=8), "engine": "vllm", "num_gpus": 8})


def test_training_shards_tensors_so_any_gpu_count_is_allowed() -> None:
    request = {**custom("training", layers=4), "num_gpus": 64, "sharding": "fsdp"}
    assert estimate(request).request.num_gpus == 64


def test_max_model_split() -> None:
    assert max_model_split(Task.INFERENCE, None, 32, 64) == 32
    assert max_model_split(Task.INFERENCE, Engine.LLAMA_CPP, 32, 64) == 32
    assert max_model_split(Task.INFERENCE, Engine.VLLM, 32, 64) == 64
    assert max_model_split(Task.INFERENCE, None, None, None) is None
    for task in (Task.TRAINING, Task.IMAGE_GENERATION, Task.VIDEO_GENERATION):
        assert max_model_split(task, None, 4, 4) is None


def test_a_catalogue_model_is_not_split_over_more_gpus_than_it_has_heads() -> None:
    from core.errors import EstimateError
    from core.sizing.estimate import estimate

    with pytest.raises(EstimateError) as caught:
        estimate({"task": "inference", "model": "llama-3.1-8b", "engine": "vllm", "num_gpus": 64})
    assert caught.value.field == "num_gpus" and "32" in caught.value.message
    assert estimate({"task": "inference", "model": "llama-3.1-8b", "num_gpus": 8}).request.num_gpus == 8
