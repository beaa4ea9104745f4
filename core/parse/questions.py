"""Inverse questions and time & cost in free text, ru and en.

- "какой максимальный контекст влезет в 4090 48 для llama 3.1 8b", "how many users can H100 serve
  with llama 3 70b int4 at 8k", "какая точность влезет", "самую большую модель на 24 ГБ": the words
  (`core/data/questions.toml`, `[[solve]]`) set `solve_for`; a bare memory size ("на 24 ГБ", "24gb")
  with no card named sets `memory_gb`. "Максимальный контекст" when training is the sequence length.
- "сколько будет стоить дообучение … на 10000 примеров по 1000 токенов, 3 эпохи", "1B токенов",
  "10k requests a day", "1000 картинок": the dataset, the requests a day, the outputs to price
  (`[[cost]]` words say it is a cost question, which also prices 1,000 images when no count is given).

Counts here are decimal ("10k примеров" = 10,000; "1B токенов" = 10⁹), unlike token lengths
("8k" context = 8,192, as model cards write them).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from core.catalogue.load import DATA_DIR, read_toml
from core.contract import Assumption, SolveFor, Task
from core.errors import CatalogError
from core.language.words import note
from core.parse.patterns import _compiles, _word_regex, gated, spelling
from core.parse.text import Fields, _number, _Text

QUESTIONS_FILE = DATA_DIR / "questions.toml"
DEFAULT_OUTPUTS = 1000  # "how much do images cost": the price of a thousand
# A dataset is at least this many tokens when no cost word says so ("1m токенов" could be a context)
MIN_DATASET_TOKENS = 10_000_000

_SCALE = {"k": 1e3, "m": 1e6, "b": 1e9, "t": 1e12}
# "10000", "10 000", "1.5", with an optional k/m/b/t suffix
_COUNT = r"(?<![\w.])(\d{1,3}(?:[ \u00a0]\d{3})+|\d+(?:\.\d+)?)\s?([kmbt])?(?![\w.])"
_EXAMPLE_WORD = (
    r"(?:примеров|примера|пример|образц\w*|сэмпл\w*|диалог\w*|строк\w*|examples?|samples?|"
    r"conversations?|dialogues?|rows|records|instructions|pairs)"
)
_EXAMPLES = gated(re.compile(_COUNT + r"\s*" + _EXAMPLE_WORD), _EXAMPLE_WORD)
_TOKEN_WORD = r"(?:токен\w*|tokens?)"
_PER_EXAMPLE = gated(
    re.compile(
        r"(?:по|длиной|длина|в\s+среднем|of|each\s+of|averag\w*|~)\s*"
        + _COUNT
        + r"\s*"
        + _TOKEN_WORD
        + r"(?:\s+(?:each|каждый|каждого))?"
        r"|" + _COUNT + r"\s*" + _TOKEN_WORD + r"\s+(?:each|на\s+пример|per\s+(?:example|sample|request))"
    ),
    _TOKEN_WORD,
)
_TOKENS = gated(re.compile(_COUNT + r"\s*" + _TOKEN_WORD), _TOKEN_WORD)
_EPOCH_WORD = r"(?:эпох\w*|epochs?)"
_EPOCHS = gated(
    re.compile(
        r"(?<![\w.])(\d+(?:\.\d+)?)\s*" + _EPOCH_WORD + "|" + _EPOCH_WORD + r"\s*[=:]?\s*(\d+(?:\.\d+)?)"
    ),
    _EPOCH_WORD,
)
_PER_DAY = r"\s*(?:в|a|per|/|за)\s*(?:день|сутки|day|d)(?![\w])"
_REQUEST_WORD = r"(?:запрос\w*|обращени\w*|сообщени\w*|requests?|queries|messages|calls)"
_REQUESTS = gated(re.compile(_COUNT + r"\s*" + _REQUEST_WORD + _PER_DAY), _REQUEST_WORD)
_OUTPUT_WORD = (
    r"(?:картин\w*|изображени\w*|фото\w*|images?|pictures?|pics|photos?|"
    r"клип\w*|ролик\w*|видео\w*|clips?|videos?)"
)
_OUTPUTS = gated(re.compile(_COUNT + r"\s*" + _OUTPUT_WORD), _OUTPUT_WORD)
_GB_WORD = r"(?:gb|gib|гб|гиб|гигабайт\w*|gigabytes?)"
_MEMORY = gated(
    re.compile(
        r"(?:(?:на|в|с|on|with|in)\s+)?(?<![\w.])(\d{1,4}(?:\.\d+)?)\s*"
        + _GB_WORD
        + r"(?:\s+(?:vram|видеопамят\w*|памят\w*|of\s+vram))?(?![\w])"
    ),
    _GB_WORD,
)


class _Row(BaseModel):
    model_config = ConfigDict(extra="forbid")

    value: str
    words: list[str] = []
    pattern: list[str] = []

    @field_validator("words")
    @classmethod
    def _spelled(cls, words: list[str]) -> list[str]:
        return [spelling(w) for w in words]

    @field_validator("pattern")
    @classmethod
    def _compile(cls, patterns: list[str]) -> list[str]:
        return [_compiles(p) for p in patterns]


class _SolveRow(_Row):
    value: Literal["context_length", "concurrency", "batch_size", "seq_len", "precision", "model"] = Field(
        description="a Request.solve_for"
    )


class _File(BaseModel):
    model_config = ConfigDict(extra="forbid")

    solve: list[_SolveRow]
    cost: list[_Row]


@dataclass(frozen=True)
class Questions:
    solve: tuple[tuple[re.Pattern[str], SolveFor], ...]
    cost: tuple[re.Pattern[str], ...]


def _regex(row: _Row) -> re.Pattern[str]:
    parts = [_word_regex(w) for w in row.words] + row.pattern
    return re.compile(r"(?<![\w.])(?:" + "|".join(parts) + r")(?![\w])")


@lru_cache(maxsize=1)
def questions() -> Questions:
    raw = read_toml(QUESTIONS_FILE)
    try:
        data = _File.model_validate(raw)
    except ValidationError as e:
        first = e.errors()[0]
        where = ".".join(str(p) for p in first["loc"])
        raise CatalogError(f"{QUESTIONS_FILE}: {where}: {first['msg']}", field=where) from e
    return Questions(
        solve=tuple((_regex(r), SolveFor(r.value)) for r in data.solve),
        cost=tuple(_regex(r) for r in data.cost),
    )


def _count(match: re.Match[str], group: int = 1) -> int:
    digits = re.sub(r"[ \u00a0]", "", match.group(group))
    value = _number(digits) * _SCALE.get(match.group(group + 1) or "", 1)
    return int(min(value, 1e18))


def take_cost(text: _Text, f: Fields) -> bool:
    """The dataset, requests a day and outputs named, before names and sizes are read ("1B токенов"
    is a dataset, not a model size). Whether a cost word asks how long or how much."""
    asks = any(text.take(p) for p in questions().cost)
    requests = text.take(_REQUESTS)
    if requests:
        f["requests_per_day"] = _count(requests)
        per = text.take(_PER_EXAMPLE)
        if per:
            f["tokens_per_request"] = _count(per, 1 if per.group(1) else 3)
    examples = text.take(_EXAMPLES)
    if examples:
        f["examples"] = _count(examples)
        per = text.take(_PER_EXAMPLE)
        if per:
            f["tokens_per_example"] = _count(per, 1 if per.group(1) else 3)
    if not examples and not requests:  # "1B токенов": the dataset itself
        dataset = text.take(_TOKENS, lambda m: asks or _count(m) >= MIN_DATASET_TOKENS)
        if dataset:
            f["dataset_tokens"] = _count(dataset)
    epochs = text.take(_EPOCHS)
    if epochs:
        f["epochs"] = float(epochs.group(1) or epochs.group(2))
    outputs = text.take(_OUTPUTS, lambda m: asks) if asks else None
    if outputs:
        f["outputs"] = _count(outputs)
    return asks


def take_solve(text: _Text, f: Fields) -> None:
    """`solve_for` from the words; a bare memory size as the card when no GPU is named."""
    for pattern, field in questions().solve:
        if text.take(pattern):
            f.setdefault("solve_for", field)
    if "solve_for" in f and "gpus" not in f:
        memory = text.take(_MEMORY)
        if memory:
            f["memory_gb"] = float(memory.group(1))


def settle(f: Fields, asks_cost: bool) -> list[Assumption]:
    """After the task is known: a training "context" question is the sequence length; inference
    "batch" is users; a cost question about images with no count prices a thousand. Returns what
    the answer should say: a cost question without the work to price asks for it."""
    task = f.get("task")
    solve = f.get("solve_for")
    if task == Task.TRAINING and solve == SolveFor.CONTEXT_LENGTH:
        f["solve_for"] = SolveFor.SEQ_LEN
    if task == Task.INFERENCE and solve == SolveFor.BATCH_SIZE:
        f["solve_for"] = SolveFor.CONCURRENCY
    if task == Task.INFERENCE and solve == SolveFor.SEQ_LEN:
        f["solve_for"] = SolveFor.CONTEXT_LENGTH
    if solve is not None and f.get("solve_for") in (SolveFor.CONTEXT_LENGTH, SolveFor.SEQ_LEN):
        f.pop(str(f["solve_for"]), None)  # the value asked for is the one to find
    generation = task in (Task.IMAGE_GENERATION, Task.VIDEO_GENERATION)
    if asks_cost and generation and "outputs" not in f:
        f["outputs"] = DEFAULT_OUTPUTS
    if not generation:
        f.pop("outputs", None)
    if task != Task.TRAINING:
        for name in ("examples", "tokens_per_example", "dataset_tokens"):
            f.pop(name, None)
    if task != Task.INFERENCE:
        for name in ("requests_per_day", "tokens_per_request"):
            f.pop(name, None)
    priced = any(f.get(n) for n in ("examples", "dataset_tokens", "requests_per_day", "outputs"))
    if asks_cost and not priced and task in (Task.TRAINING, Task.INFERENCE):
        return [note(f"parse_cost_needs_{'dataset' if task == Task.TRAINING else 'requests'}")]
    return []
