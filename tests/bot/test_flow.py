"""bot.flow's answers ↔ request: the dialog states what the user chose, the core decides the rest."""

from __future__ import annotations

from typing import Any

import pytest

from bot import flow
from bot.callbacks import TYPICAL
from core.catalogue.catalog import default_catalog
from core.contract import (
    CpuOffload,
    CustomModel,
    Engine,
    KvPrecision,
    Method,
    MixedPrecision,
    Optimizer,
    Precision,
    Request,
    Sharding,
    Task,
)
from core.sizing.estimate import estimate

CATALOG = default_catalog()


def stated(task: str, **fields: Any) -> flow.Answers:
    """The wizard's answers to `task`'s steps: `fields`, as the steps record them."""
    return flow.Answers(task=task, request={"task": flow.CORE_TASK[task].value, **fields})


def test_qlora_states_no_precision_and_the_core_reads_nf4() -> None:
    answers = stated("finetune", model="qwen2.5-7b", method="qlora", batch_size=4, seq_len=2048)
    request = flow.build_request(answers)
    assert request == {
        "task": "training",
        "model": "qwen2.5-7b",
        "method": "qlora",
        "batch_size": 4,
        "seq_len": 2048,
    }
    assert estimate(request, CATALOG).request.precision is Precision.NF4


def test_qlora_with_a_16_bit_precision_is_passed_as_stated() -> None:
    """A quick answer `qlora bf16`: the core reads the base as NF4 and says so, not the bot."""
    answers = stated("finetune", model="qwen2.5-7b", method="qlora", precision="bf16")
    request = flow.build_request(answers)
    assert request["precision"] == "bf16"
    result = estimate(request, CATALOG)
    assert result.request.precision is Precision.NF4
    assert "qlora_base_nf4" in {a.code for a in result.assumptions}


@pytest.mark.parametrize(
    ("precision", "mixed"),
    [("fp32", MixedPrecision.BF16), ("fp16", MixedPrecision.FP16), ("bf16", MixedPrecision.BF16)],
)
def test_full_training_leaves_mixed_precision_to_the_core(precision: str, mixed: MixedPrecision) -> None:
    answers = stated("finetune", model="llama-3.1-8b", method="full", precision=precision)
    request = flow.build_request(answers)
    assert "mixed_precision" not in request
    assert estimate(request, CATALOG).request.mixed_precision is mixed


def test_training_from_scratch_is_the_cores_default_method() -> None:
    request = flow.build_request(stated("pretrain", model="13B", precision="bf16", batch_size=8))
    assert request == {"task": "training", "model": "13B", "precision": "bf16", "batch_size": 8}
    assert Request.model_validate(request).method is Method.FULL


def test_typical_answers_are_left_out() -> None:
    answers = stated("inference", model="qwen3-8b")
    for step in ("precision", "context_length"):
        answers = flow.answered(answers, step, flow.decode(flow.STEPS[step], TYPICAL), CATALOG)
    assert flow.build_request(answers) == {"task": "inference", "model": "qwen3-8b"}


ROUND_TRIPS: list[dict[str, Any]] = [
    {"task": Task.INFERENCE, "model": "qwen3-8b"},
    {
        "task": Task.INFERENCE,
        "model": "llama-3.1-70b",
        "precision": Precision.AWQ_INT4,
        "context_length": 32768,
        "concurrency": 8,
        "gpus": ["h100-sxm"],
        "num_gpus": 2,
        "engine": Engine.VLLM,
        "kv_cache_precision": KvPrecision.FP8,
    },
    {
        "task": Task.INFERENCE,
        "model": "mixtral-8x7b",
        "precision": Precision.Q4_K_M,
        "engine": Engine.LLAMA_CPP,
    },
    {
        "task": Task.TRAINING,
        "model": "llama-3.1-8b",
        "method": Method.FULL,
        "precision": Precision.FP32,
        "mixed_precision": MixedPrecision.NONE,
        "optimizer": Optimizer.ADAMW_8BIT,
        "sharding": Sharding.FSDP,
        "num_gpus": 4,
        "gradient_checkpointing": True,
        "gradient_accumulation_steps": 4,
    },
    {"task": Task.TRAINING, "model": "qwen2.5-7b", "method": Method.QLORA, "lora_rank": 64, "seq_len": 4096},
    {"task": Task.TRAINING, "model": "13B", "batch_size": 8, "seq_len": 2048},
    {
        "task": Task.TRAINING,
        "model": CustomModel(params_b=3.0),
        "method": Method.LORA,
        "precision": Precision.BF16,
    },
    {
        "task": Task.IMAGE_GENERATION,
        "model": "sdxl",
        "resolution": (1280, 720),
        "images": 4,
        "cpu_offload": CpuOffload.MODEL,
        "vae_tiling": True,
    },
    {"task": Task.VIDEO_GENERATION, "model": "wan2.1-t2v-14b", "frames": 81, "vae_slicing": True},
]


@pytest.mark.parametrize("fields", ROUND_TRIPS, ids=lambda f: f"{f['task']}-{f['model']}")
def test_answers_of_a_request_build_the_same_request(fields: dict[str, Any]) -> None:
    """What a quick answer understood survives the dialog: every field, the steps' and the others."""
    request = Request(**fields)
    answers = flow.answers_from_request(request, CATALOG)
    assert Request.model_validate(flow.build_request(answers)) == request
    assert flow.fields_of(answers) == {k: v for k, v in flow.build_request(answers).items() if k != "model"}


def test_changed_step_keeps_the_other_fields() -> None:
    """A quick answer naming cards, its precision then changed in the dialog: the cards stay."""
    request = Request(
        task=Task.INFERENCE, model="qwen3-8b", precision=Precision.BF16, gpus=["h200"], num_gpus=2
    )
    answers = flow.answers_from_request(request, CATALOG)
    assert answers.get("gpus") == ["h200"] and answers.get("num_gpus") == 2
    answers = flow.answered(answers, "precision", "int8", CATALOG)
    rebuilt = Request.model_validate(flow.build_request(answers))
    assert rebuilt == request.model_copy(update={"precision": Precision.INT8})


@pytest.mark.parametrize(
    ("solve_for", "step", "value"),
    [("context_length", "context_length", 8192), ("precision", "precision", "int8")],
)
def test_a_value_picked_for_the_solved_field_ends_the_inverse_question(
    solve_for: str, step: str, value: Any
) -> None:
    """After "the longest context on a 4090 48", "another context" → 8K is an estimate at 8K on that
    card: the pick clears solve_for (kept, it would solve again and ignore the pick)."""
    request = Request(task=Task.INFERENCE, model="llama-3.1-8b", solve_for=solve_for, gpus=["rtx4090-48gb"])
    answers = flow.answers_from_request(request, CATALOG)
    answers = flow.answered(answers, step, value, CATALOG)
    rebuilt = Request.model_validate(flow.build_request(answers))
    assert rebuilt.solve_for is None
    assert getattr(rebuilt, step) == value and rebuilt.gpus == ["rtx4090-48gb"]


def test_a_value_picked_for_another_field_keeps_the_inverse_question() -> None:
    """The longest context at int8 is still a question about the longest context."""
    request = Request(
        task=Task.INFERENCE, model="llama-3.1-8b", solve_for="context_length", gpus=["h100-sxm"]
    )
    answers = flow.answered(flow.answers_from_request(request, CATALOG), "precision", "int8", CATALOG)
    assert Request.model_validate(flow.build_request(answers)).solve_for == "context_length"


def test_answers_kept_by_the_previous_version_load_a_steps_answer_winning_over_extra() -> None:
    """The previous version kept the steps' fields flat, the others in "extra", a step's answer
    winning over the same field there: read as one request."""
    old = {
        "task": "inference",
        "model": "qwen3-8b",
        "concurrency": 4,
        "extra": {"concurrency": 2, "num_gpus": 2},
    }
    answers = flow.Answers.model_validate(flow.from_stored(old))
    assert flow.build_request(answers) == {
        "task": "inference",
        "model": "qwen3-8b",
        "concurrency": 4,
        "num_gpus": 2,
    }


@pytest.mark.parametrize(
    ("old", "position", "fields"),
    [
        (
            {"task": "pretrain", "model": "13B", "precision": "bf16", "quick": False},
            ("pretrain", False, False),
            {"task": "training", "model": "13B", "precision": "bf16"},
        ),
        (
            {"task": "finetune", "quick": True, "extra": {"gpus": ["h100-sxm"]}},
            ("finetune", True, False),
            {"task": "training", "gpus": ["h100-sxm"]},
        ),
        (
            {"task": "inference", "model": "whisper-large-v3", "speech": True, "batch_size": 4},
            ("inference", False, True),
            {"task": "inference", "model": "whisper-large-v3", "batch_size": 4},
        ),
        ({}, (None, False, False), {}),
    ],
)
def test_answers_of_the_previous_version_keep_the_wizards_position(
    old: dict[str, Any], position: tuple[Any, ...], fields: dict[str, Any]
) -> None:
    answers = flow.Answers.model_validate(flow.from_stored(old))
    assert (answers.task, answers.quick, answers.speech) == position
    assert answers.request == fields


def test_a_quick_answer_of_full_training_of_a_bare_size_is_pretraining() -> None:
    """The core decides (core.sizing.partial.trains_from_scratch): the wizard asks pretraining's steps."""
    scratch = flow.answers_from_request(Request(task=Task.TRAINING, model="13B"), CATALOG)
    tuned = flow.answers_from_request(Request(task=Task.TRAINING, model="llama-3.1-8b"), CATALOG)
    lora = flow.answers_from_request(Request(task=Task.TRAINING, model="13B", method=Method.LORA), CATALOG)
    assert (scratch.task, tuned.task, lora.task) == ("pretrain", "finetune", "finetune")


def test_a_step_without_typical_offers_the_cores_default_as_a_button() -> None:
    """ "Typical" is dropped only where it would repeat a button: the step's default is the core's and
    one of its options."""
    catalog = default_catalog()
    dropped = [s for s in flow.STEPS.values() if s.default is not None]
    assert {s.name for s in dropped} == {"context_length", "concurrency", "batch_size", "seq_len", "images"}
    for step in dropped:
        assert step.default is not None and not step.typical
        for answers in (stated("inference"), stated("inference", model="falcon-40b")):
            default = step.default(answers, catalog)
            assert str(default) in {o.value for o in step.options(answers, catalog)}
            # the contract's default, or None where the estimate fills one in (default_context, ...)
            assert Request.model_fields[step.name].default in (None, default)
