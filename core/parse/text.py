"""The text as the parser reads it: normalised spelling, numbers, and what is left to read."""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from pydantic import ValidationError

from core.contract import Assumption, Request, Task
from core.errors import ParseError
from core.parse.patterns import _GATES, _NUM_UNIT
from core.parse.vocabulary import vocabulary

Fields = dict[str, Any]

MAX_RESOLUTION_SIDE = 16_384  # no diffusion model renders beyond 16K a side; larger is a typo
MIN_RESOLUTION_SIDE = 64  # smaller is no image any diffusion model makes (latents are 1/8 of it)
MIN_BARE_NUMBER = 256  # a bare number this large is a context/resolution, smaller ones are counts
MAX_CANDIDATES = 8  # a clarifying question offers at most this many models
# A request fits in far less (a long one is ~100 characters); only this much of a message is read, so
# one 4,096-character Telegram message costs a few milliseconds, not a stall (note `parse_text_cut`).
MAX_TEXT_CHARS = 1024
_HUGE = 10**30  # any number longer than this is absurd; keeps int() off huge digit strings

# --- normalisation and numbers -------------------------------------------------------------------

_NUMK = r"(?<![\w.])" + _NUM_UNIT  # a count with an optional k/M suffix


def _cut(raw: str) -> tuple[str, bool]:
    """The first `MAX_TEXT_CHARS` characters of `raw`, ending between words; whether it was cut."""
    if len(raw) <= MAX_TEXT_CHARS:
        return raw, False
    head = raw[:MAX_TEXT_CHARS]
    if not raw[MAX_TEXT_CHARS].isspace():  # a word runs over the limit: leave it out whole
        words = head.rsplit(None, 1)
        head = words[0] if len(words) == 2 else head
    return head, True


def _normalize(text: str) -> str:
    """Lower case, one spelling for units: '128к' → '128k', '405 млрд' → '405b', '1024×1024' → 'x'."""
    text = unicodedata.normalize("NFKC", text).lower().replace("ё", "е")
    text = re.sub(r"(\d)\s*[×х*]\s*(?=\d)", r"\1x", text)
    text = re.sub(r"(\d),(\d{3})(?!\d)", r"\1\2", text)  # "32,768": thousands
    text = re.sub(r"(\d),(\d{1,2})(?!\d)", r"\1.\2", text)  # "1,5b": a decimal comma
    text = re.sub(r"(\d+)\s*\^\s*(\d+)", _power, text)
    text = re.sub(r"(\d)\s?к(?![а-я])", r"\1k", text)
    text = re.sub(r"(\d)\s*(?:млрд|миллиард\w*|billions?|bn)(?!\w)", r"\1b", text)
    text = re.sub(r"(\d)\s*(?:млн|миллион\w*|millions?)(?!\w)", r"\1m", text)
    text = re.sub(r"(\d)\s*(?:тыс\w*|thousands?)(?!\w)", r"\1k", text)
    text = re.sub(r"(\d)\s?б(?![а-я\d])", r"\1b", text)  # "7б" is 7B; "8 бит" bits, "8 б200" cards
    words = vocabulary()
    if words.any_model_name.search(text):  # one scan of the text, not one per family, when none is there
        for pattern, name in words.model_names:  # "лама 3 8б", "квен", "дипсик р1": the family names
            text = pattern.sub(name, text)
    return words.number_words.sub(lambda m: words.number_values[m.group(0)], text)  # "на двух картах"


def _power(match: re.Match[str]) -> str:
    """ "10^12" → its digits; an exponent past 30 is absurd and stays cheap."""
    base, exponent = match.group(1), match.group(2)
    digits = len(exponent) <= 2 and int(exponent) <= 30
    return str(int(base[:6]) ** int(exponent)) if digits else str(_HUGE)


def _number(digits: str) -> float:
    """Digits → a number, clamped so absurd input stays cheap and is reported, not computed."""
    return float(_HUGE) if len(digits) > 30 else float(digits)


def _tokens_count(match: re.Match[str]) -> int:
    suffix = match.group(2) if match.re.groups >= 2 else None
    value = _number(match.group(1)) * {"k": 1024, "m": 1024 * 1024}.get(suffix or "", 1)
    return int(min(value, _HUGE))


def _limit(model: Any, name: str) -> int:
    """The contract's upper bound on a field, so the limits live in one place."""
    for rule in model.model_fields[name].metadata:
        bound = getattr(rule, "le", None)
        if bound is not None:
            return int(bound)
    return _HUGE


@dataclass
class Reading:
    """What was understood; `build` turns it into a Request or the precise ParseError."""

    fields: Fields = field(default_factory=dict)
    notes: list[Assumption] = field(default_factory=list)
    error: ParseError | None = None
    task_word: Task | None = None  # "картинки", "inference": the task named, when no model says it
    task_defaulted: bool = False  # nothing named or implied a task: inference by default
    names_model: bool = False  # a model (or several to choose from) is named
    gpu_configs: list[tuple[str, int | None]] = field(default_factory=list)  # cards named, own counts
    unread: list[str] = field(default_factory=list)  # words left that are no filler: not understood

    def build(self) -> Request:
        if self.error:
            self.error.notes = list(self.notes)  # what was read is said when the rest is asked for
            raise self.error
        try:
            return Request(**self.fields)
        except ValidationError as e:
            raise _validation_error(e, self.fields) from None


def _validation_error(e: ValidationError, fields: Fields) -> ParseError:
    first = e.errors()[0]
    name = str(first["loc"][0]) if first["loc"] else "request"
    code = "too_large" if first["type"] in ("less_than_equal", "less_than") else "invalid"
    partial = {k: v for k, v in fields.items() if k != name}
    return ParseError(code, f"{name}: {first['msg']}", field=name, partial=partial)


class _Text:
    """The normalised text; matches are blanked out so nothing is read twice."""

    def __init__(self, text: str) -> None:
        self.rest = text

    def take(
        self,
        pattern: re.Pattern[str],
        accept: Callable[[re.Match[str]], bool] = lambda m: True,
    ) -> re.Match[str] | None:
        gate = _GATES.get(pattern)
        if gate is not None and gate.search(self.rest) is None:
            return None
        for match in pattern.finditer(self.rest):
            if accept(match):
                self.blank(match.start(), match.end())
                return match
        return None

    def blank(self, start: int, end: int) -> None:
        self.rest = self.rest[:start] + " " * (end - start) + self.rest[end:]
