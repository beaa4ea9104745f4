"""Retrieval stacks (`Request.extra_models`, core.sizing.stack): models beside the LLM on one card, their
memory
summed per card into one verdict; read from text as users type it; through the CLI's JSON contract."""

from __future__ import annotations

import io
import json

import pytest

from core.cli import main
from core.language.answer import build_answer
from core.layouts.picture import layout
from core.parse import understand
from core.sizing.estimate import estimate

LLM = {"task": "inference", "model": "qwen2.5-7b", "context_length": 8192}
PAIR = ["bge-m3", "bge-reranker-v2-m3"]
STACK = [{"model": "bge-m3"}, {"model": "bge-reranker-v2-m3"}]


def test_the_stack_is_added_to_every_cards_need() -> None:
    alone = estimate({**LLM, "gpus": ["rtx3090"]})
    stacked = estimate({**LLM, "gpus": ["rtx3090"], "extra_models": STACK})
    extra = sum(p.total_bytes for p in stacked.stack)
    assert extra > 0 and stacked.breakdown["extra_models"] == extra
    assert stacked.total_bytes == alone.total_bytes + extra == sum(stacked.breakdown.values())
    assert stacked.target is not None and alone.target is not None
    assert stacked.target.bytes_per_gpu == alone.target.bytes_per_gpu + extra
    # every configuration the verdicts name carries the stack too (the same card counts: same offset)
    by_config = {(v.gpu, v.count): v.bytes_per_gpu for v in alone.verdicts}
    for v in stacked.verdicts:
        if (v.gpu, v.count) in by_config:
            assert v.bytes_per_gpu == by_config[(v.gpu, v.count)] + extra


def test_one_verdict_for_the_whole_stack() -> None:
    """A card the LLM alone fits can be too small for the stack: the verdict is the stack's."""
    base = {"task": "inference", "model": "llama-3.1-8b", "context_length": 16384, "gpus": ["rtx3090"]}
    alone = estimate(base)
    big = [{"model": "bge-m3", "batch_size": 256, "context_length": 8192}]
    stacked = estimate({**base, "extra_models": big})
    assert alone.target is not None and alone.target.verdict != "does_not_fit"
    assert stacked.target is not None and stacked.target.verdict == "does_not_fit"


def test_each_extra_model_is_sized_as_a_served_encoder() -> None:
    result = estimate({**LLM, "extra_models": STACK})
    embedding, reranker = result.stack
    assert (embedding.role, reranker.role) == ("embedding", "reranker")
    for part in result.stack:
        assert part.total_bytes == sum(part.breakdown.values())
        assert "kv_cache" not in part.breakdown  # an encoder caches no keys and values
        assert part.breakdown["weights"] == pytest.approx(0.568e9 * 2, rel=0.01)  # bf16
        assert part.breakdown["overhead"] > 0  # its own server process: its own CUDA context
        assert (part.context_length, part.batch_size) == (512, 32)
    # the request is echoed with the defaults the sizing used
    assert [(m.role, m.precision, m.context_length) for m in result.request.extra_models] == [
        ("embedding", "bf16", 512),
        ("reranker", "bf16", 512),
    ]


def test_a_larger_batch_needs_more() -> None:
    sizes = [
        estimate({**LLM, "extra_models": [{"model": "bge-m3", "batch_size": b}]}).stack[0].total_bytes
        for b in (1, 32, 256)
    ]
    assert sizes == sorted(sizes) and sizes[0] < sizes[-1]


def test_the_vllm_server_is_told_to_leave_room() -> None:
    result = estimate({**LLM, "concurrency": 8, "extra_models": STACK})
    codes = [a.code for a in result.assumptions]
    assert "stack_separate_processes" in codes and "stack_vllm_memory_fraction" in codes


def test_an_unknown_extra_model_names_its_field() -> None:
    from core.errors import UnknownModelError

    with pytest.raises(UnknownModelError) as caught:
        estimate({**LLM, "extra_models": [{"model": "bge-m3"}, {"model": "no-such-embedder"}]})
    assert caught.value.field == "extra_models.1.model"


@pytest.mark.parametrize(
    ("text", "model", "extras", "gpus"),
    [
        ("qwen2.5 7b + bge-m3 + bge-reranker на 4090", "qwen2.5-7b", PAIR, ["rtx4090"]),
        ("RAG: llama 3.1 8b, e5-large, reranker", "llama-3.1-8b", ["e5-large-v2", PAIR[1]], None),
        ("RAG на llama 3.1 8b int4 32k", "llama-3.1-8b", ["bge-m3"], None),  # RAG alone: the default embedder
        ("llama 3.1 8b и эмбеддер на 3090", "llama-3.1-8b", ["bge-m3"], ["rtx3090"]),
        (
            "qwen2.5 7b with multilingual-e5-large and jina-embeddings-v3 on h100",
            "qwen2.5-7b",
            ["multilingual-e5-large", "jina-embeddings-v3"],
            ["h100-sxm"],
        ),
    ],
)
def test_stacks_as_users_type_them(text: str, model: str, extras: list[str], gpus: list[str] | None) -> None:
    request = understand(text).request
    assert request.model == model
    assert [e.model for e in request.extra_models] == extras
    assert request.gpus == gpus


@pytest.mark.parametrize(
    "text", ["llama 3.1 8b int4, 32k, 4 пользователя", "bert-large", "сравни 4090 и h100 для llama 3.1 8b"]
)
def test_no_stack_without_one(text: str) -> None:
    assert not understand(text).request.extra_models


@pytest.mark.parametrize("lang", ["ru", "en"])
def test_the_answer_lists_each_model(lang: str) -> None:
    understood = understand("qwen2.5 7b + bge-m3 + bge-reranker на 4090 48")
    result = estimate(understood.request)
    answer = build_answer(result, lang, understood.notes)
    labels = [name for name, _ in answer.parts]
    assert any("BGE-M3" in n for n in labels) and any("BGE-reranker-v2-m3" in n for n in labels)
    assert "BGE-M3" in answer.settings
    # the picture's bar is the same breakdown: the stack's segments sum to `extra_models`
    segments = layout(answer).segments
    stack = [s.size for s in segments if s.code.startswith("extra_models:")]
    assert sum(stack) == result.breakdown["extra_models"]
    assert sum(s.size for s in segments) == result.total_bytes


def test_cli_contract_and_ask() -> None:
    out = io.StringIO()
    request = json.dumps({**LLM, "extra_models": STACK})
    assert main(["estimate", "--json"], stdin=io.StringIO(request), stdout=out) == 0
    result = json.loads(out.getvalue())
    assert [p["model"]["id"] for p in result["stack"]] == ["bge-m3", "bge-reranker-v2-m3"]
    assert result["breakdown"]["extra_models"] == sum(p["total_bytes"] for p in result["stack"])
    out = io.StringIO()
    assert main(["ask", "RAG: llama 3.1 8b, e5-large, reranker", "--lang", "en"], stdout=out) == 0
    assert "E5-large v2 (embeddings)" in out.getvalue() and "BGE-reranker-v2-m3 (reranker)" in out.getvalue()
    out = io.StringIO()
    bad = json.dumps({**LLM, "extra_models": [{"model": "bge-m3", "batch_size": 0}]})
    assert main(["estimate", "--json"], stdin=io.StringIO(bad), stdout=out) == 2
    assert json.loads(out.getvalue())["field"].startswith("extra_models")
