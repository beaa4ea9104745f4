"""`python -m core log [--lang ru|en] [--json] < file`: a pasted log answered as the bot answers it.

Exit status 0 when the log was read, 2 when its format is unknown (the clear reply is printed)."""

from __future__ import annotations

import dataclasses
import json
from typing import Any, TextIO

from core.catalogue.catalog import default_catalog

from .words import answer_log

EXIT_UNKNOWN = 2


def log_command(text: str, lang: str, out: TextIO, as_json: bool = False) -> int:
    answer = answer_log(text, default_catalog(), lang)
    if as_json:
        out.write(json.dumps(log_json(answer), ensure_ascii=False) + "\n")
    else:
        out.write(answer.text + "\n")
    return 0 if answer.advice is not None else EXIT_UNKNOWN


def log_json(answer: Any) -> dict[str, Any]:
    """What was read (bytes), the cards matched, the need, the offer, the mitigation codes."""
    a = answer.advice
    if a is None:
        return {"error": "unknown_log_format", "text": answer.text}
    return {
        "reading": dataclasses.asdict(a.reading),
        "cards": [g.id for g in a.cards],
        "need_bytes": a.need_bytes,
        "need": a.need,
        "short_bytes": a.short_bytes,
        "offer": answer.offer.id if answer.offer else None,
        "model": a.model.id if a.model else None,
        "actions": [{"code": x.code, **x.params} for x in a.actions],
        "mitigations": [m.action for m in a.result.mitigations] if a.result else [],
        "text": answer.text,
    }
