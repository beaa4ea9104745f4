"""Model sizes as people write them ("7b", "1.5B", "350m", "8x7b", "405 млрд"): the one reader of a
size, wherever it is written — a word of a catalogue name, free text (the parser normalises "70б",
"70 млрд" to "70b" first) and a whole `model` field (`core.model.resolve.parse_size`)."""

from __future__ import annotations

import re
from dataclasses import dataclass

_HUGE = 10**30  # a number longer than 30 digits is absurd: read as this, so it is reported, not computed
_SIZE_NUMBER = r"\d+(?:\.\d+)?"
_PARAMS = r"(?:\s*(?:params|parameters|параметр\w*))?"
# in text: a mixture of experts, "8x7b" (experts × parameters of each)...
SIZE_MOE = re.compile(r"(?<![\w.])(?P<experts>\d{1,3})\s*x\s*(?P<each>\d{1,6}(?:\.\d+)?)\s?b(?!\w)")
# ...or a dense size, "70b", "350m" ("1m" alone is rather a context, so millions need two digits)
SIZE = re.compile(r"(?<![\w.])(?:(?P<b>" + _SIZE_NUMBER + r")\s?b|(?P<m>\d{2,})\s?m)" + _PARAMS + r"(?!\w)")
# a word of a name: "70b", "8x7b", "350m"
_SIZE_WORD = re.compile(r"^(\d+x)?" + _SIZE_NUMBER + "[bm]$")
# a whole field, as people type it: units in words, either language, a decimal comma
_SIZE_FIELD = re.compile(
    r"""^\s*(?:(?P<experts>\d+)\s*[x×х]\s*)?
    (?P<number>\d+(?:[.,]\d+)?)\s*
    (?P<unit>b|bn|billion|б|млрд|миллиард\w*|m|mn|million|м|млн|миллион\w*|t|trillion|трлн)\.?"""
    + _PARAMS
    + r"\s*$",
    re.IGNORECASE | re.VERBOSE,
)
_UNIT_TO_BILLIONS = {"b": 1.0, "m": 1e-3, "t": 1e3}


@dataclass(frozen=True)
class Size:
    """A model size: billions of parameters (of each expert, for a mixture of experts)."""

    billions: float
    experts: int | None = None

    @property
    def total_b(self) -> float:
        """All parameters, in billions (nominal for a mixture: "8x7b" is 56)."""
        return self.billions if self.experts is None else float(self.experts) * self.billions

    @property
    def word(self) -> str:
        """The size as a model field: "70B", "1.5B", "8x7B"."""
        return f"{self.experts}x{self.billions:g}B" if self.experts is not None else f"{self.total_b:g}B"


def _size_number(digits: str) -> float:
    return float(_HUGE) if len(digits) > 30 else float(digits)


def size_of(match: re.Match[str]) -> Size:
    """The size a match of `SIZE_MOE` or `SIZE` reads."""
    if match.re is SIZE_MOE:
        return Size(_size_number(match["each"]), int(_size_number(match["experts"])))
    if match["m"]:
        return Size(_size_number(match["m"]) / 1000)
    return Size(_size_number(match["b"]))


def find_size(text: str) -> Size | None:
    """The first size in normalised text, a mixture of experts first: "mixtral 8x7b" → 8 × 7B."""
    match = SIZE_MOE.search(text) or SIZE.search(text)
    return size_of(match) if match else None


def read_size(field: str) -> Size | None:
    """A whole field that is a size: "13B", "1,5B", "405 млрд", "350m", "1.8T", "8х22b"; else None."""
    match = _SIZE_FIELD.match(field)
    if not match:
        return None
    unit = match["unit"].lower()
    if unit in ("m", "mn", "million", "м", "млн") or unit.startswith("миллион"):
        unit = "m"
    elif unit in ("t", "trillion", "трлн"):
        unit = "t"
    else:
        unit = "b"
    billions = float(match["number"].replace(",", ".")) * _UNIT_TO_BILLIONS[unit]
    return Size(billions, int(match["experts"]) if match["experts"] else None)


def is_size_word(word: str) -> bool:
    """Whether a word of a name is a size: "70b", "8x7b", "350m"."""
    return _SIZE_WORD.match(word) is not None
