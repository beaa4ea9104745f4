"""Free text → `Request`, in Russian and English.

`parse("llama 3 70b int4 32k контекст 4 пользователя")` gives task inference, model Llama 3 70B,
precision int4, context 32768, concurrency 4. Nothing but `ParseError` escapes: its `code` says what
is missing or wrong (empty, missing_model, ambiguous_model, unknown_model, too_large, invalid) or that
the text asks no sizing question (chit_chat, off_topic, unsized_model), its `partial` holds the
request fields understood so far and `candidates` the model ids to choose from. After an answer,
`follow_up("а в int4?", previous)` changes what the text names in the previous request;
`comparison("сравни 4090 48 и h100 для llama 3.1 70b")` and `comparison_follow_up("сравни с h100",
previous)` read a workload and the cards to compare. How the text is read and the bounds on that
work: `core.parse.reading`; the defaults a practitioner would assume (reported as notes by
`understand`) and the conventions for numbers: `core.parse.task`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from core.catalogue.catalog import Catalog
from core.catalogue.sizes import find_size
from core.contract import Assumption, CustomModel, Request, Task
from core.errors import ParseError
from core.parse.followup import (
    Comparison,
    FollowUp,
    comparison,
    comparison_follow_up,
    follow_up,
    follow_up_reading,
)
from core.parse.grammar import _BARE_NUMBER, _RESOLUTION, _VIDEO_P
from core.parse.reading import catalog_or_default, read
from core.parse.settings import _resolution, _resolution_in_bounds
from core.parse.text import (
    _NUMK,
    MAX_CANDIDATES,
    MAX_RESOLUTION_SIDE,
    MAX_TEXT_CHARS,
    MIN_BARE_NUMBER,
    MIN_RESOLUTION_SIDE,
    Fields,
    _limit,
    _normalize,
    _tokens_count,
)

__all__ = [
    "MAX_CANDIDATES",
    "MAX_RESOLUTION_SIDE",
    "MAX_TEXT_CHARS",
    "MIN_BARE_NUMBER",
    "MIN_RESOLUTION_SIDE",
    "Comparison",
    "FollowUp",
    "Understood",
    "comparison",
    "comparison_follow_up",
    "follow_up",
    "parse",
    "parse_context",
    "parse_count",
    "parse_partial",
    "parse_resolution",
    "parse_size_b",
    "understand",
    "understand_message",
]


@dataclass(frozen=True)
class Understood:
    """The request and the notes on what the parser assumed (shown with the answer)."""

    request: Request
    notes: list[Assumption] = field(default_factory=list)


def parse(text: str, catalog: Catalog | None = None) -> Request:
    """Free text → request; raises only `ParseError`."""
    return understand(text, catalog).request


def understand(text: str, catalog: Catalog | None = None) -> Understood:
    """Like `parse`, with the parser's assumptions as notes (`Assumption` codes `parse_*`)."""
    reading = read(text, catalog_or_default(catalog))
    return Understood(reading.build(), reading.notes)


def understand_message(
    text: str, previous: Request | None, catalog: Catalog | None = None
) -> Comparison | FollowUp | Understood:
    """What a message means after an answer (`previous`; None: there was none): a comparison
    (`comparison`, else `comparison_follow_up`), a change of the answer (`follow_up`), else a new
    question (`understand`), tried in that order. Raises what they raise; the text is read once for
    a follow-up and a new question, where the follow-up's reading is the question's."""
    found = catalog_or_default(catalog)
    wanted = comparison(text, found)
    if wanted is None and previous is not None:
        wanted = comparison_follow_up(text, previous, found)
    if wanted is not None:
        return wanted
    reading = None
    if previous is not None:
        changed, reading = follow_up_reading(text, previous, found)
        if changed is not None:
            return changed
        # read with the previous task as its base: the same reading unless that task was the default
        if reading is not None and reading.task_defaulted and previous.task is not Task.INFERENCE:
            reading = None
    if reading is None:
        reading = read(text, found)
    return Understood(reading.build(), reading.notes)


def parse_partial(text: str, catalog: Catalog | None = None) -> Fields:
    """The request fields `text` states, never raising: for free entry at any dialog step.

    A task the text does not name (nor its model implies) is left out: the dialog knows it better.
    """
    reading = read(text, catalog_or_default(catalog))
    try:
        reading.build()
        fields = dict(reading.fields)
    except ParseError as e:
        fields = dict(e.partial)
    if reading.task_defaulted:
        fields.pop("task", None)
    return fields


def parse_context(text: str) -> int | None:
    """A token count: "32k" → 32768, "128к" → 131072, "контекст 8192" → 8192."""
    match = re.search(_NUMK + r"(?!\s*b\b)", _normalize(text))
    value = _tokens_count(match) if match else None
    return value if value and value <= _limit(Request, "context_length") else None


def parse_count(text: str) -> int | None:
    """A small positive count: "4", "4 пользователя", "bs=8"."""
    match = re.search(r"(?<![\d.])(\d{1,7})(?![\d.])", _normalize(text))
    value = int(match.group(1)) if match else 0
    return value if 0 < value <= _limit(Request, "concurrency") else None


def parse_resolution(text: str) -> tuple[int, int] | None:
    """ "1024x1024", "1024×768", "1024 на 1024", "720p", or one number for a square."""
    norm = _normalize(text)
    for pattern in (_RESOLUTION, _VIDEO_P, _BARE_NUMBER):
        match = pattern.search(norm)
        if match:
            size = _resolution(match)
            return size if _resolution_in_bounds(size) else None
    return None


def parse_size_b(text: str) -> float | None:
    """Parameters in billions: "7b" → 7, "1.5B" → 1.5, "405 млрд" → 405, "8x7b" → 56 (nominal)."""
    size = find_size(_normalize(text))
    value = size.total_b if size else None
    return value if value and value <= _limit(CustomModel, "params_b") else None
