"""The answer's range is the measured error of its workload class (core/data/accuracy.toml):
inside the class's measured parameters it is ± the class's p90 |error|; outside them it is wider and
an assumption says so; a class with too few measured cases takes the overall p90 and says that."""

from __future__ import annotations

import copy

import pytest

import core.sizing.accuracy
from core.catalogue.load import read_toml
from core.errors import CatalogError
from core.sizing.accuracy import (
    ACCURACY_FILE,
    MIN_CLASS_CASES,
    MIN_UNCERTAINTY,
    OUTSIDE_RANGE_FACTOR,
    load_accuracy,
    parse_accuracy,
    workload_class,
)
from core.sizing.estimate import estimate, parse_request

ACC = load_accuracy()


def _half_width(result_total: int, high: int) -> float:
    return (high - result_total) / result_total


def _codes(result: object) -> list[str]:
    return [a.code for a in result.assumptions]  # type: ignore[attr-defined]


def test_a_request_inside_its_class_gets_the_class_p90() -> None:
    cls = ACC.by_id("inference-transformers")
    assert cls is not None and cls.cases >= MIN_CLASS_CASES and cls.p90_abs_error is not None
    assert cls.params_b and cls.tokens and cls.params_b[0] <= 7.6 <= cls.params_b[1]
    result = estimate({"task": "inference", "model": "qwen2.5-7b", "context_length": 8192})
    expected = max(cls.p90_abs_error, MIN_UNCERTAINTY)
    assert _half_width(result.total_bytes, result.range.high_bytes) == pytest.approx(expected, abs=1e-6)
    assert "outside_measured_range" not in _codes(result)


def test_a_request_outside_the_measured_range_says_so_and_widens() -> None:
    cls = ACC.by_id("inference-transformers")
    assert cls is not None and cls.tokens is not None and cls.p90_abs_error is not None
    context = int(cls.tokens[1]) * 4  # past the longest context measured
    result = estimate({"task": "inference", "model": "qwen2.5-7b", "context_length": context})
    notes = [a for a in result.assumptions if a.code == "outside_measured_range"]
    assert [n.params["dimension"] for n in notes] == ["tokens"]
    assert "widened" in notes[0].text
    expected = max(cls.p90_abs_error, MIN_UNCERTAINTY) * OUTSIDE_RANGE_FACTOR
    assert _half_width(result.total_bytes, result.range.high_bytes) == pytest.approx(expected, abs=1e-6)


def test_a_class_with_few_cases_takes_the_overall_p90_and_says_so(monkeypatch: pytest.MonkeyPatch) -> None:
    thin = ACC.model_copy(deep=True)
    for c in thin.classes:
        if c.id == "inference-transformers":
            c.cases = MIN_CLASS_CASES - 1
    monkeypatch.setattr(core.sizing.accuracy, "load_accuracy", lambda: thin)
    result = estimate({"task": "inference", "model": "qwen2.5-7b", "context_length": 8192})
    notes = [a for a in result.assumptions if a.code == "few_measured_cases"]
    assert len(notes) == 1 and notes[0].params["cases"] == MIN_CLASS_CASES - 1
    expected = max(ACC.overall.p90_abs_error, MIN_UNCERTAINTY)
    assert _half_width(result.total_bytes, result.range.high_bytes) == pytest.approx(expected, abs=1e-6)


@pytest.mark.parametrize(
    ("request_", "class_id"),
    [
        ({"task": "inference", "model": "llama-3.1-8b"}, "inference-transformers"),
        ({"task": "inference", "model": "llama-3.1-8b", "concurrency": 8}, "inference-vllm"),
        ({"task": "inference", "model": "llama-3.1-8b", "engine": "llama.cpp"}, "inference-llama-cpp"),
        ({"task": "training", "model": "llama-3.1-8b", "method": "qlora"}, "training-qlora"),
        ({"task": "training", "model": "llama-3.1-8b"}, "training-full"),
        ({"task": "image_generation", "model": "sdxl"}, "image"),
        ({"task": "video_generation", "model": "wan2.1-t2v-1.3b"}, "video"),
    ],
)
def test_workload_classes(request_: dict[str, object], class_id: str) -> None:
    assert workload_class(estimate(request_).request) == class_id


def test_the_accuracy_file_is_validated_naming_the_bad_row() -> None:
    raw = copy.deepcopy(read_toml(ACCURACY_FILE))
    parse_accuracy(raw)  # the committed file is valid
    del raw["class"][1]["p90_abs_error"]
    with pytest.raises(CatalogError, match=r"\[\[class\]\] row 2 \(id='inference-vllm'\)"):
        parse_accuracy(raw)


def test_an_interval_upside_down_is_rejected() -> None:
    raw = copy.deepcopy(read_toml(ACCURACY_FILE))
    raw["class"][0]["params_b"] = [70.0, 1.0]
    with pytest.raises(CatalogError, match="params_b: low above high"):
        parse_accuracy(raw)


def test_parse_request_classifies_unfilled_requests_by_their_task() -> None:
    assert (
        workload_class(parse_request({"task": "training", "model": "x", "method": "lora"})) == "training-lora"
    )
