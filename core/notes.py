"""Assumptions and notices as codes with parameters; the words come from the locale files.

The core decides *which* notes apply and with which numbers; `core/locales/<lang>/core.ftl`
(`assumption-<code>`) says them. `Assumption.text` is the English rendering, kept for JSON
clients that read the contract without a language layer — never a second copy of the wording.
"""

from __future__ import annotations

from core.contract import Assumption
from core.texts import concept_key, translate

Param = str | int | float


def note(code: str, **params: Param) -> Assumption:
    """`note("default_context", context_length=4096)` → the assumption, its English text from the locale."""
    text = translate(concept_key("assumption", code), "en", **params) or code.replace("_", " ")
    return Assumption(code=code, text=text, params=params)
