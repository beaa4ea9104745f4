"""Inverse questions and time & cost as people type them, ru and en: what the parser reads."""

from __future__ import annotations

from typing import Any

import pytest

from core.parse import parse, understand

CASES: list[tuple[str, dict[str, Any]]] = [
    (
        "какой максимальный контекст влезет в 4090 48 для llama 3.1 8b",
        {"solve_for": "context_length", "gpus": ["rtx4090-48gb"], "model": "llama-3.1-8b"},
    ),
    (
        "сколько пользователей выдержит H100 с qwen2.5 32b awq при 8k",
        {"solve_for": "concurrency", "context_length": 8192, "precision": "awq-int4", "gpus": ["h100-sxm"]},
    ),
    (
        "how many users can H100 serve with llama 3.1 70b int4 at 8k",
        {"solve_for": "concurrency", "context_length": 8192, "model": "llama-3.1-70b"},
    ),
    ("какой батч влезет на 4090 48 для lora llama 3.1 8b", {"solve_for": "batch_size", "method": "lora"}),
    ("максимальный контекст для qlora llama 3.1 8b на 3090", {"solve_for": "seq_len", "method": "qlora"}),
    ("какая точность влезет на 3090 для llama 3.1 70b", {"solve_for": "precision", "gpus": ["rtx3090"]}),
    (
        "какую самую большую модель можно запустить на 24 ГБ",
        {"solve_for": "model", "model": "*", "memory_gb": 24.0},
    ),
    ("largest model that fits 24gb", {"solve_for": "model", "model": "*", "memory_gb": 24.0}),
    ("самая большая qwen на 4090 48", {"solve_for": "model", "gpus": ["rtx4090-48gb"]}),
    (
        "сколько будет стоить дообучение llama 3.1 8b на 10000 примеров по 1000 токенов, 3 эпохи",
        {"task": "training", "method": "lora", "examples": 10000, "tokens_per_example": 1000, "epochs": 3.0},
    ),
    (
        "сколько стоит обучить llama 3.1 8b на 1B токенов",
        {"task": "training", "model": "llama-3.1-8b", "dataset_tokens": 10**9},
    ),
    (
        "how long to fine-tune llama 3.1 8b on 50k examples of 2k tokens",
        {"examples": 50_000, "tokens_per_example": 2000},
    ),
    ("сколько стоит обслуживать 10 000 запросов в день на llama 3.1 8b", {"requests_per_day": 10_000}),
    ("how much do 1000 images with flux dev cost", {"outputs": 1000, "model": "flux.1-dev"}),
    ("стоимость генерации картинок sdxl", {"outputs": 1000}),
]


@pytest.mark.parametrize(("text", "expected"), CASES)
def test_the_question_is_read(text: str, expected: dict[str, Any]) -> None:
    fields = parse(text).model_dump(mode="json", exclude_defaults=True)
    assert {k: fields.get(k) for k in expected} == expected


@pytest.mark.parametrize(
    "text",
    [
        "llama 3.1 8b int4 32k 4 пользователя",
        "qlora llama 3.1 70b 8k",
        "sdxl 4 картинки 1024",
        "llama 3.2 1b",
    ],
)
def test_plain_questions_stay_plain(text: str) -> None:
    request = parse(text)
    assert request.solve_for is None
    assert request.dataset_tokens is request.examples is request.outputs is request.requests_per_day is None


def test_a_context_question_does_not_keep_the_context_it_asks_for() -> None:
    request = parse("какой максимальный контекст влезет на 3090 для llama 3.1 8b 8k")
    assert request.solve_for == "context_length" and request.context_length is None


@pytest.mark.parametrize(
    ("text", "code"),
    [
        ("сколько будет стоить дообучение llama 3.1 8b", "parse_cost_needs_dataset"),
        ("how much does serving llama 3.1 8b cost", "parse_cost_needs_requests"),
    ],
)
def test_a_cost_question_without_the_work_asks_for_it(text: str, code: str) -> None:
    understood = understand(text)
    assert code in {n.code for n in understood.notes}
    assert understood.request.examples is understood.request.requests_per_day is None


def test_a_priced_question_does_not_ask() -> None:
    notes = understand("сколько стоит обучить llama 3.1 8b на 1B токенов").notes
    assert not {n.code for n in notes} & {"parse_cost_needs_dataset", "parse_cost_needs_requests"}
