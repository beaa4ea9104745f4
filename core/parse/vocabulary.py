"""The words the parser knows, read from `core/data/vocabulary.toml`, and the grammar around them.

The word lists (engines, precisions, methods, tasks, counts, number words, filler…) are data: rows
of plain `words` (a trailing "*" allows any ending) and, where a word is not enough, `pattern`s
(regular expressions), each row with the `value` its words mean. The file is validated when it is
loaded, once: a bad row raises `CatalogError` naming the file, the table, the row and the field.
`GPUFIT_VOCABULARY` names another file (an operator's, or a test's) in place of the shipped one.

What stays here is grammar, not vocabulary: how a number carries its unit, a KV-cache setting, a
LoRA rank, a resolution.
"""

from __future__ import annotations

import os
import re
import unicodedata
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from core.catalogue.load import DATA_DIR, read_toml
from core.contract import (
    Attention,
    CpuOffload,
    Engine,
    Method,
    OffloadMode,
    Optimizer,
    Precision,
    Sharding,
    Task,
)
from core.errors import CatalogError

VOCABULARY_FILE = DATA_DIR / "vocabulary.toml"
VOCABULARY_ENV = "GPUFIT_VOCABULARY"  # another vocabulary file in place of the shipped one

Table = list[tuple[re.Pattern[str], Any]]

# a count with an optional k/M suffix; a period may end the sentence ("до 16к."), not a decimal
_NUM_UNIT = r"(\d+(?:\.\d+)?)\s?(k|m)?(?!\w|\.\d)"
# a name may run into a number ("ллама3", "ван2.1"), not into more letters ("ламповый")
_NO_LETTER_AFTER = r")(?![^\W\d_])"


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


# --- the file's rows ---------------------------------------------------------------------------------


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


class _Row(BaseModel):
    """Words and patterns meaning one thing."""

    model_config = ConfigDict(extra="forbid")

    words: list[str] = []
    pattern: list[str] = []

    @field_validator("words")
    @classmethod
    def _plain_words(cls, words: list[str]) -> list[str]:
        out = []
        for word in words:
            word = spelling(word)
            stem = word.removesuffix("*")
            if not stem.strip():
                raise ValueError("a word is empty")
            if "*" in stem:
                raise ValueError(f"{word!r}: '*' may only end a word (any ending); use `pattern` for more")
            out.append(word)
        return out

    @field_validator("pattern")
    @classmethod
    def _patterns_compile(cls, patterns: list[str]) -> list[str]:
        for pattern in patterns:
            if not pattern.strip():
                raise ValueError("a pattern is empty")
            _compiles(pattern)
        return patterns

    @model_validator(mode="after")
    def _says_something(self) -> _Row:
        if not self.words and not self.pattern:
            raise ValueError("the row has neither words nor pattern")
        return self

    def regex(self) -> str:
        """One alternation: the plain words, then the patterns."""
        return "|".join([*(_word_regex(w) for w in self.words), *self.pattern])


class _EngineRow(_Row):
    value: Engine


class _OptimizerRow(_Row):
    value: Optimizer


class _PrecisionRow(_Row):
    value: Precision


class _ShardingRow(_Row):
    value: Sharding


class _AttentionRow(_Row):
    value: Attention


class _OffloadRow(_Row):
    value: CpuOffload

    @field_validator("value")
    @classmethod
    def _switched_on(cls, value: CpuOffload) -> CpuOffload:
        if value is CpuOffload.NONE:
            raise ValueError("'none' is what a negation says (\"без offload\"): give what is offloaded")
        return value


class _RamOffloadRow(_Row):
    """llama.cpp offload to host RAM (issue 22); a number right after the words is -ngl / --n-cpu-moe."""

    value: OffloadMode


class _MethodRow(_Row):
    value: Method


class _TaskRow(_Row):
    value: Task


class _NameRow(_Row):
    value: str = Field(min_length=1, pattern=r"^\S+$")


class _OffTopicRow(_Row):
    value: Literal["render", "hardware", "billing"]


class _UnsizedRow(_Row):
    value: Literal["speech", "asr", "vision"]  # speech (TTS): not sized; asr, vision: see reading.py


class _CountRow(_Row):
    value: Literal["num_gpus", "frames", "images", "concurrency", "batch_size"]
    position: Literal["after", "before"] = "after"
    between: str | None = None

    @field_validator("between")
    @classmethod
    def _between_compiles(cls, between: str | None) -> str | None:
        return None if between is None else _compiles(between)


class _NumberRow(BaseModel):
    model_config = ConfigDict(extra="forbid")

    value: int = Field(gt=0)
    words: list[str] = Field(min_length=1)

    @field_validator("words")
    @classmethod
    def _plain_words(cls, words: list[str]) -> list[str]:
        out = [spelling(w) for w in words]
        for word in out:
            if not word or not re.fullmatch(r"\w+", word):
                raise ValueError(f"{word!r}: a number word is one word of letters")
        return out


_TABLES: dict[str, type[BaseModel]] = {
    "number": _NumberRow,
    "model_name": _NameRow,
    "card_name": _NameRow,
    "engine": _EngineRow,
    "optimizer": _OptimizerRow,
    "gguf": _Row,
    "precision": _PrecisionRow,
    "sharding": _ShardingRow,
    "attention": _AttentionRow,
    "negation": _Row,
    "offload": _OffloadRow,
    "tiling": _Row,
    "slicing": _Row,
    "checkpointing": _Row,
    "count": _CountRow,
    "scratch": _Row,
    "method": _MethodRow,
    "fine_tune": _Row,
    "training": _Row,
    "task": _TaskRow,
    "compare": _Row,
    "filler": _Row,
    "chit_chat": _Row,
    "off_topic": _OffTopicRow,
    "unsized": _UnsizedRow,
    "ram_offload": _RamOffloadRow,
}


# --- the vocabulary, compiled ---------------------------------------------------------------------


@dataclass(frozen=True)
class Vocabulary:
    """The compiled word lists, in the order the file gives them."""

    number_words: re.Pattern[str]
    number_values: dict[str, str]  # word → its digits
    model_names: list[tuple[re.Pattern[str], str]]  # model and card names: Cyrillic → Latin spelling
    any_model_name: re.Pattern[str]  # all of `model_names` in one: a text it misses needs none of them
    engines: Table
    optimizers: Table
    gguf: re.Pattern[str]
    precisions: Table
    sharding: Table
    attention: Table
    offload: Table  # negatable switches: the `neg` group tells "без offload"
    tiling: re.Pattern[str]
    slicing: re.Pattern[str]
    checkpointing: re.Pattern[str]
    counted: list[tuple[str, list[re.Pattern[str]]]]  # request field → its patterns, number in group 1
    scratch: re.Pattern[str]
    methods: Table
    fine_tune: re.Pattern[str]
    training: re.Pattern[str]
    tasks: Table
    compare: re.Pattern[str]
    filler: re.Pattern[str]  # fullmatch: a word naming no model
    chit_chat: re.Pattern[str]  # thanks, greetings: text that asks nothing
    off_topic: Table  # questions outside ML sizing: rendering, buying hardware, payment
    unsized: Table  # kinds of models not sized yet ("whisper"): said so, not guessed
    ram_offload: Table = field(default_factory=list)  # llama.cpp -ngl / --n-cpu-moe (issue 22)


def vocabulary() -> Vocabulary:
    """The vocabulary in use: the shipped file, or the one `GPUFIT_VOCABULARY` names."""
    return _load_named(os.environ.get(VOCABULARY_ENV) or str(VOCABULARY_FILE))


@lru_cache(maxsize=4)
def _load_named(path: str) -> Vocabulary:  # called per word of long texts: no `Path` built each time
    return _load(Path(path))


def load_vocabulary(path: str | Path = VOCABULARY_FILE) -> Vocabulary:
    """Read and validate a vocabulary file (once per path); `CatalogError` names what is wrong."""
    return _load(Path(path))


@lru_cache(maxsize=4)
def _load(path: Path) -> Vocabulary:
    rows = {name: _load_table(path, raw, name) for raw in [_read(path)] for name in _TABLES}
    return _compile(path, rows)


def _read(path: Path) -> dict[str, Any]:
    raw = read_toml(path)
    unknown = [k for k in raw if k not in _TABLES]
    if unknown:
        raise CatalogError(
            f"{path}: unknown table [[{unknown[0]}]]; a vocabulary file holds {', '.join(_TABLES)}",
            field=unknown[0],
        )
    return raw


def _load_table(path: Path, raw: dict[str, Any], table: str) -> list[Any]:
    rows = raw.get(table)
    if not isinstance(rows, list) or not rows:
        raise CatalogError(f"{path}: expected a non-empty [[{table}]] array", field=table)
    out = []
    for index, row in enumerate(rows, start=1):
        value = row.get("value", "?") if isinstance(row, dict) else "?"
        try:
            out.append(_TABLES[table].model_validate(row))
        except ValidationError as e:
            first = e.errors()[0]
            where = ".".join(str(p) for p in first["loc"]) or "(row)"
            raise CatalogError(
                f"{path}: [[{table}]] row {index} (value={value!r}): {where}: {first['msg']}", field=where
            ) from e
    return out


def _compile(path: Path, rows: dict[str, list[Any]]) -> Vocabulary:
    def table(name: str) -> Table:
        out = [(_words(row.regex()), row.value) for row in rows[name]]
        _TABLE_GATES[id(out)] = (out, _words(joined(name)))
        return out

    def joined(name: str) -> str:
        return "|".join(row.regex() for row in rows[name])

    negation = r"(?:(?P<neg>" + joined("negation") + r")[\s_-]+)?"

    def switch(*alternatives: str) -> re.Pattern[str]:
        return gated(_words(negation + "(?:" + "|".join(alternatives) + ")"), "|".join(alternatives))

    numbers: dict[str, str] = {}
    for index, row in enumerate(rows["number"], start=1):
        for word in row.words:
            if numbers.setdefault(word, str(row.value)) != str(row.value):
                raise CatalogError(
                    f"{path}: [[number]] row {index} (value={row.value!r}): words: "
                    f"{word!r} already means {numbers[word]}",
                    field="words",
                )
    counted: dict[str, list[re.Pattern[str]]] = {}
    for row in rows["count"]:
        between = f"(?:{row.between})?" if row.between else ""
        if row.position == "after":
            regex = r"(\d+)\s*" + between + "(?:" + row.regex() + ")"
        else:
            regex = "(?:" + row.regex() + r")\s*" + between + r"[=:]?\s*(\d+)"
        counted.setdefault(row.value, []).append(gated(_words(regex), row.regex()))
    return Vocabulary(
        number_words=re.compile(r"(?<!\w)(?:" + "|".join(map(re.escape, numbers)) + r")(?!\w)"),
        number_values=numbers,
        model_names=[
            (re.compile(r"(?<!\w)(?:" + r.regex() + _NO_LETTER_AFTER), r.value)
            for r in (*rows["model_name"], *rows["card_name"])
        ],
        any_model_name=re.compile(
            r"(?<!\w)(?:" + joined("model_name") + "|" + joined("card_name") + _NO_LETTER_AFTER
        ),
        engines=table("engine"),
        optimizers=table("optimizer"),
        gguf=_words(joined("gguf")),
        precisions=table("precision"),
        sharding=table("sharding"),
        attention=table("attention"),
        offload=[(switch(row.regex()), row.value) for row in rows["offload"]],
        tiling=switch(joined("tiling")),
        slicing=switch(joined("slicing")),
        checkpointing=switch(joined("checkpointing")),
        counted=list(counted.items()),
        scratch=_words(joined("scratch")),
        methods=table("method"),
        fine_tune=_words(joined("fine_tune")),
        training=_words(joined("training")),
        tasks=table("task"),
        compare=_words(joined("compare")),
        filler=re.compile("(?:" + joined("filler") + ")"),
        chit_chat=_words(joined("chit_chat")),
        off_topic=table("off_topic"),
        unsized=table("unsized"),
        ram_offload=table("ram_offload"),
    )


# --- grammar: settings whose shape is fixed --------------------------------------------------------

_BIT = r"[\s_-]?(?:bit|бит)\w*"
_KV_VALUE = r"(fp8|fp16|bf16|int8|int4|8" + _BIT + r"|4" + _BIT + ")"
_KV_CACHE = [
    _words(r"kv[\s_-]*(?:cache|кэш\w*|кеш\w*)?[\s_-]*(?:in[\s_-]+|в[\s_-]+)?" + _KV_VALUE),
    _words(_KV_VALUE + r"[\s_-]*kv(?:[\s_-]*(?:cache|кэш\w*|кеш\w*))?"),
]
_GGUF_OF = {Precision.INT8: Precision.Q8_0, Precision.INT4: Precision.Q4_K_M}
_LORA_RANK = _words(r"(?:lora[\s_-]*)?(?:rank|ранг\w*)\s*[=:]?\s*(\d+)", r"r\s*=\s*(\d+)")

_RESOLUTION = re.compile(
    r"(?<![\w.])(\d{2,12})\s*(?:x|на|by)\s*(\d{2,12})(?![\d.])"
    r"(?!\s*(?:[bm](?!\w)|x|gpu|гпу|карт|видеокарт|card))"
)
_VIDEO_P = re.compile(r"(?<![\w.])(\d{3,4})p(?!\w)")
_BARE_NUMBER = re.compile(r"(?<![\w.])(\d{3,})(?![\w.])")
_BARE_K = re.compile(r"(?<![\w.])(\d+(?:\.\d+)?)(k|m)(?![\w.])")

# "на двух", "on 4": a small count after "на"/"on" with no noun is cards ("на двух картах" said short)
_ON_CARDS = _words(r"(?:на|on)\s+(\d{1,2})(?!\s*(?:gb|гб|gib|гиб|g|г|гиг\w*|%|процент\w*)(?!\w))")

_SEQ_LEN = [
    _words(r"(?:max[\s_-]*)?seq(?:uence)?[\s_-]*(?:len(?:gth)?)?\s*[=:]?\s*" + _NUM_UNIT),
    _words(r"(?:длин\w*\s+)?последовательност\w*\s*[=:]?\s*" + _NUM_UNIT),
]
_CONTEXT = [
    _words(
        r"(?:контекст\w*|context(?:[\s_-]*(?:length|len|window|size))?|ctx|num[\s_-]*ctx|"
        r"max[\s_-]*model[\s_-]*len|окн\w*(?:\s+контекст\w*)?)\s*[=:]?\s*(?:в\s+|of\s+|на\s+|до\s+|up\s+to\s+)?"
        + _NUM_UNIT
        + r"(?:\s*(?:токен\w*|tokens?))?"
    ),
    gated(
        _words(_NUM_UNIT + r"\s*(?:токен\w*\s+|tokens?\s+)?(?:контекст\w*|context|ctx)"),
        r"контекст|context|ctx",
    ),
    gated(_words(_NUM_UNIT + r"\s*(?:токен\w*|tokens?)"), r"токен|token"),
]
