"""Realistic questions from ML engineers, Russian and English, read and answered end to end."""

from __future__ import annotations

import io
import json
from typing import Any

import pytest
from test_cli import cli

from core.catalogue.catalog import default_catalog
from core.cli import main
from core.parse import understand
from core.sizing.estimate import estimate

CATALOG = default_catalog()

PHRASES: list[tuple[str, dict[str, Any]]] = [
    (
        "сколько нужно видеопамяти чтобы дообучить qwen2.5 7b lora",
        {"task": "training", "model": "qwen2.5-7b", "method": "lora"},
    ),
    (
        "flux dev 1024x1024 4 картинки",
        {"task": "image_generation", "model": "flux.1-dev", "resolution": [1024, 1024], "images": 4},
    ),
    (
        "mixtral 8x7b q4_k_m 32k",
        {"model": "mixtral-8x7b", "precision": "q4_k_m", "context_length": 32768},
    ),
    (
        "deepseek r1 fp8 128k 16 users",
        {"model": "deepseek-r1", "precision": "fp8", "context_length": 131072, "concurrency": 16},
    ),
    (
        "wan 2.1 14b 81 кадр 720p",
        {"task": "video_generation", "model": "wan2.1-t2v-14b", "resolution": [1280, 720], "frames": 81},
    ),
    (
        "train 1b from scratch batch 32 seq 2048",
        {"task": "training", "model": "1B", "method": "full", "batch_size": 32, "seq_len": 2048},
    ),
    (
        "llama 3 70b int4 32k контекст 4 пользователя",
        {"model": "llama-3-70b", "precision": "int4", "context_length": 32768, "concurrency": 4},
    ),
    ("gpt-oss 120b", {"task": "inference", "model": "gpt-oss-120b"}),
    ("qlora llama 3.1 70b", {"task": "training", "model": "llama-3.1-70b", "method": "qlora"}),
    ("sdxl lora fine-tuning", {"task": "training", "model": "sdxl", "method": "lora"}),
    (
        "полное дообучение llama 3.1 8b на 8 картах zero3",
        {"task": "training", "model": "llama-3.1-8b", "method": "full", "num_gpus": 8, "sharding": "zero3"},
    ),
    ("мистраль 7б инференс 8к fp16", {"model": "mistral-7b", "precision": "fp16", "context_length": 8192}),
    ("лама 3 8б", {"task": "inference", "model": "llama-3-8b"}),
    ("квен 2.5 7b лора", {"task": "training", "model": "qwen2.5-7b", "method": "lora"}),
    ("дипсик р1 8 бит", {"model": "deepseek-r1", "precision": "int8"}),
    ("405 млрд fp8", {"model": "405B", "precision": "fp8"}),
    ("gemma 2 27b 8k", {"model": "gemma-2-27b", "context_length": 8192}),
    ("phi-3 mini 128k", {"model": "phi-3-mini", "context_length": 131072}),
    ("hunyuanvideo 720p 129 frames", {"task": "video_generation", "frames": 129}),
    ("dreambooth sd 1.5", {"task": "training", "model": "sd-1.5"}),
    ("llama 3.2 3b gptq", {"model": "llama-3.2-3b", "precision": "gptq-int4"}),
    ("dual 3090 llama 3.1 70b q4", {"model": "llama-3.1-70b", "num_gpus": 2, "gpus": ["rtx3090"]}),
    ("quad a100 llama 3.1 70b", {"model": "llama-3.1-70b", "num_gpus": 4}),
]


@pytest.mark.parametrize(("text", "expected"), PHRASES, ids=[p[0] for p in PHRASES])
def test_phrase_reads_as_meant_and_sizes(text: str, expected: dict[str, Any]) -> None:
    understood = understand(text, CATALOG)
    fields = understood.request.model_dump(mode="json")
    assert {k: fields[k] for k in expected} == expected
    result = estimate(understood.request, CATALOG)
    assert result.total_bytes > 0 and result.verdicts


def test_several_users_are_left_to_the_estimator_which_sizes_a_vllm_server_and_says_so_once() -> None:
    understood = understand("deepseek r1 fp8 128k 16 users", CATALOG)
    assert understood.request.engine is None and understood.notes == []  # the defaults decide
    result = estimate(understood.request, CATALOG)
    assert result.request.engine == "vllm"
    assert [a.code for a in [*understood.notes, *result.assumptions]].count("parse_serving_vllm") == 1
    # a named engine or a GGUF file keeps its own engine
    assert understand("llama 3 8b 4 users transformers", CATALOG).request.engine == "transformers"
    assert understand("llama 3 8b q4_k_m 4 users", CATALOG).request.engine is None
    assert understand("llama 3 8b", CATALOG).request.engine is None


def test_an_inference_batch_is_sequences_generated_together() -> None:
    request = understand("bert large inference batch 64", CATALOG).request
    assert (request.concurrency, request.engine) == (64, None)  # offline batch: no server assumed
    assert understand("lora llama 3 8b batch 8", CATALOG).request.batch_size == 8


def test_bits_in_russian_stay_bits() -> None:
    assert understand("llama 3 8b 4 бита", CATALOG).request.precision == "int4"


def test_ask_flags_a_configuration_outside_the_offers() -> None:
    # checkpointing off (on by default for decoders): 191 GB, more than any card we rent
    done = cli("ask", "train 1b from scratch batch 32 seq 2048 no gradient checkpointing", "--lang", "en")
    assert done.returncode == 0, done.stderr
    assert "not in our offers, contact us" in done.stdout


@pytest.mark.parametrize(
    ("stdin", "field"),
    [
        ("{not json", None),
        ('["a list"]', None),
        ('{"task": "inference", "model": "llama-3.1-8b", "colour": "red"}', "colour"),
        ('{"task": "inference", "model": "llama-3.1-8b", "precision": "int3"}', "precision"),
        ('{"task": "cooking", "model": "llama-3.1-8b"}', "task"),
        ('{"task": "inference", "model": "99999999B"}', "model"),
        ('{"task": "inference", "model": "no-such-model-xyz"}', "model"),
        ('{"task": "inference", "model": "llama-3.1-8b", "context_length": 0}', "context_length"),
        ('{"task": "inference", "model": "llama-3.1-8b", "num_gpus": 100000}', "num_gpus"),
        ('{"task": "inference", "model": {"params_b": 7, "layers": -1}}', "model.layers"),
        ('{"model": "llama-3.1-8b"}', "task"),
        ('{"task": "image_generation", "model": "llama-3.1-8b"}', "task"),
        ('{"task": "image_generation", "model": "sdxl", "resolution": [0, 0]}', "resolution"),
        ('{"task": "image_generation", "model": "sdxl", "resolution": [100000, 100000]}', "resolution"),
        ('{"task": "inference", "model": "llama-3.1-8b", "gpus": ["no-such-gpu"]}', "gpus"),
        (
            '{"task": "inference", "model": "llama-3.1-8b", "engine": "llama.cpp", "precision": "awq-int4"}',
            "precision",
        ),
        ('{"task": "training", "model": "llama-3.1-8b", "precision": "q4_k_m"}', "precision"),
    ],
)
def test_every_invalid_input_exits_2_with_error_and_field(stdin: str, field: str | None) -> None:
    out = io.StringIO()
    assert main(["estimate", "--json"], stdin=io.StringIO(stdin), stdout=out) == 2, out.getvalue()
    body = json.loads(out.getvalue())
    assert set(body) == {"error", "field"} and body["error"]
    assert body["field"] == field


def _listing(command: str) -> list[str]:
    out = io.StringIO()
    assert main([command], stdout=out) == 0
    return out.getvalue().splitlines()


def test_listings_have_a_header_and_the_columns_people_compare() -> None:
    gpus = _listing("gpus")
    assert gpus[0].split()[:2] == ["id", "name"] and "fp8" in gpus[0] and "offered" in gpus[0]
    h200 = next(line for line in gpus if line.startswith("h200 "))
    assert "GiB" in h200 and "GB/s" in h200 and "1/2/4/8×" in h200
    assert next(line for line in gpus if line.startswith("t4 ")).rstrip().endswith("-")  # not offered
    models = _listing("models")
    assert "ships" in models[0]
    gpt_oss = next(line for line in models if line.startswith("gpt-oss-120b "))
    assert "mxfp4" in gpt_oss and "5.1B" in gpt_oss and "128k" in gpt_oss
