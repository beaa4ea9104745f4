"""core.sizing.partial: the rules on a request put together field by field live in the core, so the
bot's dialog, its quick answers and any other front end decide alike."""

from __future__ import annotations

from typing import Any

import pytest

from core.catalogue.catalog import default_catalog
from core.contract import Request
from core.sizing import partial

CATALOG = default_catalog()


@pytest.mark.parametrize(
    ("fields", "scratch"),
    [
        ({"task": "training", "model": "13B"}, True),  # full training is the default method
        ({"task": "training", "model": "13B", "method": "full"}, True),
        ({"task": "training", "model": {"params_b": 3.0, "layers": 28}}, True),  # an architecture
        ({"task": "training", "model": "llama-3.1-8b"}, False),  # a catalogue model: fine-tuning
        ({"task": "training", "model": "Qwen/Qwen3-8B"}, False),  # the same by its Hugging Face id
        ({"task": "training", "model": "acme/unknown-7b"}, False),  # a Hub checkpoint has weights too
        ({"task": "training", "model": "13B", "method": "lora"}, False),  # adapters need weights
        ({"task": "training", "model": "13B", "method": "qlora"}, False),
        ({"task": "inference", "model": "13B"}, False),
        ({"task": "training"}, True),  # no model yet: a bare size is what the wizard then offers
    ],
)
def test_full_training_of_a_bare_size_is_pretraining(fields: dict[str, Any], scratch: bool) -> None:
    assert partial.trains_from_scratch(fields, CATALOG) is scratch


def test_inference_of_a_catalogue_speech_model_is_sized_as_speech() -> None:
    assert partial.sized_as_speech({"task": "inference", "model": "whisper-large-v3"}, CATALOG)
    assert partial.sized_as_speech({"task": "inference", "model": "openai/whisper-large-v3"}, CATALOG)
    assert not partial.sized_as_speech({"task": "training", "model": "whisper-large-v3"}, CATALOG)
    assert not partial.sized_as_speech({"task": "inference", "model": "qwen3-8b"}, CATALOG)
    assert not partial.sized_as_speech({"task": "inference", "model": "8B"}, CATALOG)


@pytest.mark.parametrize(
    ("model", "sized_as"),
    [
        ("falcon-40b", "falcon-40b"),
        ("Qwen/Qwen3-8B-AWQ", "qwen3-8b"),  # a catalogue model's Hugging Face id, a variant of it
        ("13B", "size-13b"),  # a size: its typical shape
        ({"params_b": 3.0, "layers": 28}, "custom"),  # an architecture
        ("acme/unknown-7b", None),  # a Hugging Face id the catalogue lacks: known only online
        ("0B", None),  # refused by the core
        ({"params_b": -1}, None),
        (None, None),
    ],
)
def test_the_model_the_fields_name_is_the_one_sized_where_known_offline(model: Any, sized_as: Any) -> None:
    spec = partial.model_spec({"task": "inference", "model": model}, CATALOG)
    assert (spec.id if spec else None) == sized_as


def test_stated_keeps_the_request_fields_and_leaves_none_to_the_default() -> None:
    data = {"task": "inference", "model": "qwen3-8b", "precision": None, "quick": True, "gpus": ["h200"]}
    assert partial.stated(data) == {"task": "inference", "model": "qwen3-8b", "gpus": ["h200"]}
    assert set(partial.stated({name: 1 for name in ("quick", "extra", "speech")})) == set()


def test_an_answer_sets_its_field_and_typical_leaves_it_to_the_core() -> None:
    fields = {"task": "inference", "model": "qwen3-8b", "precision": "int4", "num_gpus": 2}
    assert partial.answered(fields, "precision", "fp8", CATALOG) == {**fields, "precision": "fp8"}
    assert partial.answered(fields, "precision", None, CATALOG) == {
        "task": "inference",
        "model": "qwen3-8b",
        "num_gpus": 2,
    }
    assert fields["precision"] == "int4", "the fields given are not changed"


@pytest.mark.parametrize(("field", "value"), [("context_length", 8192), ("precision", "int8")])
def test_answering_the_field_an_inverse_question_solved_for_ends_that_question(
    field: str, value: Any
) -> None:
    fields = {"task": "inference", "model": "llama-3.1-8b", "solve_for": field, "gpus": ["rtx4090-48gb"]}
    answered = partial.answered(fields, field, value, CATALOG)
    assert "solve_for" not in answered and answered[field] == value
    other = "concurrency" if field != "concurrency" else "precision"
    assert partial.answered(fields, other, 4, CATALOG)["solve_for"] == field
    assert Request.model_validate(answered).solve_for is None


def test_qlora_drops_a_precision_chosen_before_it() -> None:
    fields = {
        "task": "training",
        "model": "qwen2.5-7b",
        "method": "lora",
        "precision": "bf16",
        "seq_len": 4096,
    }
    qlora = partial.answered(fields, "method", "qlora", CATALOG)
    assert qlora == {"task": "training", "model": "qwen2.5-7b", "method": "qlora", "seq_len": 4096}
    assert partial.answered(fields, "method", "full", CATALOG)["precision"] == "bf16"


def test_a_model_of_another_kind_drops_the_fields_read_differently() -> None:
    """8 users of an LLM are not 8 Whisper windows, its Q4_K_M no Whisper precision."""
    llm = {
        "task": "inference",
        "model": "qwen3-8b",
        "precision": "q4_k_m",
        "concurrency": 8,
        "gpus": ["h200"],
    }
    speech = partial.answered(llm, "model", "whisper-large-v3", CATALOG)
    assert speech == {"task": "inference", "model": "whisper-large-v3", "gpus": ["h200"]}
    other_llm = partial.answered(llm, "model", "llama-3.1-8b", CATALOG)
    assert other_llm == {**llm, "model": "llama-3.1-8b"}
