"""Assumptions and notices as codes with parameters; the words come from the locale files.

The core decides *which* notes apply and with which numbers; `core/locales/<lang>/core.ftl`
(`assumption-<code>`) says them. `Assumption.text` is the English rendering, kept for JSON
clients that read the contract without a language layer — never a second copy of the wording.
"""

from __future__ import annotations

from functools import lru_cache

from core.contract import Assumption
from core.texts import concept_key, translate

Param = str | int | float


def note(code: str, **params: Param) -> Assumption:
    """`note("default_context", context_length=4096)` → the assumption, its English text from the locale."""
    return Assumption(code=code, text=_english(code, tuple(params.items())), params=params)


@lru_cache(maxsize=4096)
def _english(code: str, params: tuple[tuple[str, Param], ...]) -> str:
    """The English text, cached: the same notes with the same numbers recur in every answer, and
    formatting through Fluent (plurals, number formats) is most of what a note costs."""
    text = translate(concept_key("assumption", code), "en", **dict(params))
    return text or code.replace("_", " ")
