"""Speculative decoding named in free text: "с драфт моделью llama 3.2 1b", "with draft model
llama 3.2 1b", "eagle3", "mtp", "n-gram". The method words are data (`words` of each method in
`core/data/speculative.toml`); a draft model is the longest run of the words after the draft word
that names a catalogue model. What is read leaves the text, so the draft is not taken for the model.
"""

from __future__ import annotations

import re
from functools import lru_cache

from core.catalogue.catalog import Catalog
from core.contract import SpeculativeMethod
from core.parse.patterns import _word_regex, spelling
from core.sizing.speculative import methods

MAX_DRAFT_WORDS = 6  # "qwen2.5 coder 1.5b instruct": past any model name's length
_LEAD = r"(?:(?<!\w)(?:с|со|и|with|using|plus)\s+)?"
_MODEL_WORD = r"(?:\s+(?:модел\w*|model))?"
_WORD = re.compile(r"\S+")


@lru_cache(maxsize=1)
def _patterns() -> tuple[tuple[SpeculativeMethod, re.Pattern[str]], ...]:
    """Each method's words as one pattern; longer words first, so "eagle3" is not read as "eagle"."""
    out = []
    for method, row in methods().items():
        words = sorted((spelling(w) for w in row.words), key=len, reverse=True)
        body = "|".join(_word_regex(w) for w in words)
        out.append((method, re.compile(rf"{_LEAD}(?<![\w-])(?:{body})(?![\w-]){_MODEL_WORD}", re.IGNORECASE)))
    # the method whose longest word is longer is tried first (eagle-3 before eagle)
    return tuple(sorted(out, key=lambda mp: -max(len(w) for w in methods()[mp[0]].words)))


def _draft_after(rest: str, catalog: Catalog) -> tuple[str, int] | None:
    """(the draft's catalogue id, the characters of `rest` its name takes), longest name first."""
    words = list(_WORD.finditer(rest))[:MAX_DRAFT_WORDS]
    for n in range(len(words), 0, -1):
        found = catalog.find_model(rest[: words[n - 1].end()].strip(" ,;"))
        if found is not None and found[0].kind.value == "llm":
            return found[0].id, words[n - 1].end()
    return None


def split_speculative(text: str, catalog: Catalog) -> tuple[str, dict[str, str]]:
    """(the text without what names speculative decoding, the request fields it names)."""
    for method, pattern in _patterns():
        match = pattern.search(text)
        if match is None:
            continue
        if method is SpeculativeMethod.DRAFT_MODEL:
            draft = _draft_after(text[match.end() :], catalog)
            if draft is None:  # "драфт" without a model the catalogue knows: not understood here
                return text, {}
            model_id, taken = draft
            fields = {"speculative": method.value, "draft_model": model_id}
            return text[: match.start()] + " " + text[match.end() + taken :], fields
        return text[: match.start()] + " " + text[match.end() :], {"speculative": method.value}
    return text, {}
