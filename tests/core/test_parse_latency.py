"""A load and a first-token target in free text, as users type them (ru, en)."""

from __future__ import annotations

import pytest

from core.inverse.solve import run
from core.parse import understand


@pytest.mark.parametrize(
    ("text", "rps", "target"),
    [
        ("10 rps under 2s llama 3.1 8b", 10, 2),
        ("10 RPS at under 2 s llama 3.1 8b on h100", 10, 2),
        ("llama 3.1 8b, 50 requests per second, first token within 500 ms", 50, 0.5),
        ("10 запросов в секунду, ответ быстрее 2 секунд, llama 3.1 8b", 10, 2),
        ("llama 3.1 8b 5 req/s", 5, None),
        ("qwen 2.5 7b 20 запросов/с первый токен до 1 с", 20, 1),
        ("llama 3.1 8b ttft < 300 ms", None, 0.3),
    ],
)
def test_load_read(text: str, rps: float | None, target: float | None) -> None:
    request = understand(text).request
    assert request.requests_per_second == rps
    assert request.ttft_target_s == target


def test_a_time_alone_is_no_target() -> None:
    request = understand("llama 3.1 8b за 2 секунды").request
    assert request.ttft_target_s is None and request.requests_per_second is None


def test_training_drops_the_load() -> None:
    request = understand("дообучение llama 3.1 8b lora 10 rps").request
    assert request.requests_per_second is None


def test_phrase_answered_with_cards() -> None:
    result = run(understand("10 rps under 2s llama 3.1 8b").request)
    assert result.latency is not None and result.latency.cards and result.latency.met
