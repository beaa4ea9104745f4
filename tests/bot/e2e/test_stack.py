"""A RAG stack asked in the bot: the LLM, an embedding model and a reranker on one card, each model a
line of the breakdown, one verdict for the sum; a follow-up keeps the stack."""

from __future__ import annotations

import pytest

from core.language import words as core_texts
from core.language.phrases import format_bytes
from core.parse import understand
from core.sizing.estimate import estimate
from tests.bot.e2e.conftest import Harness, assert_no_failed_calls, result_mark


def plain(text: str | None) -> str:
    return (text or "").replace("\xa0", " ").replace("\u202f", " ")


@pytest.mark.parametrize(
    ("question", "lang", "parts"),
    [
        (
            "qwen2.5 7b + bge-m3 + bge-reranker на 4090 48",
            "ru",
            ["BGE-M3 (эмбеддинги)", "BGE-reranker-v2-m3 (реранкер)"],
        ),
        (
            "RAG: llama 3.1 8b, e5-large, reranker",
            "en",
            ["E5-large v2 (embeddings)", "BGE-reranker-v2-m3 (reranker)"],
        ),
    ],
)
async def test_a_stack_is_one_answer(harness: Harness, question: str, lang: str, parts: list[str]) -> None:
    user = harness.user(language_code=lang)
    (reply,) = await user.send(question)
    shown = plain(reply.text)
    assert result_mark(lang) in shown
    result = estimate(understand(question).request)
    for part, sized in zip(parts, result.stack, strict=True):
        assert f"{part}: {plain(format_bytes(sized.total_bytes, lang))}" in shown
    # one verdict for the sum: the need the lead states is the whole stack's
    assert plain(format_bytes(result.total_bytes, lang)) in shown.splitlines()[1]
    assert_no_failed_calls(harness.sandbox)


async def test_a_follow_up_keeps_the_stack(harness: Harness) -> None:
    user = harness.user(language_code="ru")
    await user.send("qwen2.5 7b + bge-m3 + bge-reranker на 4090 48")
    (changed,) = await user.send("а в int4?")
    shown = plain(changed.text)
    assert "BGE-M3" in shown and "BGE-reranker-v2-m3" in shown
    assert core_texts.label("precision", "int4", "ru") in shown


@pytest.mark.parametrize(
    ("question", "follow", "lang", "present", "absent"),
    [
        (
            "qwen2.5 7b + bge-m3 + bge-reranker на 4090 48",
            "а без реранкера?",
            "ru",
            ["BGE-M3 (эмбеддинги)"],
            ["BGE-reranker-v2-m3"],
        ),
        (
            "qwen2.5 7b на 4090 48",
            "а с bge-m3?",
            "ru",
            ["BGE-M3 (эмбеддинги)", "Qwen2.5 7B"],
            [],
        ),
        (
            "RAG: llama 3.1 8b, e5-large, reranker",
            "and with bge-m3?",
            "en",
            ["BGE-M3 (embeddings)", "BGE-reranker-v2-m3 (reranker)"],
            ["E5-large"],
        ),
        (
            "RAG: llama 3.1 8b, e5-large, reranker",
            "without the embedder",
            "en",
            ["BGE-reranker-v2-m3 (reranker)"],
            ["E5-large"],
        ),
    ],
)
async def test_a_follow_up_changes_the_stack(
    harness: Harness, question: str, follow: str, lang: str, present: list[str], absent: list[str]
) -> None:
    """'а без реранкера?' takes the reranker out, 'а с bge-m3?' adds an embedder (or swaps the one
    there): the same LLM, the same card, the stack changed."""
    user = harness.user(language_code=lang)
    await user.send(question)
    (changed,) = await user.send(follow)
    shown = plain(changed.text)
    assert result_mark(lang) in shown, shown
    for part in present:
        assert part in shown, shown
    for part in absent:
        assert part not in shown, shown
    assert_no_failed_calls(harness.sandbox)
