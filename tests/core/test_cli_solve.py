"""The JSON contract and the CLI for inverse questions and time & cost (as callers run it: JSON on stdin)."""

from __future__ import annotations

import json

from tests.core.test_cli import cli


def test_solve_for_over_the_json_contract() -> None:
    request = {
        "task": "inference",
        "model": "llama-3.1-8b",
        "gpus": ["rtx3090"],
        "solve_for": "context_length",
    }
    done = cli("estimate", "--json", stdin=json.dumps(request))
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    solved = result["solved"]
    assert solved["solve_for"] == "context_length" and solved["gpu"] == "rtx3090"
    assert result["request"]["context_length"] == solved["value"]
    # the answer is the longest context with the recommended headroom; a longer one fits only tight
    assert solved["value"] == solved["comfortable_value"] < solved["tight_value"]
    assert solved["next_value"] == solved["tight_value"] + 1
    assert solved["margin_bytes"] == solved["usable_bytes"] - solved["bytes_per_gpu"]
    assert result["target"]["verdict"] == "fits"


def test_cost_over_the_json_contract() -> None:
    request = {
        "task": "training",
        "model": "llama-3.1-8b",
        "method": "lora",
        "examples": 10000,
        "tokens_per_example": 1000,
        "epochs": 3,
    }
    done = cli("estimate", "--json", stdin=json.dumps(request))
    assert done.returncode == 0, done.stderr
    cost = json.loads(done.stdout)["cost"]
    assert cost["kind"] == "training" and cost["tokens"] == 30_000_000
    # LoRA: 4·N per token for the frozen base, + 2·N to recompute with checkpointing (on by default)
    assert cost["flops_factor"] == 6
    first = cost["options"][0]
    assert first["reason"] == "recommended" and first["hours_low"] < first["hours_high"]
    assert abs(first["cost_low"] - first["hours_low"] * first["price_per_hour"]) <= 0.01 * first["cost_low"]


def test_a_bad_solve_for_exits_2_naming_the_field() -> None:
    request = {"task": "inference", "model": "llama-3.1-8b", "solve_for": "speed"}
    done = cli("estimate", "--json", stdin=json.dumps(request))
    assert done.returncode == 2
    assert json.loads(done.stdout)["field"] == "solve_for"


def test_ask_answers_an_inverse_question_in_both_languages() -> None:
    ru = cli("ask", "сколько пользователей выдержит H100 с qwen2.5 32b awq при 8k")
    en = cli("ask", "--lang", "en", "how many users can H100 serve with qwen2.5 32b awq at 8k")
    assert ru.returncode == en.returncode == 0, ru.stderr + en.stderr
    assert ru.stdout.startswith("👥 До ") and "уже не влезет" in ru.stdout
    assert en.stdout.startswith("👥 Up to ") and "would not fit" in en.stdout
