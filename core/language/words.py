"""User-facing words for the core's concepts, from the Fluent files in `core/locales/<lang>/` (`*.ftl`).

The bot and `python -m core ask` both speak through `t`, so a breakdown component, a verdict or a
precision reads the same everywhere. Keys are stable and listed at the top of the .ftl files;
concept keys are `<group>-<contract value>` (see `concept_key`). A key missing in the asked
language falls back to English, then to the key itself, so a new code never breaks an answer.

Assumptions and notices leave the core as codes with parameters (`note`); `Assumption.text` is their
English rendering, kept for JSON clients that read the contract without a language layer — never a
second copy of the wording.
"""

from __future__ import annotations

import re
from decimal import Decimal
from functools import lru_cache
from pathlib import Path

from fluent.runtime import FluentBundle, FluentResource
from fluent.syntax import FluentParser, ast

from core.contract import Assumption

LOCALES_DIR = Path(__file__).parents[1] / "locales"
LANGUAGES = ("ru", "en")
FALLBACK_LANGUAGE = "en"

Arg = str | int | float | Decimal
CONCEPT_KEYS = 4096  # (group, value) pairs: the contract's codes and the catalogue's ids, a few hundred


def normalize_lang(lang: str | None) -> str:
    """'ru-RU', 'RU' → 'ru'; anything we do not speak → English."""
    code = (lang or "").split("-")[0].split("_")[0].lower()
    return code if code in LANGUAGES else FALLBACK_LANGUAGE


# typed: a str enum member equals its value but `str()` writes it otherwise
@lru_cache(maxsize=CONCEPT_KEYS, typed=True)
def concept_key(group: str, value: str) -> str:
    """`concept_key("engine", "llama.cpp")` → 'engine-llama_cpp' (Fluent ids allow [A-Za-z0-9_-])."""
    return f"{group}-{re.sub(r'[^A-Za-z0-9_-]', '_', str(value))}"


def translate(key: str, lang: str, **args: Arg) -> str | None:
    """The message, or None when neither the language nor English has it complete for these args."""
    return _lookup(key, lang, args)


_SPOKEN = frozenset(LANGUAGES)


def _lookup(key: str, lang: str, args: dict[str, Arg]) -> str | None:
    # ~100 calls an answer, nearly all found in the cache: what is done before it is kept to a minimum.
    code = lang if lang in _SPOKEN else normalize_lang(lang)
    # The types are part of the key: True == 1 == 1.0 hash alike but Fluent formats them differently.
    # Arguments in the caller's order: a call site names them in one order, so one entry each.
    return _translate(key, code, tuple(args.items()), tuple(map(type, args.values())))


# An answer formats ~100 messages, most of them again and again across answers (component names,
# cards, sizes, prices); Fluent + Babel cost ~25 µs a message. The bundles never change in a
# process, so a message with the same arguments is formatted once.
TRANSLATION_CACHE_SIZE = 16_384


@lru_cache(maxsize=TRANSLATION_CACHE_SIZE)
def _translate(
    key: str, lang: str, items: tuple[tuple[str, Arg], ...], types: tuple[type, ...]
) -> str | None:
    args = dict(items)
    for code in dict.fromkeys((lang, FALLBACK_LANGUAGE)):
        bundle = _bundle(code)
        if not bundle.has_message(key):
            continue
        pattern = bundle.get_message(key).value
        if pattern is None:
            continue
        text, errors = bundle.format_pattern(pattern, args)
        if not errors:
            return str(text)
    return None


def t(key: str, lang: str, **args: Arg) -> str:
    """The message in `lang`, else in English, else the key itself."""
    return _lookup(key, lang, args) or key


def label(group: str, value: str, lang: str, **args: Arg) -> str:
    """A concept's name (`label("component", "kv_cache", "en")` → 'KV cache'); the raw value if unknown."""
    return _lookup(concept_key(group, value), lang, args) or str(value)


@lru_cache(maxsize=len(LANGUAGES) + 1)
def message_ids(lang: str) -> frozenset[str]:
    """Every key of one language (for the tests)."""
    ids: set[str] = set()
    for path in _files(normalize_lang(lang)):
        resource = FluentParser().parse(path.read_text(encoding="utf-8"))
        ids.update(e.id.name for e in resource.body if isinstance(e, ast.Message))
    return frozenset(ids)


def _files(lang: str) -> list[Path]:
    """The language's Fluent files: `core.ftl` and one file per feature beside it, in name order."""
    return sorted((LOCALES_DIR / lang).glob("*.ftl"))


def load_bundles() -> None:
    """Parse every language's Fluent files now; they are kept for the process. Parsing takes ~0.1 s
    a language (~0.3 s on a loaded host), and a server's first answer in a language paid for it:
    a server calls this at start instead."""
    for lang in LANGUAGES:
        _bundle(lang)


@lru_cache(maxsize=len(LANGUAGES))
def _bundle(lang: str) -> FluentBundle:
    # use_isolating=False: Unicode isolation marks around values show up as garbage in terminals
    # and in Telegram; our texts do not mix writing directions.
    bundle = FluentBundle([lang], use_isolating=False)
    for path in _files(lang):
        bundle.add_resource(FluentResource(path.read_text(encoding="utf-8")))
    return bundle


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
