"""Cards as people type them: the 48 GB RTX 4090, counts of cards, and what the parser leaves alone."""

from __future__ import annotations

import pytest

from core.catalogue.catalog import default_catalog
from core.contract import Request
from core.language.words import translate
from core.parse import parse, understand
from core.sizing.estimate import estimate

CATALOG = default_catalog()
MODEL = "llama 3.1 8b"


def _read(text: str) -> Request:
    return parse(text, CATALOG)


@pytest.mark.parametrize(
    "card",
    [
        "4090 48",
        "4090 48гб",
        "4090 48 гб",
        "4090 на 48",
        "4090 48g",
        "4090 48gb",
        "rtx 4090 48",
        "4090 48 GB",
        "RTX 4090 48Gb",
        "4090 на 48гб",
        "4090 48 гигов",
    ],
)
def test_the_48_gb_4090_is_read_however_it_is_typed(card: str) -> None:
    for text in (f"{MODEL} на {card}", f"{card} {MODEL}", f"{MODEL} {card} 8k"):
        request = _read(text)
        assert request.gpus == ["rtx4090-48gb"], text
        assert (request.num_gpus, request.concurrency, request.model) == (1, 1, "llama-3.1-8b"), text
        assert request.context_length in (None, 8192), text  # the 48 is no context


def test_plain_4090_stays_the_24_gb_card() -> None:
    assert _read(f"{MODEL} на 4090").gpus == ["rtx4090"]
    assert _read(f"{MODEL} rtx 4090").gpus == ["rtx4090"]
    assert _read(f"{MODEL} 4090 24gb").gpus == ["rtx4090"]


def test_a_number_after_the_card_that_counts_something_stays_that_count() -> None:
    request = _read(f"{MODEL} 4090 48 пользователей")
    assert (request.gpus, request.concurrency) == (["rtx4090"], 48)
    request = _read(f"{MODEL} на 4090 48 8 пользователей 32k")
    assert (request.gpus, request.concurrency, request.context_length) == (["rtx4090-48gb"], 8, 32768)


def test_a_context_written_like_a_memory_is_still_a_context() -> None:
    assert _read("llama 3.1 8b 48k").context_length == 48 * 1024
    assert _read("llama 3.1 8b 4090 48 48k").context_length == 48 * 1024


def test_other_cards_with_their_memory() -> None:
    assert _read(f"{MODEL} a100 40").gpus == ["a100-40gb"]
    assert _read(f"{MODEL} a100 80гб").gpus == ["a100-80gb"]
    assert _read(f"{MODEL} h100 80gb").gpus == ["h100-sxm"]


@pytest.mark.parametrize(
    ("phrase", "gpus", "count"),
    [
        ("две 4090", ["rtx4090"], 2),
        ("2x 4090", ["rtx4090"], 2),
        ("2x4090", ["rtx4090"], 2),
        ("2× 4090", ["rtx4090"], 2),
        ("4× H100", ["h100-sxm"], 4),
        ("4 x h100", ["h100-sxm"], 4),
        ("x4 h100", ["h100-sxm"], 4),
        ("h100 x4", ["h100-sxm"], 4),
        ("на 8 картах", None, 8),
        ("8 карт", None, 8),
        ("на двух", None, 2),
        ("на двух картах", None, 2),
        ("на четырёх h100", ["h100-sxm"], 4),
        ("two h100", ["h100-sxm"], 2),
        ("on 4 gpus", None, 4),
        ("8 gpus", None, 8),
        ("на 8 картах h100", ["h100-sxm"], 8),
        ("2× 4090 48", ["rtx4090-48gb"], 2),
        ("на двух 4090 48гб", ["rtx4090-48gb"], 2),
    ],
)
def test_card_counts(phrase: str, gpus: list[str] | None, count: int) -> None:
    request = _read(f"llama 3.1 70b int4 {phrase}")
    assert (request.gpus, request.num_gpus) == (gpus, count)
    assert (request.model, request.concurrency, request.context_length) == ("llama-3.1-70b", 1, None)


def test_counts_are_not_confused_with_size_context_or_users() -> None:
    request = _read("две 4090 48 llama 3.1 70b 4 пользователя 32k")
    assert (request.gpus, request.num_gpus) == (["rtx4090-48gb"], 2)
    assert (request.model, request.concurrency, request.context_length) == ("llama-3.1-70b", 4, 32768)
    request = _read("qwen2.5 32b на 2x h100 16 users 8k")
    assert (request.model, request.num_gpus, request.concurrency, request.context_length) == (
        "qwen2.5-32b",
        2,
        16,
        8192,
    )
    assert _read("llama 3.1 8b на 16 гб").num_gpus == 1  # memory, not cards
    assert _read("sdxl 1024x1024 на 4090").resolution == (1024, 1024)


def test_several_users_are_not_made_a_server_by_the_parser() -> None:
    understood = understand("llama 3.1 8b 32k 8 пользователей", CATALOG)
    assert (understood.request.concurrency, understood.request.engine) == (8, None)
    assert "parse_serving_vllm" not in [n.code for n in understood.notes]
    result = estimate(understood.request, CATALOG)
    codes = [a.code for a in [*understood.notes, *result.assumptions]]
    assert codes.count("parse_serving_vllm") == 1  # said once, by the estimator's defaults
    request = understand("llama 3.1 8b inference batch 8", CATALOG).request
    assert (request.concurrency, request.batch_size) == (8, 1)


def test_notes_take_their_words_from_the_locale() -> None:
    (gguf,) = understand("llama 3.1 8b gguf", CATALOG).notes
    assert gguf.code == "parse_gguf_default"
    assert gguf.text == translate("assumption-parse_gguf_default", "en")
    (lora,) = understand("дообучение llama 3.1 8b", CATALOG).notes
    assert lora.text == translate("assumption-parse_finetune_lora", "en")
