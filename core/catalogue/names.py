"""Names of models as people write them: normalised, stripped of variant words ("instruct", "-hf",
"awq"), split into words, and matched fuzzily ("lama" for "llama") within a bounded amount of work."""

from __future__ import annotations

import difflib
import re
from collections.abc import Callable
from functools import lru_cache

from core.catalogue.sizes import is_size_word

# Tokens that name a variant of a checkpoint, not a different architecture: chat/instruct
# fine-tunes, the `-hf` conversions of Llama 2, and quantised re-uploads (the precision is a
# separate request field).
VARIANT_TOKENS = frozenset(
    {
        "instruct",
        "chat",
        "hf",
        "it",
        "base",
        "bnb",
        "4bit",
        "8bit",
        "awq",
        "gptq",
        "gguf",
        "fp8",
        "fp16",
        "bf16",
        "int4",
        "int8",
        "mlx",
        "exl2",
    }
)
# A release tag such as Qwen3's "-2507" or Mistral's "-2407" (YYMM) re-trains, not re-shapes.
_RELEASE_DATE = re.compile(r"^2[3-9](0[1-9]|1[0-2])$")
# Fuzzy search: a query token matches a name token this similar (difflib ratio), e.g. "lama"/"llama".
FUZZY_TOKEN_RATIO = 0.85
TYPO_RATIO = 0.75  # difflib ratio of a word one letter off in five from a name word ("lamma", "llama")
_FUZZY_TOKEN_WEIGHT = 0.8
# Bounded work on long text (a Telegram message holds up to 4,096 characters): `search` reads the first
# this many words of its query (a name has a handful; more is prose, where no name can reach half the
# words anyway), and one word's fuzzy matches are worked out once per catalogue (`Catalog._close`).
MAX_SEARCH_WORDS = 16
# A size ("70b", "8x7b") outweighs a version number: "llama 3 70b" prefers Llama 3.3 70B to Llama 3 8B.
_SIZE_TOKEN_WEIGHT = 2.0


@lru_cache(maxsize=4096)  # the same few names, looked up on every estimate (and draft model sized)
def normalize_name(name: str) -> str:
    """`Llama-3.1-8B`, `llama 3.1 8b` and `meta-llama/Llama-3.1-8B` compare on the last part."""
    tail = name.strip().lower().rsplit("/", 1)[-1]
    return "".join(ch for ch in tail if ch.isalnum() or ch == ".")


def strip_variant(name: str) -> tuple[str, list[str]]:
    """Drop variant tokens: `Llama-2-7b-chat-hf` -> (`Llama-2-7b`, [`chat`, `hf`]); also YYMM tags."""
    tail = name.strip().rsplit("/", 1)[-1]
    parts = re.split(r"([-_ ]+)", tail)
    kept: list[str] = []
    dropped: list[str] = []
    for part in parts:
        if part.lower() in VARIANT_TOKENS or (kept and _RELEASE_DATE.match(part)):
            dropped.append(part.lower())
        else:
            kept.append(part)
    return re.sub(r"[-_ ]+$", "", "".join(kept)), dropped


def has_variant_part(word: str) -> bool:
    """Whether `strip_variant` could drop a part of `word`: a variant token or a YYMM tag in it."""
    return any(
        part.lower() in VARIANT_TOKENS or _RELEASE_DATE.match(part) for part in re.split(r"[-_ ]+", word)
    )


def name_tokens(text: str) -> list[str]:
    """Words for fuzzy search: `Qwen2.5-7B-Instruct` -> [qwen, 2.5, 7b]; sizes such as 7b stay whole."""
    text = re.sub(r"[^\w.]+", " ", text.lower().replace("_", " "))
    text = re.sub(r"(?<=[^\W\d])(?<!\dx)(?=\d)", " ", text)  # llama3 -> llama 3, not 8x7b
    return [t.strip(".") for t in text.split() if t.strip(".") and t not in VARIANT_TOKENS]


def name_words(name: str) -> set[str]:
    """A name's words and their letter/digit runs: 'FLUX.1 [dev]' → {flux.1, flux, 1, dev}."""
    out: set[str] = set()
    for word in name_tokens(name):
        out.add(word)
        out.update(re.findall(r"[^\W\d_]+|\d+(?:\.\d+)?[a-z]?", word))
    return out


def _closest(word: str, tokens: list[str]) -> str | None:
    close = difflib.get_close_matches(word, tokens, n=1, cutoff=FUZZY_TOKEN_RATIO)
    return close[0] if close else None


def match_tokens(
    query: list[str], tokens: list[str], closest: Callable[[str, list[str]], str | None] = _closest
) -> tuple[float, int] | None:
    """(-weighted share of query words found, extra words in the name), or None if none match."""
    if not query or not tokens:
        return None
    words, sizes, named, total = _query_facts(tuple(query))
    matched = 0.0
    used: set[str] = set()
    for word, weight, as_size, fuzzy in words:
        if word in tokens:
            matched += weight
            used.add(word)
            continue
        if as_size is not None and as_size in tokens:  # "qwen 2.5 7" ~ 7b
            matched += _SIZE_TOKEN_WEIGHT * _FUZZY_TOKEN_WEIGHT
            used.add(as_size)
            continue
        if fuzzy:
            close = closest(word, tokens)
            if close is not None:
                matched += weight * _FUZZY_TOKEN_WEIGHT
                used.add(close)
    if not matched or (named and not used - sizes):
        return None  # a size alone does not make "qwen 7b" match Falcon 7B
    return -matched / total, len([t for t in tokens if t not in used])


@lru_cache(maxsize=64)
def _query_facts(
    query: tuple[str, ...],
) -> tuple[tuple[tuple[str, float, str | None, bool], ...], frozenset[str], bool, float]:
    """What `match_tokens` needs of a query, worked out once per query rather than once per name scored:
    each word with its weight, its size token ("7" ~ "7b") and whether it is matched fuzzily; the
    words that are sizes; whether any word is not a size; the weights' sum."""
    sizes = frozenset(w for w in query if is_size_word(w))
    words = tuple(
        (
            w,
            _word_weight(w),
            w + "b" if w.replace(".", "", 1).isdigit() else None,
            len(w) >= 4 and w not in sizes,
        )
        for w in query
    )
    return words, sizes, any(w not in sizes for w in query), sum(word[1] for word in words)


def _word_weight(word: str) -> float:
    return _SIZE_TOKEN_WEIGHT if is_size_word(word) else 1.0
