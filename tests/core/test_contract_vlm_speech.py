"""The JSON contract for vision-language and speech requests (issue 22 items 3, 4), through the CLI as
callers use it: the new fields are optional, echoed filled, bounded, and the new breakdown keys sum."""

from __future__ import annotations

import json

from tests.core.test_cli import cli


def estimate_json(request: dict[str, object]) -> tuple[int, dict[str, object]]:
    done = cli("estimate", "--json", stdin=json.dumps(request))
    return done.returncode, json.loads(done.stdout)


def test_a_vision_request_round_trips() -> None:
    code, result = estimate_json(
        {"task": "inference", "model": "qwen2.5-vl-7b", "images_per_prompt": 2, "max_pixels": 1003520}
    )
    assert code == 0, result
    request, breakdown = result["request"], result["breakdown"]
    assert isinstance(request, dict) and isinstance(breakdown, dict)
    assert (request["images_per_prompt"], request["max_pixels"]) == (2, 1003520)
    assert breakdown["vision_encoder"] > 0
    assert sum(breakdown.values()) == result["total_bytes"]
    assert any(a["code"] == "vision_images" for a in result["assumptions"])  # type: ignore[union-attr]


def test_a_vision_request_fills_the_processor_default() -> None:
    code, result = estimate_json({"task": "inference", "model": "qwen2.5-vl-7b"})
    assert code == 0
    request = result["request"]
    assert isinstance(request, dict)
    assert (request["images_per_prompt"], request["max_pixels"]) == (0, 12845056)


def test_a_speech_request_round_trips() -> None:
    code, result = estimate_json({"task": "inference", "model": "whisper-large-v3", "precision": "int8"})
    assert code == 0, result
    request, breakdown = result["request"], result["breakdown"]
    assert isinstance(request, dict) and isinstance(breakdown, dict)
    assert (request["engine"], request["beam_size"]) == ("ctranslate2", 5)
    assert result["model"]["kind"] == "speech"  # type: ignore[index]
    assert set(breakdown) == {"weights", "speech_state", "overhead"}
    assert result["throughput"] == []


def test_old_requests_are_answered_as_before() -> None:
    """A request without the new fields echoes them as null (language models) and has no new keys."""
    code, result = estimate_json({"task": "inference", "model": "llama-3.1-8b"})
    assert code == 0
    request, breakdown = result["request"], result["breakdown"]
    assert isinstance(request, dict) and isinstance(breakdown, dict)
    assert request["images_per_prompt"] is None and request["beam_size"] is None
    assert "vision_encoder" not in breakdown and "speech_state" not in breakdown


def test_bad_values_name_their_field() -> None:
    for field, value in (("images_per_prompt", 65), ("max_pixels", 10), ("beam_size", 0)):
        code, error = estimate_json({"task": "inference", "model": "qwen2.5-vl-7b", field: value})
        assert code == 2 and error["field"] == field, (field, error)
    code, error = estimate_json({"task": "inference", "model": "llama-3.1-8b", "images_per_prompt": 1})
    assert code == 2 and error["field"] == "images_per_prompt"
