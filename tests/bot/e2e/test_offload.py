"""Offload to RAM through the real bot (issue 22): phrases as users type them, in Russian and English,
get the split (the llama.cpp flag), the memory on the card and in RAM, and the speed with its source,
in a message and in an inline answer."""

from __future__ import annotations

import pytest

from tests.bot.e2e.conftest import Harness, assert_no_failed_calls, result_mark
from tests.bot.e2e.test_inline import read, the_article

PHRASES = [
    ("ru", "qwen3 235b q4 на 4090 48 с выгрузкой в оперативку", ["--n-cpu-moe", "оперативк", "токенов/с"]),
    ("ru", "сколько слоёв влезет на 4090 для llama 3.1 70b q4", ["-ngl", "из 81 слоёв", "токенов/с"]),
    ("en", "gpt-oss-120b --n-cpu-moe on 4090 48gb", ["--n-cpu-moe", "in RAM", "tokens/s"]),
    ("en", "gpt-oss-120b --n-cpu-moe on 2x4090 48gb", ["without offload", "-ngl 37"]),
    ("en", "glm 4.5 air on rtx 4090 48gb offload to RAM", ["--n-cpu-moe", "in RAM", "llmfit"]),
]


@pytest.mark.parametrize("lang, phrase, words", PHRASES, ids=[p[1] for p in PHRASES])
async def test_offload_phrases_get_the_split_and_the_speed(
    harness: Harness, lang: str, phrase: str, words: list[str]
) -> None:
    user = harness.user(language_code=lang)
    answer = (await user.send(phrase))[-1]
    shown = read(answer.text or "")
    assert result_mark(lang) in shown, shown
    for word in words:
        assert word in shown, (word, shown)
    assert "offload-" not in shown  # every message key resolved
    assert len(shown) <= 4096
    assert_no_failed_calls(harness.sandbox)


@pytest.mark.parametrize("lang", ["ru", "en"])
async def test_the_inline_answer_names_the_offload(harness: Harness, lang: str) -> None:
    user = harness.user(language_code=lang)
    article = the_article(await user.inline("qwen3 235b q4_k_m 4090 48gb --n-cpu-moe"))
    shown = read(article["shown_text"])
    assert "--n-cpu-moe" in shown and "GPU" in shown


@pytest.mark.parametrize(
    "lang, first, then",
    [
        ("ru", "qwen3 235b q4_k_m на 4090 48", "а с выгрузкой в оперативку?"),
        ("en", "qwen3 235b q4_k_m on rtx 4090 48gb", "and with offload to RAM?"),
    ],
)
async def test_offload_as_a_follow_up(harness: Harness, lang: str, first: str, then: str) -> None:
    user = harness.user(language_code=lang)
    before = read((await user.send(first))[-1].text or "")
    assert "--n-cpu-moe" in before  # the sized mitigation of a "does not fit" answer
    after = read((await user.send(then))[-1].text or "")
    assert result_mark(lang) in after and "--n-cpu-moe" in after.splitlines()[0]
    assert_no_failed_calls(harness.sandbox)
