"""After an answer: follow-ups that change part of the request, and comparisons of cards."""

from __future__ import annotations

from typing import Any

import pytest

from core.catalogue.catalog import default_catalog
from core.contract import Engine, Precision, Request, Task
from core.errors import ParseError
from core.parse import (
    comparison,
    comparison_follow_up,
    follow_up,
    parse,
    understand,
    understand_message,
)
from tests.core.test_ask_phrases import PHRASES as ASKED
from tests.core.test_parse import PHRASES as PARSED

CATALOG = default_catalog()
PREVIOUS = parse("llama 3.1 8b q4_k_m 8k на 4090", CATALOG)


@pytest.mark.parametrize(
    ("text", "changed", "fields"),
    [
        ("а если на 8 картах h100?", ("num_gpus", "gpus"), {"num_gpus": 8, "gpus": ["h100-sxm"]}),
        ("а в int4?", ("precision",), {"precision": "int4"}),
        ("а с контекстом 32k?", ("context_length",), {"context_length": 32768}),
        ("а на двух?", ("num_gpus",), {"num_gpus": 2, "gpus": ["rtx4090"]}),
        ("а для 16 пользователей?", ("concurrency",), {"concurrency": 16}),
        ("what about int4?", ("precision",), {"precision": "int4"}),
        ("and with 32k context?", ("context_length",), {"context_length": 32768}),
        ("on two cards?", ("num_gpus",), {"num_gpus": 2, "gpus": ["rtx4090"]}),
        ("а на 4090 48?", ("gpus",), {"gpus": ["rtx4090-48gb"], "num_gpus": 1}),
        ("а 16k?", ("context_length",), {"context_length": 16384}),
    ],
)
def test_a_follow_up_changes_what_it_names(
    text: str, changed: tuple[str, ...], fields: dict[str, Any]
) -> None:
    done = follow_up(text, PREVIOUS, CATALOG)
    assert done is not None
    assert done.changed == changed
    request = done.request.model_dump(mode="json")
    assert {k: request[k] for k in fields} == fields
    kept = {k: v for k, v in PREVIOUS.model_dump().items() if k not in changed}
    assert {k: v for k, v in done.request.model_dump().items() if k not in changed} == kept


def test_qlora_after_a_gguf_answer_trains_and_drops_the_gguf_file() -> None:
    done = follow_up("а если qlora?", PREVIOUS, CATALOG)
    assert done is not None
    assert (done.request.task, done.request.method, done.request.precision) == (Task.TRAINING, "qlora", None)
    assert set(done.changed) == {"task", "method", "precision"}
    assert done.request.gpus == ["rtx4090"] and done.request.model == "llama-3.1-8b"


def test_changing_precision_clears_an_engine_that_no_longer_applies() -> None:
    previous = parse("llama 3.1 8b q4_k_m ollama 8k", CATALOG)
    assert previous.engine is Engine.LLAMA_CPP
    done = follow_up("а в int4?", previous, CATALOG)
    assert done is not None and done.changed == ("precision", "engine")
    assert (done.request.precision, done.request.engine) == (Precision.INT4, None)
    assert done.request.context_length == 8192
    same = follow_up("а в q8?", previous, CATALOG)
    assert same is not None and (same.request.precision, same.request.engine) == ("q8_0", Engine.LLAMA_CPP)
    served = parse("llama 3.1 8b int4 vllm", CATALOG)
    gguf = follow_up("а если gguf?", served, CATALOG)
    assert gguf is not None and (gguf.request.precision, gguf.request.engine) == (Precision.Q4_K_M, None)
    assert [n.code for n in gguf.notes] == ["parse_gguf_default"]


def test_naming_the_solved_field_ends_the_inverse_question_and_a_card_keeps_it() -> None:
    """After "the longest context on a 3090": "а при 8k?" asks for 8k (estimated there), "а на 4090
    48?" asks the same question on another card."""
    solved = parse("какой максимальный контекст влезет в 3090 для llama 3.1 8b", CATALOG)
    assert solved.solve_for == "context_length"
    at_8k = follow_up("а при 8k?", solved, CATALOG)
    assert at_8k is not None and at_8k.request.solve_for is None
    assert at_8k.request.context_length == 8192 and at_8k.request.gpus == solved.gpus
    other_card = follow_up("а на 4090 48?", solved, CATALOG)
    assert other_card is not None and other_card.request.solve_for == "context_length"


def test_a_count_alone_keeps_the_card_and_a_card_alone_keeps_the_count() -> None:
    eight = parse("llama 3.1 70b на 8 картах h100", CATALOG)
    done = follow_up("а на a100?", eight, CATALOG)
    assert done is not None and (done.request.gpus, done.request.num_gpus) == (["a100-80gb"], 8)
    done = follow_up("а на четырёх?", eight, CATALOG)
    assert done is not None and (done.request.gpus, done.request.num_gpus) == (["h100-sxm"], 4)


def test_a_follow_up_reads_numbers_by_the_previous_task() -> None:
    training = parse("llama 3.1 8b qlora", CATALOG)
    done = follow_up("а с контекстом 4k?", training, CATALOG)
    assert done is not None and (done.changed, done.request.seq_len) == (("seq_len",), 4096)
    images = parse("sdxl", CATALOG)
    done = follow_up("а 1024x768?", images, CATALOG)
    assert done is not None and done.request.resolution == (1024, 768)


@pytest.mark.parametrize(
    "text", ["а llama 3.1 70b?", "what about qwen2.5 32b int4?", "привет", "", "спасибо!"]
)
def test_a_new_model_or_nothing_request_like_is_no_follow_up(text: str) -> None:
    assert follow_up(text, PREVIOUS, CATALOG) is None


def test_an_out_of_range_follow_up_says_what_is_wrong() -> None:
    with pytest.raises(ParseError) as caught:
        follow_up("а с контекстом 10^12?", PREVIOUS, CATALOG)
    assert caught.value.field == "context_length"


@pytest.mark.parametrize(
    ("text", "model", "configs", "precision"),
    [
        (
            "сравни 4090 48 и h100 для llama 3.1 70b int4",
            "llama-3.1-70b",
            (("rtx4090-48gb", 1), ("h100-sxm", 1)),
            "int4",
        ),
        (
            "compare 4090 48 vs h100 for qwen2.5 32b",
            "qwen2.5-32b",
            (("rtx4090-48gb", 1), ("h100-sxm", 1)),
            None,
        ),
        ("4090 48 или h100 для llama 3.1 8b?", "llama-3.1-8b", (("rtx4090-48gb", 1), ("h100-sxm", 1)), None),
        (
            "что лучше: 2× 4090 48 или h100 для llama 3.1 70b",
            "llama-3.1-70b",
            (("rtx4090-48gb", 2), ("h100-sxm", 1)),
            None,
        ),
        ("llama 3.1 70b: 1 h100 vs 2 h100?", "llama-3.1-70b", (("h100-sxm", 1), ("h100-sxm", 2)), None),
    ],
)
def test_comparisons(
    text: str, model: str, configs: tuple[tuple[str, int], ...], precision: str | None
) -> None:
    found = comparison(text, CATALOG)
    assert found is not None
    assert found.configs == configs
    assert (found.request.model, found.request.precision, found.request.gpus) == (model, precision, None)
    assert found.request.num_gpus == 1


def test_not_a_comparison() -> None:
    assert comparison("llama 3.1 8b на 4090 48", CATALOG) is None  # one card
    assert comparison("llama 3.1 8b на 4090 и h100", CATALOG) is None  # no word asking to compare
    assert comparison("сравни 4090 и h100", CATALOG) is None  # of what? a follow-up, or ask the model
    assert comparison("сравни 4090 и h100 для llama 70b", CATALOG) is None  # which llama: `understand` asks
    with pytest.raises(ParseError) as caught:
        comparison("сравни 4090 и h100 для llama 3.1 8b контекст 10^12", CATALOG)
    assert caught.value.field == "context_length"


@pytest.mark.parametrize("text", ["сравни с h100", "compare with h100", "а против h100?"])
def test_compare_with_after_an_answer(text: str) -> None:
    found = comparison_follow_up(text, PREVIOUS, CATALOG)
    assert found is not None
    assert found.configs == (("rtx4090", 1), ("h100-sxm", 1))
    assert found.request == PREVIOUS.model_copy(update={"gpus": None})
    assert follow_up(text, PREVIOUS, CATALOG) is None  # a comparison, not a change of card


def test_compare_with_keeps_the_previous_count_and_applies_other_changes() -> None:
    previous = parse("llama 3.1 70b int4 на 2× 4090 48", CATALOG)
    found = comparison_follow_up("compare with 2x h100 in fp8", previous, CATALOG)
    assert found is not None
    assert found.configs == (("rtx4090-48gb", 2), ("h100-sxm", 2))
    assert (found.request.precision, found.request.gpus, found.request.num_gpus) == ("fp8", None, 1)
    no_card = Request(task=Task.INFERENCE, model="llama-3.1-8b")
    assert comparison_follow_up("сравни с h100", no_card, CATALOG) is None  # nothing to compare with
    assert comparison_follow_up("сравни 4090 и h100", no_card, CATALOG) is not None
    assert comparison_follow_up("а на h100?", PREVIOUS, CATALOG) is None
    assert comparison_follow_up("сравни с qwen2.5 7b", PREVIOUS, CATALOG) is None  # a new model


STACK = parse("RAG: llama 3.1 8b + bge-m3 + reranker на 4090 48", CATALOG)
PLAIN_LLM = parse("llama 3.1 8b на 4090 48", CATALOG)


@pytest.mark.parametrize(
    ("previous", "text", "models"),
    [
        (STACK, "а без реранкера?", ["bge-m3"]),
        (STACK, "without the reranker", ["bge-m3"]),
        (STACK, "а без эмбеддера?", ["bge-reranker-v2-m3"]),
        (STACK, "а без bge-m3", ["bge-reranker-v2-m3"]),
        (STACK, "а без rag?", []),
        (STACK, "а с bge-large?", ["bge-large-en-v1.5", "bge-reranker-v2-m3"]),  # swaps the embedder
        (PLAIN_LLM, "а с bge-m3?", ["bge-m3"]),
        (PLAIN_LLM, "and with a reranker?", ["bge-reranker-v2-m3"]),
        (PLAIN_LLM, "+ реранкер", ["bge-reranker-v2-m3"]),
    ],
)
def test_a_follow_up_changes_the_stack_and_nothing_else(
    previous: Request, text: str, models: list[str]
) -> None:
    changed = follow_up(text, previous, CATALOG)
    assert changed is not None
    assert [e.model for e in changed.request.extra_models] == models
    assert changed.request.model == previous.model and changed.request.gpus == previous.gpus
    assert changed.changed == ("extra_models",)


@pytest.mark.parametrize(
    ("previous", "text"),
    [(STACK, "а с bge-m3?"), (STACK, "+ reranker"), (PLAIN_LLM, "а без реранкера?")],
)
def test_a_stack_follow_up_that_changes_nothing_keeps_the_answer(previous: Request, text: str) -> None:
    """Asking for what the stack already is (or taking out what it lacks) is the same question, not a
    question about the embedder alone."""
    changed = follow_up(text, previous, CATALOG)
    assert changed is not None and changed.changed == () and changed.request == previous


@pytest.mark.parametrize("text", ["а с контекстом 32k?", "and with 2 cards?", "а в int4?"])
def test_other_with_follow_ups_keep_the_stack(text: str) -> None:
    changed = follow_up(text, STACK, CATALOG)
    assert changed is not None and "extra_models" not in changed.changed
    assert changed.request.extra_models == STACK.extra_models


# Messages of every kind: new questions (every task), follow-ups, comparisons, errors.
MESSAGES = [
    *(text for text, _ in PARSED),
    *(text for text, _ in ASKED),
    *("а если на 8 картах h100?", "а в int4?", "а с контекстом 32k?", "а на двух?", "what about int4?"),
    *("а 16k?", "а на 4090 48?", "qlora", "а при 8k?", "а без реранкера?", "+ bge-m3", "4096"),
    *("сравни с h100", "сравни 4090 48 и h100 для llama 3.1 70b", "сравни 4090 и h100", "1024x1024"),
    *("llama 13b", "llama 70b", "а с контекстом 10^12?", "", "   ", "привет", "flux", "llama 3.1 8b 4k"),
]
PREVIOUS_REQUESTS = [
    None,
    PREVIOUS,
    parse("дообучение llama 3.1 8b lora", CATALOG),
    parse("flux dev 1024x1024", CATALOG),
    parse("RAG: llama 3.1 8b + bge-m3 + reranker на 4090 48", CATALOG),
]


def one_by_one(text: str, previous: Request | None) -> Any:
    """The order `understand_message` documents, each function reading the text itself."""
    wanted = comparison(text, CATALOG)
    if wanted is None and previous is not None:
        wanted = comparison_follow_up(text, previous, CATALOG)
    if wanted is not None:
        return wanted
    changed = follow_up(text, previous, CATALOG) if previous is not None else None
    return changed if changed is not None else understand(text, CATALOG)


def outcome(read: Any, text: str, previous: Request | None) -> Any:
    try:
        return read(text, previous)
    except ParseError as e:
        return ("error", e.code, e.field, e.partial, e.candidates, str(e))


@pytest.mark.parametrize("previous", PREVIOUS_REQUESTS, ids=["none", "inference", "lora", "image", "rag"])
def test_a_message_read_once_means_what_it_means_read_by_each(previous: Request | None) -> None:
    for text in MESSAGES:
        expected = outcome(one_by_one, text, previous)
        assert outcome(understand_message, text, previous) == expected, text


@pytest.mark.parametrize(
    "text",
    [
        "стейбл диффужн 1024 батч 4",  # a model it does not know: not a change of the answer
        "абракадабра 32k",
        "картинки 1024",  # another kind of task
        "какая самая большая модель влезет в h100?",  # a question over models: its own
    ],
)
def test_a_message_that_is_not_wholly_a_change_is_no_follow_up(text: str) -> None:
    previous = parse("qwen2.5 32b awq vllm 8k 16 пользователей")
    assert follow_up(text, previous) is None


@pytest.mark.parametrize(
    ("text", "changed"),
    [("а если в инт4?", "precision"), ("а на н100?", "gpus"), ("а на двух 4090 по 48?", "gpus")],
)
def test_a_change_in_russian_spelling_is_a_follow_up(text: str, changed: str) -> None:
    found = follow_up(text, parse("llama 3.1 70b bf16"))
    assert found is not None and changed in found.changed
