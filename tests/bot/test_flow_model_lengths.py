"""The context and sequence-length steps follow the model chosen: no button beyond its own maximum, that
maximum a button of its own, and the button the step leaves a user at (its default) is what a request
stating no length is sized with, for every catalogue language model. Typed lengths stay free."""

from __future__ import annotations

import pytest

from bot import flow
from core.catalogue.catalog import default_catalog
from core.catalogue.models import ModelKind
from core.contract import Method, Request, Task
from core.sizing.estimate import estimate
from tests.bot.test_flow_consistency import assert_same_everywhere

CATALOG = default_catalog()
LLMS = sorted(m.id for m in CATALOG.models.values() if m.kind is ModelKind.LLM)
TODAYS_CONTEXTS = ["2K", "4K", "8K", "16K", "32K", "128K"]
TODAYS_SEQ_LENS = ["512", "1K", "2K", "4K", "8K", "16K"]


def at(step: str, task: str, model: object) -> tuple[flow.Step, flow.Answers]:
    """The step, and the answers of a dialog of `task` that chose `model`."""
    answers = flow.answered(flow.Answers(), "task", task, CATALOG)
    return flow.STEPS[step], flow.answered(answers, "model", model, CATALOG)


def labels(step: flow.Step, answers: flow.Answers) -> list[str]:
    return [o.label or o.value for o in step.options(answers, CATALOG)]


def test_a_2k_model_offers_no_context_over_2k_and_its_default_sizes_as_the_request() -> None:
    step, answers = at("context_length", "inference", "falcon-40b")
    assert labels(step, answers) == ["2K"]
    assert step.default is not None and step.default(answers, CATALOG) == 2048
    left = flow.answered(answers, "context_length", 2048, CATALOG)
    request = Request(task=Task.INFERENCE, model="falcon-40b")
    assert estimate(flow.build_request(left), CATALOG).total_bytes == estimate(request, CATALOG).total_bytes


def test_a_model_with_a_maximum_of_its_own_offers_it_as_the_top_button() -> None:
    step, qwen3 = at("context_length", "inference", "qwen3-8b")  # max_position_embeddings 40960
    assert labels(step, qwen3) == ["2K", "4K", "8K", "16K", "32K", "40K"]
    step, mixtral = at("context_length", "inference", "mixtral-8x22b")  # 65536
    assert labels(step, mixtral)[-2:] == ["32K", "64K"]
    step, phi = at("context_length", "inference", "phi-3-mini")  # 4096, a standard value
    assert labels(step, phi) == ["2K", "4K"]


def test_a_short_models_sequence_length_is_its_maximum() -> None:
    step, falcon = at("seq_len", "finetune", "falcon-7b")
    assert labels(step, falcon) == ["512", "1K", "2K"]
    step, bert = at("seq_len", "finetune", "bert-large")
    assert labels(step, bert) == ["512"]
    assert step.default is not None and step.default(bert, CATALOG) == 512


@pytest.mark.parametrize("model", ["llama-3.1-8b", "deepseek-r1", "llama-4-scout", "13B", "acme/unknown-7b"])
def test_a_long_model_a_size_or_an_unknown_one_keeps_every_button(model: str) -> None:
    """A maximum over the largest button, or none known here (a bare size, a Hugging Face id)."""
    context, inference = at("context_length", "inference", model)
    seq_len, finetune = at("seq_len", "finetune", model)
    assert labels(context, inference) == TODAYS_CONTEXTS
    assert labels(seq_len, finetune) == TODAYS_SEQ_LENS
    assert context.default is not None and context.default(inference, CATALOG) == 4096
    assert seq_len.default is not None and seq_len.default(finetune, CATALOG) == 2048


def test_a_typed_context_beyond_the_model_is_still_accepted_and_the_core_says_so() -> None:
    step, answers = at("context_length", "inference", "falcon-40b")
    assert step.read is not None
    typed = step.read("128k", answers, CATALOG)
    assert typed == flow.Accepted(131072)
    result = estimate(flow.build_request(flow.answered(answers, step.name, typed.value, CATALOG)), CATALOG)
    assert "context_beyond_model" in {a.code for a in result.assumptions}


def test_a_number_button_no_longer_offered_means_what_typing_it_would() -> None:
    """A 128K button of the context step sent for a 2K model (an earlier keyboard, or forged) is the
    128K it says, as typed; a value typing would not give, or not in plain digits, is refused."""
    step, answers = at("context_length", "inference", "falcon-40b")
    assert flow.accepts(step, "131072", answers, CATALOG)
    assert flow.decode(step, "131072") == 131072
    for forged in ("0131072", "1e9", "128k", "-5", "0", "99999999999", "x"):
        assert not flow.accepts(step, forged, answers, CATALOG), forged
    concurrency = flow.STEPS["concurrency"]
    assert flow.accepts(concurrency, "3", answers, CATALOG)
    assert not flow.accepts(flow.STEPS["precision"], "fp64", answers, CATALOG)


def test_every_language_model_left_at_the_default_length_is_sized_as_the_request() -> None:
    """The dialog's default button (context for inference, sequence length for fine-tuning) and a
    request stating neither: one total, one recommendation, for each catalogue language model."""
    for model in LLMS:
        for step_name, task in (("context_length", "inference"), ("seq_len", "finetune")):
            step, answers = at(step_name, task, model)
            assert step.default is not None
            default = str(step.default(answers, CATALOG))
            assert default in {o.value for o in step.options(answers, CATALOG)}, (model, step_name)
        assert_same_everywhere("inference", Request(task=Task.INFERENCE, model=model))
        assert_same_everywhere("finetune", Request(task=Task.TRAINING, model=model, method=Method.LORA))


@pytest.mark.parametrize("size", flow.PRETRAIN_SIZES)
def test_a_bare_size_left_at_the_default_length_is_sized_as_the_request(size: str) -> None:
    """A size is sized with a typical shape (`core.model.resolve`); its defaults are that shape's."""
    assert_same_everywhere("pretrain", Request(task=Task.TRAINING, model=size))
    step, answers = at("context_length", "inference", size)  # typed at the model step
    assert step.default is not None
    left = flow.answered(answers, step.name, step.default(answers, CATALOG), CATALOG)
    request = Request(task=Task.INFERENCE, model=size)
    assert estimate(flow.build_request(left), CATALOG).total_bytes == estimate(request, CATALOG).total_bytes
