"""The page's JSON: one layout of the same `Answer` the chat and the picture show, beside the
contract's own figures.

`page(result, answer, catalog)` is the body of `POST /app/api/answer` (README, "Mini App"): the
contract's `total_bytes`, `breakdown`, `verdicts` and `recommendation` as `core.contract.Result`
dumps them, and the display fields of `core.language.answer.Answer` — the first line (`lead`, `verdict`), the
stacked bar's parts (the picture's: `core.layouts.picture.layout` reads the same `parts`/`part_codes`/
`part_bytes`), each card drawn against it with its usable memory and fit bands, the offer, the
speed and the top mitigations. Nothing is computed here that the answer does not say.

The request travels in URLs compactly (`encode`/`decode`: base64url JSON of the fields set), so
"🎛 Калькулятор" under an answer opens the page on that answer's request.
"""

from __future__ import annotations

import base64
import binascii
import json
from typing import Any

from core.catalogue.catalog import Catalog
from core.contract import Request, Result
from core.language.answer import Answer
from core.language.answer_breakdown import CardFit
from core.language.phrases import format_bytes
from core.layouts.picture import NO_VERDICT_COLOUR, OTHER_COLOUR, PART_COLOURS, STACK_COLOURS, VERDICT_COLOURS

MAX_ENCODED = 2048  # characters of an encoded request read from a URL (a request is ~100)
PAGE_FIELDS = (
    "task", "model", "method", "precision", "context_length", "concurrency", "batch_size", "seq_len",
    "resolution", "frames", "images", "gpus", "num_gpus",
)  # fmt: skip
"""The request fields the page has controls for: what a link to it carries."""


def encode(request: Request | dict[str, Any]) -> str:
    """The page's fields of `request` (those set), as base64url JSON without padding."""
    fields = (
        request.model_dump(mode="json", exclude_defaults=True) if isinstance(request, Request) else request
    )
    kept = {k: v for k, v in fields.items() if k in PAGE_FIELDS and v is not None}
    raw = json.dumps(kept, separators=(",", ":"), ensure_ascii=False).encode()
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


def decode(text: str) -> dict[str, Any] | None:
    """The fields `encode` wrote (page fields only), or None when `text` is not such a string."""
    if not text or len(text) > MAX_ENCODED:
        return None
    try:
        fields = json.loads(base64.urlsafe_b64decode(text + "=" * (-len(text) % 4)))
    except (binascii.Error, ValueError, RecursionError):
        return None
    if not isinstance(fields, dict):
        return None
    return {k: v for k, v in fields.items() if k in PAGE_FIELDS}


def part_colour(code: str) -> str:
    if code.startswith("extra_models:"):
        return STACK_COLOURS[int(code.split(":", 1)[1]) % len(STACK_COLOURS)]
    return PART_COLOURS.get(code, OTHER_COLOUR)


def _card(card: CardFit, catalog: Catalog, lang: str) -> dict[str, Any]:
    comfortable, tight = catalog.ranking.bands
    return {
        "config": card.config,
        "count": card.count,
        "need_bytes": card.need_bytes,
        "need": format_bytes(card.need_bytes, lang),
        "usable_bytes": card.usable_bytes,
        "usable": format_bytes(card.usable_bytes, lang),
        # Up to `comfortable_bytes` per card it fits; up to `tight_bytes`, tightly; past it, not.
        "comfortable_bytes": int(card.usable_bytes * (1 - comfortable)),
        "tight_bytes": int(card.usable_bytes * (1 - tight)),
        "verdict": card.verdict,
        "colour": VERDICT_COLOURS.get(card.verdict, NO_VERDICT_COLOUR),
        "own": card.own,
        "as_asked": card.as_asked,
        "line": card.line,
    }


def page(result: Result, answer: Answer, catalog: Catalog) -> dict[str, Any]:
    """The answer as the page shows it, with the contract's figures (see the module doc)."""
    lang = answer.lang
    offer = answer.offer
    return {
        "lead": answer.lead,
        "need": answer.need,
        "settings": answer.settings,
        "verdict": answer.verdict,
        "colour": VERDICT_COLOURS.get(answer.verdict or "", NO_VERDICT_COLOUR),
        "parts_title": answer.parts_title,
        "parts": [
            {"code": code, "label": name, "size": size, "bytes": n, "colour": part_colour(code)}
            for (name, size), code, n in zip(answer.parts, answer.part_codes, answer.part_bytes, strict=True)
        ],
        "cards": [_card(card, catalog, lang) for card in answer.cards],
        "offer": None
        if offer is None
        else {
            "config": offer.config,
            "price": offer.price,
            "url": offer.url,
            "speed": offer.speed,
            "offer_id": offer.offer_id,
            "in_offers": offer.in_offers,
        },
        "tight": answer.tight,
        "taken": answer.taken,
        "speed": answer.speed,
        "mitigations_title": answer.mitigations_title,
        "mitigations": list(answer.mitigations),
        "request": result.request.model_dump(mode="json"),
        "total_bytes": result.total_bytes,
        "breakdown": result.breakdown,
        "verdicts": [v.model_dump(mode="json") for v in result.verdicts],
        "recommendation": None
        if result.recommendation is None
        else result.recommendation.model_dump(mode="json"),
    }


def link(base_url: str, request: Request | dict[str, Any]) -> str:
    """The page's URL opening on `request` ("🎛 Калькулятор" under an answer)."""
    return f"{base_url}{'&' if '?' in base_url else '?'}r={encode(request)}"
