"""Offload to RAM through the public doors (issue 22): the JSON contract over the CLI, the phrases users
type, and the answer every layout reads, in Russian and English."""

from __future__ import annotations

import json

import pytest
from pydantic import ValidationError

from core.catalogue.catalog import default_catalog
from core.contract import Request
from core.inverse.solve import run
from core.language.answer import build_answer
from core.layouts.plain import layout
from core.parse import parse
from tests.core.cli_runner import cli

CATALOG = default_catalog()


def test_estimate_json_fills_the_offload() -> None:
    request = {"task": "inference", "model": "qwen3-235b-a22b", "gpus": ["rtx4090-48gb"]}
    request["offload"] = "experts"
    done = cli("estimate", "--json", stdin=json.dumps(request))
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    off = result["offload"]
    assert result["request"]["engine"] == "llama.cpp" and result["request"]["precision"] == "q4_k_m"
    assert result["request"]["n_cpu_moe"] == off["n_cpu_moe"] > 0
    assert off["bytes_per_gpu"] == result["total_bytes"] < off["full_gpu_bytes_per_gpu"]
    assert off["tokens_per_s"] > 0 and off["speed_source"]


def test_estimate_json_solves_for_gpu_layers() -> None:
    request = {
        "task": "inference",
        "model": "llama-3.1-70b",
        "precision": "q4_k_m",
        "gpus": ["rtx4090"],
        "solve_for": "gpu_layers",
    }
    done = cli("estimate", "--json", stdin=json.dumps(request))
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    assert result["solved"]["solve_for"] == "gpu_layers"
    assert result["solved"]["value"] == result["request"]["gpu_layers"] == result["offload"]["gpu_layers"]


def test_a_request_without_offload_has_none() -> None:
    result = run({"task": "inference", "model": "llama-3.1-8b"}, CATALOG)
    assert result.offload is None
    assert result.request.gpu_layers is None and result.request.n_cpu_moe is None


@pytest.mark.parametrize(
    "field, value",
    [
        ("gpu_layers", -1),
        ("gpu_layers", 1002),
        ("n_cpu_moe", -1),
        ("offload", "disk"),
        ("ram_bandwidth_gb_s", 0),
    ],
)
def test_offload_fields_are_bounded(field: str, value: object) -> None:
    with pytest.raises(ValidationError) as e:
        Request.model_validate({"task": "inference", "model": "llama-3.1-8b", field: value})
    assert e.value.errors()[0]["loc"] == (field,)


@pytest.mark.parametrize(
    "text, fields",
    [
        ("qwen3 235b q4 на 4090 с выгрузкой в оперативку", {"offload": "auto"}),
        ("gpt-oss-120b --n-cpu-moe on 2x4090", {"offload": "experts", "num_gpus": 2}),
        ("gpt-oss-120b --n-cpu-moe 20 on 4090 48gb", {"n_cpu_moe": 20}),
        ("сколько слоёв влезет на 4090 для llama 3.1 70b q4", {"offload": "layers"}),
        ("llama 3.1 70b q4_k_m -ngl 40 на 4090", {"gpu_layers": 40}),
        ("qwen3 235b on rtx 4090 48gb offload to RAM", {"offload": "auto"}),
        ("glm 4.5 air на 4090 48 с экспертами в оперативке", {"offload": "experts"}),
        ("gpt-oss-120b -ot exps=CPU на 4090", {"offload": "experts"}),
    ],
)
def test_phrases_as_users_type_them(text: str, fields: dict[str, object]) -> None:
    request = parse(text, CATALOG)
    for name, value in fields.items():
        assert getattr(request, name) == value, (text, name)


def test_flux_offload_to_ram_stays_the_diffusers_cpu_offload() -> None:
    result = run({"task": "image_generation", "model": "flux.1-dev", "offload": "auto"}, CATALOG)
    assert result.offload is None and result.request.cpu_offload == "model"


@pytest.mark.parametrize("lang, words", [("ru", "в оперативке"), ("en", "in RAM")])
def test_the_answer_leads_with_the_split_and_the_speed(lang: str, words: str) -> None:
    result = run(
        {"task": "inference", "model": "qwen3-235b-a22b", "gpus": ["rtx4090-48gb"], "offload": "experts"},
        CATALOG,
    )
    answer = build_answer(result, lang)
    first, memory, speed = answer.solved[:3]
    assert words in first and "--n-cpu-moe" in first
    assert "GPU" in memory and "llmfit" in speed
    text = layout(answer)
    assert text.startswith(first)
    assert "offload-" not in text  # every message key resolved


@pytest.mark.parametrize("lang", ["ru", "en"])
def test_a_does_not_fit_answer_offers_the_sized_offload(lang: str) -> None:
    result = run({"task": "inference", "model": "qwen3-235b-a22b", "gpus": ["rtx4090-48gb"]}, CATALOG)
    offload = [m for m in result.mitigations if m.action == "offload_experts"]
    assert offload and offload[0].fits and int(offload[0].params["n_cpu_moe"]) > 0
    assert 0 < float(offload[0].params["tokens_per_s"]) < 42
    text = layout(build_answer(result, lang))
    assert "--n-cpu-moe" in text and ("tokens/s" in text or "токенов/с" in text)
