"""What a lead row keeps besides the contact: the key that makes a repeat the same lead, and the
summary of the answer it came with (flat, for the admin stats, the CSV export and the card)."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from typing import Any

from bot.keyboards import shown_offer
from bot.leads.contacts import Contact
from core.contract import Result
from core.language.answer import build_answer, headline_settings
from core.language.cards import config_text, price_of

WORKLOAD_FIELDS = ("context_length", "concurrency", "batch_size", "seq_len", "resolution", "images", "frames")


def dedup_key(telegram_id: int, request: Mapping[str, Any] | None, contact: Contact) -> str:
    """Same user, configuration and contact: the same lead (within bot.db.leads.DEDUP_WINDOW)."""
    canonical = json.dumps(
        [telegram_id, request or {}, contact.kind, contact.value.lower()], sort_keys=True, ensure_ascii=True
    )
    return hashlib.sha256(canonical.encode()).hexdigest()[:40]


def summary(result: Result | None, request: Mapping[str, Any] | None, lang: str) -> dict[str, Any]:
    """What the lead row keeps of its configuration (flat, for the admin stats and the CSV export):
    model, task, precision, workload, the recommended config / offer id / price, the chosen offer (the
    one the rent button showed), total_bytes, verdict; and the lines the card shows (in `lang`)."""
    if result is None:
        return {}
    filled = result.request
    rec = result.recommendation
    out: dict[str, Any] = {
        "model": result.model.name,
        "model_id": str(request.get("model")) if request else None,
        "task": str(filled.task),
        "precision": str(filled.precision) if filled.precision is not None else None,
        "workload": {
            name: getattr(filled, name)
            for name in WORKLOAD_FIELDS
            if request and request.get(name) is not None and getattr(filled, name, None) is not None
        },
        "total_bytes": result.total_bytes,
        "verdict": (result.target.verdict if result.target else rec.verdict if rec else "does_not_fit"),
        "headline": headline_settings(result, lang),
    }
    if rec is not None:
        out.update(
            recommended_config=f"{rec.count}x {rec.gpu}",
            recommended_offer_id=rec.offer_id,
            recommended_text=config_text(rec.count, rec.gpu_name, lang),
            price_per_hour=rec.price_per_hour,
            currency=rec.currency,
            price_is_from=rec.price_is_from,
            price_text=price_of(rec, lang),
            chosen_offer=shown_offer(result),
        )
    if result.target is not None:
        out["target_config"] = f"{result.target.count}x {result.target.gpu}"
    answer = build_answer(result, lang)
    out["lead_line"] = answer.lead
    return out
