"""Every line of the phrasing corpus (tests/core/fixtures/phrasings.toml) is read as it is meant
(issue 25): Russian spellings and transliterations, typos, mixed ru/en, follow-ups that change the
answer and messages that are new questions, thanks and greetings, questions sized elsewhere."""

from __future__ import annotations

from typing import Any

import pytest

from tests.core.phrasings import cases, mismatches

CASES = cases()


def test_the_corpus_holds_at_least_300_phrasings_in_both_languages() -> None:
    assert len(CASES) >= 300
    cyrillic = [c for c in CASES if any("а" <= ch <= "я" for ch in c["text"].lower())]
    assert 100 <= len(cyrillic) <= len(CASES) - 100


@pytest.mark.parametrize("case", CASES, ids=[f"{i}:{c['text'][:40]}" for i, c in enumerate(CASES)])
def test_a_phrasing_is_read_as_meant(case: dict[str, Any]) -> None:
    assert mismatches(case) == []
