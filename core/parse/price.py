"""Price questions: "сколько стоит аренда h100?", "прайс", "how much is an H100 per hour".

`price_question(text)` says whether a message asks what renting costs — a price word
(`core/data/prices.toml`), no word about memory, and no model or workload to size (those are
answered by the estimator, whose answer carries the price) — and which cards and how many it names
(read by the parser, `parse_partial`). The price list itself is `core.language.prices`.
"""

from __future__ import annotations

import re
import tomllib
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from core.catalogue.catalog import Catalog
from core.catalogue.load import DATA_DIR
from core.errors import CatalogError, ParseError
from core.parse.reading import catalog_or_default, read
from core.parse.text import _normalize

PRICES_FILE = DATA_DIR / "prices.toml"
WORD_LISTS = ("price", "month", "not_price", "rent_buy")
# Request fields that make a message a sizing or time & cost question, not a price question.
SIZED_FIELDS = ("model", "extra_models", "examples", "dataset_tokens", "requests_per_day", "outputs")
MAX_PRICE_TEXT = 300  # a price question is short; a longer text is a question for the estimator


@dataclass(frozen=True)
class PriceQuestion:
    gpus: tuple[str, ...] = ()  # GPU ids named (none: every offer)
    count: int | None = None  # the cards asked for
    monthly: bool = False  # asked per month


@dataclass(frozen=True)
class _Words:
    price: re.Pattern[str]
    month: re.Pattern[str]
    not_price: re.Pattern[str]
    rent_buy: re.Pattern[str]


def _entry(entry: str) -> str:
    words = entry.split()
    out = []
    for word in words:
        stem = word.removesuffix("*")
        tail = r"\w*" if word.endswith("*") else r"(?!\w)"
        start = r"(?<!\w)" if stem[:1].isalnum() else ""
        out.append(start + re.escape(stem) + tail)
    return r"\s+".join(out)


@lru_cache(maxsize=4)
def words(path: Path = PRICES_FILE) -> _Words:
    """The word lists, checked: each a non-empty list of non-empty strings (an error names the list)."""
    try:
        with path.open("rb") as f:
            raw = tomllib.load(f)
    except (OSError, tomllib.TOMLDecodeError) as e:
        raise CatalogError(f"{path}: {e}", field="prices") from e
    patterns = {}
    for name in WORD_LISTS:
        entries = raw.get(name)
        if (
            not isinstance(entries, list)
            or not entries
            or not all(isinstance(e, str) and e.strip() for e in entries)
        ):
            raise CatalogError(f"{path}: `{name}` must be a list of words", field=name)
        patterns[name] = re.compile("|".join(_entry(_normalize(e)) for e in entries))
    return _Words(**patterns)


def price_question(text: str, catalog: Catalog | None = None) -> PriceQuestion | None:
    """The price question `text` asks, or None when it asks something else."""
    if len(text) > MAX_PRICE_TEXT:
        return None
    norm = _normalize(text)
    found = words()
    if not found.price.search(norm) or found.not_price.search(norm) or found.rent_buy.search(norm):
        return None
    try:
        read(text, catalog_or_default(catalog)).build()
        return None  # a model is named: the estimator answers, with the price
    except ParseError as e:
        # a model named but not pinned down, or a near miss of one: the estimator asks which
        if e.code not in ("missing_model", "unknown_model") or e.candidates:
            return None
        fields = e.partial
    if any(fields.get(name) for name in SIZED_FIELDS):
        return None
    named = fields.get("gpus")
    gpus = tuple(str(g) for g in named) if isinstance(named, list | tuple) else ()
    count = fields.get("num_gpus")
    cards = int(count) if isinstance(count, int | str) and count else None
    return PriceQuestion(gpus, cards, bool(found.month.search(norm)))


# "200 часов в месяц", "8 ч/день" is not read (a day is not a month): hours a month only
_HOURS = re.compile(r"(?<![\w.,])(\d{1,4})\s*(?:ч|час\w*|h|hrs?|hours?)(?!\w)")


@dataclass(frozen=True)
class RentBuyQuestion:
    gpus: tuple[str, ...] = ()  # GPU ids named (none: the last answer's offer)
    count: int | None = None
    hours_per_month: int | None = None  # None: not said (around the clock is assumed, and said)


def rent_buy_question(text: str, catalog: Catalog | None = None) -> RentBuyQuestion | None:
    """The "rent or buy?" question `text` asks ("купить или арендовать 8×H100?", "rent or buy for
    200 hours a month"), or None when it asks something else."""
    if len(text) > MAX_PRICE_TEXT:
        return None
    norm = _normalize(text)
    if not words().rent_buy.search(norm):
        return None
    fields: dict[str, object] = {}
    try:
        read(text, catalog_or_default(catalog)).build()
    except ParseError as e:
        fields = e.partial
    named = fields.get("gpus")
    gpus = tuple(str(g) for g in named) if isinstance(named, list | tuple) else ()
    count = fields.get("num_gpus")
    cards = int(count) if isinstance(count, int | str) and count else None
    hours = _HOURS.search(norm)
    return RentBuyQuestion(gpus, cards, int(hours.group(1)) if hours else None)
