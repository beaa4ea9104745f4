"""The words the parser knows, read from `core/data/vocabulary.toml`.

The word lists (engines, precisions, methods, tasks, counts, number words, filler…) are data: rows
of plain `words` (a trailing "*" allows any ending) and, where a word is not enough, `pattern`s
(regular expressions), each row with the `value` its words mean. The file is validated when it is
loaded, once: a bad row raises `CatalogError` naming the file, the table, the row and the field.
`GPUFIT_VOCABULARY` names another file (an operator's, or a test's) in place of the shipped one.

The grammar is not here but in `core.parse.grammar` (how a number carries its unit, a KV-cache
setting, a LoRA rank, a resolution); the regex helpers and gates are `core.parse.patterns`.
"""

from __future__ import annotations

import os
import re
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
from core.parse.patterns import (
    _TABLE_GATES,
    Table,
    _compiles,
    _word_regex,
    _words,
    gated,
    spelling,
    table_gate,
)

VOCABULARY_FILE = DATA_DIR / "vocabulary.toml"
VOCABULARY_ENV = "GPUFIT_VOCABULARY"  # another vocabulary file in place of the shipped one
# a name may run into a number ("ллама3", "ван2.1"), not into more letters ("ламповый")
_NO_LETTER_AFTER = r")(?![^\W\d_])"
__all__ = [  # the helpers that lived here before core.parse.patterns, still importable from here
    "VOCABULARY_ENV",
    "VOCABULARY_FILE",
    "Table",
    "Vocabulary",
    "gated",
    "load_vocabulary",
    "spelling",
    "table_gate",
    "vocabulary",
]


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
