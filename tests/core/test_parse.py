"""Free text → Request: real phrases in Russian and English, and the errors that ask one question."""

from __future__ import annotations

from typing import Any

import pytest

from core.catalogue.catalog import Catalog, default_catalog
from core.catalogue.gpus import GpuSpec
from core.catalogue.models import ModelSpec, PipelineComponent
from core.catalogue.offers import RentalOffer
from core.contract import Precision, Request, Task
from core.errors import ParseError
from core.parse import (
    parse,
    parse_context,
    parse_count,
    parse_partial,
    parse_resolution,
    parse_size_b,
    understand,
)


def _llm(model_id: str, name: str, params_b: float, family: str, **extra: Any) -> ModelSpec:
    return ModelSpec(
        id=model_id,
        name=name,
        family=family,
        kind="llm",
        source="test",
        params_b=params_b,
        layers=32,
        hidden_size=4096,
        attention_heads=32,
        kv_heads=8,
        vocab_size=32000,
        **extra,
    )


def _pipeline(model_id: str, name: str, kind: str, family: str, aliases: list[str]) -> ModelSpec:
    denoiser = PipelineComponent(name="denoiser", role="denoiser", params_b=2.6, precision="fp16")
    return ModelSpec(
        id=model_id,
        name=name,
        family=family,
        kind=kind,
        source="test",
        params_b=3.0,
        aliases=aliases,
        components=[denoiser],
    )


def _gpu(gpu_id: str, name: str, aliases: list[str]) -> GpuSpec:
    return GpuSpec(
        id=gpu_id,
        name=name,
        aliases=aliases,
        marketing_memory_gb=80,
        usable_bytes=79 * 10**9,
        bandwidth_gb_s=2000,
        bf16=True,
        fp8=True,
        source="test",
    )


CATALOG = Catalog(
    gpus=[_gpu("rtx4090", "RTX 4090", ["4090", "rtx 4090"]), _gpu("h100-sxm", "H100 SXM", ["h100"])],
    models=[
        _llm("llama-3-70b", "Llama 3 70B", 70.6, "llama", aliases=["llama3 70b"], popular=True),
        _llm("llama-3-8b", "Llama 3 8B", 8.0, "llama", aliases=["llama3 8b"], popular=True),
        _llm("llama-3.1-70b", "Llama 3.1 70B", 70.6, "llama", hf_id="meta-llama/Llama-3.1-70B-Instruct"),
        _llm("llama-3.3-70b", "Llama 3.3 70B", 70.6, "llama"),
        _llm("mixtral-8x7b", "Mixtral 8x7B", 46.7, "mixtral"),
        _llm("qwen2.5-7b", "Qwen2.5 7B", 7.6, "qwen"),
        _llm("deepseek-r1-distill-qwen-7b", "DeepSeek R1 Distill Qwen 7B", 7.6, "deepseek"),
        _llm("phi-3-mini-4k", "Phi-3 Mini 4K", 3.8, "phi", aliases=["phi 3 mini 4k"]),
        _pipeline("sdxl", "Stable Diffusion XL", "image", "sd", ["sdxl"]),
        _pipeline("sd-1.5", "Stable Diffusion 1.5", "image", "sd", ["sd 1.5"]),
        _pipeline("flux.1-dev", "FLUX.1 [dev]", "image", "flux", ["flux dev"]),
        _pipeline("flux.1-schnell", "FLUX.1 [schnell]", "image", "flux", ["flux schnell"]),
        _pipeline("wan-2.1-14b", "Wan 2.1 14B", "video", "wan", ["wan 14b", "wan2.1"]),
    ],
    offers=[RentalOffer(id="o1", gpu="rtx4090", count=1, url="https://example.com")],
)

PHRASES: list[tuple[str, dict[str, Any]]] = [
    (
        "llama 3 70b int4 32k контекст 4 пользователя",
        {
            "task": "inference",
            "model": "llama-3-70b",
            "precision": "int4",
            "context_length": 32768,
            "concurrency": 4,
        },
    ),
    ("Llama 3 70B fp16 8192", {"model": "llama-3-70b", "precision": "fp16", "context_length": 8192}),
    (
        "запустить llama 3.1 70b в 4 бит, контекст 8к, 10 юзеров",
        {
            "task": "inference",
            "model": "llama-3.1-70b",
            "precision": "int4",
            "context_length": 8192,
            "concurrency": 10,
        },
    ),
    (
        "llama 3.1 70b instruct awq 128к контекст 16 users",
        {"model": "llama-3.1-70b", "precision": "awq-int4", "context_length": 131072, "concurrency": 16},
    ),
    ("meta-llama/Llama-3.1-70B-Instruct bf16", {"model": "llama-3.1-70b", "precision": "bf16"}),
    (
        "TheBloke/Foo-13B-AWQ ctx 8k",
        {"model": "TheBloke/Foo-13B-AWQ", "precision": "awq-int4", "context_length": 8192},
    ),
    ("mixtral 8x7b q4_k_m на 2 картах", {"model": "mixtral-8x7b", "precision": "q4_k_m", "num_gpus": 2}),
    ("Mixtral 8x7B Q5_K_M", {"model": "mixtral-8x7b", "precision": "q5_k_m"}),
    ("phi 3 mini 4k", {"model": "phi-3-mini-4k", "context_length": None}),
    ("llama3 8b nf4 ctx 16k", {"model": "llama-3-8b", "precision": "nf4", "context_length": 16384}),
    ("llama 3 8b 8bit", {"model": "llama-3-8b", "precision": "int8"}),
    ("llama 3 8b 4-bit gptq", {"model": "llama-3-8b", "precision": "gptq-int4"}),
    (
        "llama 3 8b fp8 kv fp8 batch 4 concurrency 16",
        {"precision": "fp8", "kv_cache_precision": "fp8", "concurrency": 16},
    ),
    (
        "llama 3 8b vllm 32 пользователя на rtx 4090",
        {"engine": "vllm", "concurrency": 32, "gpus": ["rtx4090"]},
    ),
    (
        "llama-3-8b llama.cpp q5_k_m 8k ctx",
        {"model": "llama-3-8b", "engine": "llama.cpp", "precision": "q5_k_m", "context_length": 8192},
    ),
    ("405 млрд fp8 на 8x h100", {"model": "405B", "precision": "fp8", "num_gpus": 8, "gpus": ["h100-sxm"]}),
    ("7 миллиардов параметров bf16", {"model": "7B", "precision": "bf16"}),
    ("1.5b int8", {"model": "1.5B", "precision": "int8"}),
    ("1,5b", {"model": "1.5B"}),
    ("llama 3 8b контекст 32,768", {"context_length": 32768}),
    ("r1 distill qwen 7b", {"model": "deepseek-r1-distill-qwen-7b"}),
    ("70b на двух картах h100", {"model": "70B", "num_gpus": 2, "gpus": ["h100-sxm"]}),
    ("llama 3 8b контекст 128 тысяч", {"context_length": 131072}),
    (
        "How much VRAM to run llama 3 8b with 64k context for eight users?",
        {"task": "inference", "context_length": 65536, "concurrency": 8},
    ),
    (
        "train a 1b model from scratch with zero2 on 8 gpus",
        {"method": "full", "sharding": "zero2", "num_gpus": 8},
    ),
    ("модель на 13B, 10 users", {"model": "13B", "concurrency": 10}),
    (
        "qwen 7b lora bs=8 seq 2048 gradient checkpointing",
        {
            "task": "training",
            "model": "qwen2.5-7b",
            "method": "lora",
            "batch_size": 8,
            "seq_len": 2048,
            "gradient_checkpointing": True,
        },
    ),
    (
        "qlora llama 3 8b r=64 paged adamw 8bit",
        {"task": "training", "method": "qlora", "lora_rank": 64, "optimizer": "paged_adamw_8bit"},
    ),
    (
        "полное дообучение llama 3 8b adamw 8bit zero3 на 8 gpu",
        {"task": "training", "method": "full", "optimizer": "adamw_8bit", "sharding": "zero3", "num_gpus": 8},
    ),
    (
        "full fine-tune llama 3 8b fsdp adafactor",
        {"method": "full", "sharding": "fsdp", "optimizer": "adafactor"},
    ),
    ("обучение с нуля 7 миллиардов параметров", {"task": "training", "method": "full", "model": "7B"}),
    (
        "train from scratch 1b seq 4096 bs 16",
        {"task": "training", "method": "full", "seq_len": 4096, "batch_size": 16},
    ),
    ("файнтюн qwen2.5 7b 8k контекст", {"task": "training", "method": "lora", "seq_len": 8192}),
    ("llama 3 8b lora 4k без чекпоинтинга", {"seq_len": 4096, "gradient_checkpointing": False}),
    (
        "sdxl 1024x1024 batch 4",
        {"task": "image_generation", "model": "sdxl", "resolution": (1024, 1024), "images": 4},
    ),
    (
        "сколько памяти для sdxl 1024 на 1024 4 картинки",
        {"task": "image_generation", "model": "sdxl", "resolution": (1024, 1024), "images": 4, "num_gpus": 1},
    ),
    ("sdxl 768", {"resolution": (768, 768)}),
    (
        "flux dev 1360×768 cpu offload vae tiling",
        {"model": "flux.1-dev", "resolution": (1360, 768), "cpu_offload": "model", "vae_tiling": True},
    ),
    ("flux schnell sequential offload", {"cpu_offload": "sequential"}),
    ("sdxl lora dreambooth", {"task": "training", "model": "sdxl", "method": "lora"}),
    (
        "wan 2.1 81 кадр 720p",
        {"task": "video_generation", "model": "wan-2.1-14b", "resolution": (1280, 720), "frames": 81},
    ),
    ("wan 14b 49 frames 832x480", {"frames": 49, "resolution": (832, 480)}),
    ("llama 3 70b eager attention", {"attention": "eager"}),
    ("unsloth llama 3 8b", {"task": "training", "engine": "unsloth", "method": "lora"}),
]


@pytest.mark.parametrize(("text", "expected"), PHRASES, ids=[p[0] for p in PHRASES])
def test_real_phrases(text: str, expected: dict[str, Any]) -> None:
    request = parse(text, CATALOG).model_dump(mode="json")
    for name, value in expected.items():
        want = list(value) if isinstance(value, tuple) else value
        assert request[name] == want, name


def test_ambiguous_name_asks_which_one_with_popular_first() -> None:
    with pytest.raises(ParseError) as caught:
        parse("llama 70b int8 8k", CATALOG)
    err = caught.value
    assert err.code == "ambiguous_model" and err.field == "model"
    assert err.candidates == ["llama-3-70b", "llama-3.1-70b", "llama-3.3-70b"]
    assert err.partial == {"task": Task.INFERENCE, "precision": Precision.INT8, "context_length": 8192}


def test_ambiguous_image_family_still_knows_the_task() -> None:
    with pytest.raises(ParseError) as caught:
        parse("flux 1024×768", CATALOG)
    assert set(caught.value.candidates) == {"flux.1-dev", "flux.1-schnell"}
    assert caught.value.partial["task"] == Task.IMAGE_GENERATION
    assert caught.value.partial["resolution"] == (1024, 768)


def test_the_partial_of_an_ambiguity_completes_to_a_request() -> None:
    with pytest.raises(ParseError) as caught:
        parse("llama 70b 4 users", CATALOG)
    request = Request(**caught.value.partial, model=caught.value.candidates[0])
    assert request.concurrency == 4


@pytest.mark.parametrize(
    ("text", "code", "field"),
    [
        ("", "empty", "text"),
        ("   \n", "empty", "text"),
        ("сколько памяти нужно", "missing_model", "model"),
        ("how much memory for 32k context", "missing_model", "model"),
        ("генерация видео 81 кадр", "missing_model", "model"),
        ("blorpmodel", "unknown_model", "model"),
        ("70b контекст 10^12", "too_large", "context_length"),
        ("70b 1000000000000000 users", "too_large", "concurrency"),
        ("0b", "invalid", "model"),
        ("1000000b", "too_large", "model"),
        ("sdxl 100000x100000", "too_large", "resolution"),
        ("sdxl 100000", "too_large", "resolution"),
        ("sdxl 32x32", "invalid", "resolution"),
        ("7b 0 users", "invalid", "concurrency"),
    ],
)
def test_errors_say_what_is_missing_or_wrong(text: str, code: str, field: str) -> None:
    with pytest.raises(ParseError) as caught:
        parse(text, CATALOG)
    assert (caught.value.code, caught.value.field) == (code, field)


def test_missing_model_keeps_what_was_understood() -> None:
    with pytest.raises(ParseError) as caught:
        parse("генерация видео 81 кадр", CATALOG)
    assert caught.value.partial == {"task": Task.VIDEO_GENERATION, "frames": 81}


def test_unknown_model_keeps_the_name_as_typed() -> None:
    with pytest.raises(ParseError) as caught:
        parse("blorpmodel int4", CATALOG)
    assert caught.value.value == "blorpmodel"
    assert understand("train a 1b model from scratch", CATALOG).notes == []  # every word was understood
    assert caught.value.partial["precision"] == Precision.INT4


def test_notes_say_what_the_parser_assumed() -> None:
    assert [n.code for n in understand("8x7b gguf", CATALOG).notes] == ["parse_gguf_default"]
    assert understand("8x7b gguf", CATALOG).request.precision == Precision.Q4_K_M
    assert understand("mixtral 8x7b gguf q8", CATALOG).notes == []
    assert understand("mixtral 8x7b gguf 8bit", CATALOG).request.precision == Precision.Q8_0
    assert [n.code for n in understand("дообучение llama 3 8b", CATALOG).notes] == ["parse_finetune_lora"]
    by_size = understand("llama 13b int4", CATALOG)
    assert by_size.request.model == "13B"
    assert [(n.code, n.params["size"]) for n in by_size.notes] == [("parse_model_by_size", "13B")]


def test_bare_moe_size_finds_the_catalogue_model() -> None:
    assert parse("8x7b", CATALOG).model == "mixtral-8x7b"
    assert parse("8x22b", CATALOG).model == "8x22B"


def test_parse_partial_never_raises_and_returns_fields() -> None:
    assert parse_partial("32k", CATALOG)["context_length"] == 32768
    assert parse_partial("", CATALOG) == {}
    assert parse_partial("llama 70b", CATALOG) == {}  # ambiguous model, no task named
    assert parse_partial("13B", CATALOG) == {"model": "13B"}  # the dialog's task stays
    assert parse_partial("llama 3 8b", CATALOG) == {"model": "llama-3-8b"}  # an LLM may be run or trained
    assert parse_partial("sdxl", CATALOG) == {"task": Task.IMAGE_GENERATION, "model": "sdxl"}
    assert parse_partial("1024x1024", CATALOG) == {"task": Task.IMAGE_GENERATION, "resolution": (1024, 1024)}
    assert parse_partial("инференс 7b", CATALOG) == {"task": Task.INFERENCE, "model": "7B"}
    assert parse_partial("llama 3 8b int4", CATALOG)["model"] == "llama-3-8b"
    assert "context_length" not in parse_partial("70b контекст 10^12", CATALOG)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("32k", 32768),
        ("128к", 131072),
        ("8192", 8192),
        ("контекст 16k", 16384),
        ("ctx 8k", 8192),
        ("1.5k", 1536),
        ("1m", 1048576),
        ("", None),
        ("много", None),
        ("10^12", None),
    ],
)
def test_parse_context(text: str, expected: int | None) -> None:
    assert parse_context(text) == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [("4", 4), ("4 пользователя", 4), ("bs=8", 8), ("0", None), ("many", None), ("99999999999", None)],
)
def test_parse_count(text: str, expected: int | None) -> None:
    assert parse_count(text) == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("1024x1024", (1024, 1024)),
        ("1024×768", (1024, 768)),
        ("1024 на 1024", (1024, 1024)),
        ("1024 х 576", (1024, 576)),
        ("720p", (1280, 720)),
        ("1024", (1024, 1024)),
        ("100000x100000", None),
        ("8x7b", None),
        ("abc", None),
    ],
)
def test_parse_resolution(text: str, expected: tuple[int, int] | None) -> None:
    assert parse_resolution(text) == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("7b", 7.0),
        ("70B", 70.0),
        ("1.5b", 1.5),
        ("405 млрд", 405.0),
        ("7 миллиардов", 7.0),
        ("350m", 0.35),
        ("8x7b", 56.0),
        ("13", None),
        ("0b", None),
        ("1000000b", None),
    ],
)
def test_parse_size_b(text: str, expected: float | None) -> None:
    assert parse_size_b(text) == expected


def test_without_catalogue_sizes_and_settings_still_parse() -> None:
    empty = Catalog([], [], [])
    request = parse("70b int4 32k", empty)
    assert (request.model, request.precision, request.context_length) == ("70B", Precision.INT4, 32768)


# --- against the shipped catalogue (names the data helper guarantees by the core issue) -------------


@pytest.mark.parametrize(
    ("text", "model"),
    [
        ("llama 3.1 8b int4", "llama-3.1-8b"),
        ("Llama-3.1-8B", "llama-3.1-8b"),
        ("meta-llama/Llama-3.1-8B-Instruct", "llama-3.1-8b"),
        ("llama 3.1 70b 32k", "llama-3.1-70b"),
    ],
)
def test_shipped_catalogue_names_resolve(text: str, model: str) -> None:
    assert parse(text).model == model == parse(text, default_catalog()).model


def test_shipped_gpu_names_are_read() -> None:
    request = parse("llama 3.1 8b на 2 x h100")
    assert request.num_gpus == 2 and request.gpus == ["h100-sxm"]
