"""Free text asking for a manager or a quote: the intent phrases per language
(`bot/data/quote_intents.toml`, checked when the bot starts) and the test that a message has one and
is no question the estimator answers."""

from __future__ import annotations

import re
import tomllib
from collections.abc import Mapping
from functools import lru_cache
from pathlib import Path

from core.catalogue.catalog import Catalog
from core.contract import Request
from core.errors import CoreError
from core.parse import comparison, comparison_follow_up, follow_up, understand

INTENTS_FILE = Path(__file__).parents[1] / "data" / "quote_intents.toml"
WORD = re.compile(r"[a-zа-я0-9]+(?:-[a-zа-я0-9]+)*")
INTENT_ENTRY = re.compile(r"^[a-zа-я]+(?:-[a-zа-я]+)*(?: [a-zа-я]+(?:-[a-zа-я]+)*){0,3}$")


def normalize(text: str) -> list[str]:
    return WORD.findall(text.lower().replace("ё", "е"))


def load_intents(path: Path = INTENTS_FILE) -> dict[str, list[list[str]]]:
    """The intent phrases per language, as word lists; ValueError naming the file and the entry."""
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, tomllib.TOMLDecodeError) as e:
        raise ValueError(f"{path}: {e}") from None
    if not data:
        raise ValueError(f"{path}: no intents")
    intents: dict[str, list[list[str]]] = {}
    for lang, entries in data.items():
        if not isinstance(entries, list) or not entries:
            raise ValueError(f"{path}: {lang} must be a non-empty list of phrases")
        seen: set[str] = set()
        for entry in entries:
            if not isinstance(entry, str) or not INTENT_ENTRY.match(entry.replace("ё", "е")):
                raise ValueError(f"{path}: {lang}: {entry!r} is not 1-4 lower-case words")
            if entry in seen:
                raise ValueError(f"{path}: {lang}: {entry!r} is listed twice")
            seen.add(entry)
        intents[lang] = [entry.replace("ё", "е").split() for entry in entries]
    return intents


INTENTS = load_intents()


def mentions_intent(text: str, intents: Mapping[str, list[list[str]]] = INTENTS) -> bool:
    """Whether the text has an intent phrase (any language): its words in a row, each a word's start."""
    return _intent_pattern(_frozen(intents)).search(" ".join(normalize(text))) is not None


def _frozen(intents: Mapping[str, list[list[str]]]) -> tuple[tuple[str, ...], ...]:
    return tuple(tuple(phrase) for phrases in intents.values() for phrase in phrases)


@lru_cache(maxsize=8)
def _intent_pattern(phrases: tuple[tuple[str, ...], ...]) -> re.Pattern[str]:
    """One regular expression for every phrase, over the text's words joined by single spaces: a
    phrase's part starts a word (``(?<!\\S)``), the rest of that word is skipped (``\\S*``) up to
    the space before the next part. Every message is checked, up to 4,096 characters: one pass of
    the regular expression engine, not each phrase tried at each word in Python (8 ms for 4,096
    characters, 45 µs for a one-line question)."""
    alternatives = (r"\S* ".join(map(re.escape, phrase)) for phrase in phrases)
    return re.compile(r"(?<!\S)(?:" + "|".join(alternatives) + ")")


def wants_quote(text: str, catalog: Catalog, previous: Request | None) -> bool:
    """Free text asking for a manager / a quote: an intent phrase, and no question the estimator would
    answer (a named model, a follow-up of the last answer, a comparison)."""
    if not mentions_intent(text):
        return False
    try:
        if comparison(text, catalog) is not None:
            return False
        if previous is not None and (
            follow_up(text, previous, catalog) is not None
            or comparison_follow_up(text, previous, catalog) is not None
        ):
            return False
        understand(text, catalog)
    except CoreError:
        return True
    return False
