"""The phrasing corpus (tests/core/fixtures/phrasings.toml): how the bot reads each phrasing, and whether
that is what it means. Used by tests/core/test_phrasings.py and bench/phrasings.py (which also runs it
against older code, so this reads the parser only through `core.parse`'s public functions)."""

from __future__ import annotations

import tomllib
from pathlib import Path
from typing import Any

from core.contract import CustomModel, Request
from core.errors import ParseError
from core.parse import FollowUp, understand, understand_message

CORPUS = Path(__file__).parent / "fixtures" / "phrasings.toml"
READINGS = ("question", "follow-up", "ask model", "not understood", "chit-chat", "off-topic", "speech")
FIELDS = {  # a corpus key → the request field it checks
    "model": "model",
    "task": "task",
    "precision": "precision",
    "context": "context_length",
    "users": "concurrency",
    "gpu": "gpus",
    "count": "num_gpus",
    "method": "method",
    "images": "images",
    "resolution": "resolution",
}
_CODES = {  # a parse error's code → its reading
    "missing_model": "ask model",
    "ambiguous_model": "ask model",
    "unknown_model": "not understood",
    "chit_chat": "chit-chat",
    "off_topic": "off-topic",
    "unsized_model": "speech",
}


def cases() -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = tomllib.loads(CORPUS.read_text(encoding="utf-8"))["cases"]
    for row in rows:
        unknown = set(row) - {*FIELDS, "text", "after", "reading", "offers", "topic", "unread"}
        if unknown or row.get("reading", "question") not in READINGS:
            raise ValueError(f"{CORPUS}: bad row {row!r}")
    return rows


def reading_of(text: str, after: str | None = None) -> dict[str, Any]:
    """What the bot understands: `reading` and the fields (corpus keys) of the request or error."""
    try:
        previous = understand(after).request if after else None
        understood = understand_message(text, previous)
    except ParseError as e:
        found = _fields(e.partial)
        found.update(reading=_CODES.get(e.code, e.code), offers=list(e.candidates), topic=e.value)
        return found
    request = getattr(understood, "request", None)
    if not isinstance(request, Request):
        return {"reading": type(understood).__name__}
    found = _fields(request.model_dump(mode="json"))
    found["reading"] = "follow-up" if isinstance(understood, FollowUp) else "question"
    notes = getattr(understood, "notes", [])
    found["unread"] = " ".join(n.params["words"] for n in notes if n.code == "parse_unread") or None
    return found


def _fields(data: dict[str, Any]) -> dict[str, Any]:
    found: dict[str, Any] = {}
    for key, name in FIELDS.items():
        value = data.get(name)
        if isinstance(value, CustomModel):
            value = value.model_dump(mode="json")
        if name == "model" and isinstance(value, dict):
            value = f"{value.get('params_b', 0):g}B"
        if name == "gpus":
            value = value[0] if value else None
        found[key] = getattr(value, "value", value)
    return found


def mismatches(case: dict[str, Any]) -> list[str]:
    """What the bot's reading of `case` gets wrong (empty: read right)."""
    found = reading_of(case["text"], case.get("after"))
    wanted = case.get("reading", "question")
    wrong = [] if found["reading"] == wanted else [f"reading {found['reading']!r}, not {wanted!r}"]
    for key in FIELDS:
        if key in case and found.get(key) != case[key]:
            wrong.append(f"{key} {found.get(key)!r}, not {case[key]!r}")
    if "offers" in case and case["offers"] not in found.get("offers", []):
        wrong.append(f"offers {found.get('offers')!r}, not {case['offers']!r}")
    if "unread" in case and found.get("unread") != case["unread"]:
        wrong.append(f"unread {found.get('unread')!r}, not {case['unread']!r}")
    if "topic" in case and found.get("topic") != case["topic"]:
        wrong.append(f"topic {found.get('topic')!r}, not {case['topic']!r}")
    return wrong
