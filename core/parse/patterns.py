"""The regular-expression helpers of the parser's word lists: a word as the parser spells it
(`spelling`), a plain word as a regex, a pattern bounded by word edges, and the gates that keep a pattern
from running where its keyword is nowhere in the text (`gated`, `table_gate`). Shared by the vocabulary
(`core.parse.vocabulary`), the fixed grammar (`core.parse.grammar`) and the readers."""

from __future__ import annotations

import re
import unicodedata
from typing import Any

Table = list[tuple[re.Pattern[str], Any]]

# a count with an optional k/M suffix; a period may end the sentence ("до 16к."), not a decimal
_NUM_UNIT = r"(\d+(?:\.\d+)?)\s?(k|m)?(?!\w|\.\d)"


# pattern → a part every match of it holds: where the part (searched alone, a cheap scan from its first
# letters) is nowhere in the text, the pattern is not run (a number-led one backtracks at every number)
_GATES: dict[re.Pattern[str], re.Pattern[str]] = {}


def gated(pattern: re.Pattern[str], needs: str) -> re.Pattern[str]:
    """`pattern`, taken (`core.parse.text._Text.take`) only from a text where the regex `needs` finds
    something: `needs` must be a part no match of `pattern` can do without (its keyword after an
    optional number)."""
    _GATES[pattern] = re.compile(needs)
    return pattern


# a table's rows in one pattern (a match of a row is a match of it): a text it misses needs no row
_TABLE_GATES: dict[int, tuple[Table, re.Pattern[str]]] = {}


def table_gate(table: Table) -> re.Pattern[str] | None:
    """The one pattern all rows of a vocabulary table make, or None for a table not compiled here."""
    entry = _TABLE_GATES.get(id(table))
    return entry[1] if entry is not None and entry[0] is table else None


def _words(*patterns: str) -> re.Pattern[str]:
    return re.compile(r"(?<![\w.])(?:" + "|".join(patterns) + r")(?![\w])")


def spelling(word: str) -> str:
    """A word as the parser sees text: NFKC, lower case, "ё" as "е", single spaces."""
    return " ".join(unicodedata.normalize("NFKC", word).lower().replace("ё", "е").split())


def _word_regex(word: str) -> str:
    """A plain word → its regular expression: "пользовател*" → "пользовател\\w*"."""
    stem, any_ending = (word[:-1], True) if word.endswith("*") else (word, False)
    return r"\s+".join(re.escape(part) for part in stem.split()) + (r"\w*" if any_ending else "")


def _compiles(pattern: str) -> str:
    try:
        re.compile(pattern)
    except re.error as e:
        raise ValueError(f"pattern {pattern!r} does not compile: {e}") from None
    return pattern
