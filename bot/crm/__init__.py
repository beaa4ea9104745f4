"""CRM push: each lead event (``lead.created``; ``lead.claimed`` from the sales chat's claim) goes to
every CRM the operator set (a generic JSON webhook, Bitrix24, amoCRM) through bot.outbox, each with its
own delivery state (bot.db.models.CrmDelivery), apart from the sales chat's card.

One JSON document per event (`payload`) is what the webhook receives and what the Bitrix24 and amoCRM
adapters map to their APIs. A destination's `push` raises `CrmRefused` on any refusal (the outbox
backs off and retries; ``retry_after`` when the CRM said how long to wait) and returns the CRM's id
of the deal when it gives one. Each push is idempotent by its key: the webhook gets it in a header,
Bitrix24 and amoCRM are asked for a deal with it before one is made.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from datetime import datetime
from typing import Any, Protocol

import aiohttp

from bot.config import Settings
from bot.db.models import CRM_LEAD_CLAIMED, CRM_LEAD_CREATED, CRM_LEAD_QUALIFIED, Lead, User
from bot.keyboards import UTM_CAMPAIGN_DIRECT
from core.language.words import label

PAYLOAD_VERSION = 1
EVENTS = (CRM_LEAD_CREATED, CRM_LEAD_CLAIMED, CRM_LEAD_QUALIFIED)
TITLE_SEPARATOR = " · "
ERROR_BODY_CHARS = 200
"""How much of a refusal's body the error (and the admins' alert) keeps."""

Translate = Callable[..., str]


class CrmRefused(Exception):
    """The CRM did not take the event (an HTTP error, a timeout, the network); retried."""

    def __init__(self, message: str, *, retry_after: float | None = None) -> None:
        super().__init__(message)
        self.retry_after = retry_after


class Destination(Protocol):
    name: str
    """Its CrmDelivery.destination: webhook | bitrix24 | amocrm."""
    events: tuple[str, ...]
    """The events it takes (the others are not enqueued for it)."""

    async def push(self, http: aiohttp.ClientSession, payload: Mapping[str, Any], key: str) -> str | None:
        """Deliver one event, idempotent by ``key``; the CRM's id of the deal, if it says. Raises
        CrmRefused."""
        ...


def destinations(settings: Settings, tr: Translate) -> list[Destination]:
    """The CRMs the settings name (none: no CRM push)."""
    from bot.crm.amocrm import AmoCrm
    from bot.crm.bitrix24 import Bitrix24
    from bot.crm.webhook import Webhook

    out: list[Destination] = []
    if settings.crm_webhook_url:
        secret = settings.crm_webhook_secret.get_secret_value() if settings.crm_webhook_secret else None
        out.append(Webhook(settings.crm_webhook_url, secret))
    if settings.bitrix24_webhook_url:
        out.append(Bitrix24(settings.bitrix24_webhook_url, settings.bitrix24_telegram_field, tr))
    if settings.amocrm_domain and settings.amocrm_token:
        out.append(AmoCrm(settings.amocrm_domain, settings.amocrm_token.get_secret_value()))
    return out


def reference(lead: Lead) -> str:
    """The lead's reference in every CRM (and the base of its idempotency keys): its id and a part of
    its dedup key, so a database started anew never matches an old deal."""
    return f"gpufit-{lead.id}-{lead.dedup_key[:8]}"


def idempotency_key(lead: Lead, event: str) -> str:
    return f"{reference(lead)}:{event}"


def utm(lead: Lead) -> dict[str, str]:
    """The campaign fields the offer links carry (bot.keyboards.with_utm)."""
    out = {
        "utm_source": "telegram",
        "utm_medium": "bot",
        "utm_campaign": lead.source or UTM_CAMPAIGN_DIRECT,
    }
    offer = (lead.summary or {}).get("recommended_offer_id")
    if offer:
        out["utm_content"] = str(offer)
    return out


def title(lead: Lead, tr: Translate, lang: str) -> str:
    """One line in the sales language: "LoRA Llama 3.1 70B · 2× RTX 4090 48 GB · от 298 ₽/ч" (the
    method where the request names one, else the task)."""
    summary = lead.summary or {}
    if not summary.get("model"):
        return tr("crm-title-plain", id=lead.id)
    method = (lead.request or {}).get("method")
    what = label("method", str(method), lang) if method else label("task", str(summary.get("task")), lang)
    parts = [f"{what[:1].upper()}{what[1:]} {summary['model']}"]
    if summary.get("recommended_text"):
        parts.append(str(summary["recommended_text"]))
        if summary.get("price_text"):
            parts.append(str(summary["price_text"]))
    return TITLE_SEPARATOR.join(parts)


def recommendation(summary: Mapping[str, Any]) -> dict[str, Any] | None:
    config = summary.get("recommended_config")
    if not config:
        return None
    count, _, gpu = str(config).partition("x ")
    return {
        "offer_id": summary.get("recommended_offer_id"),
        "cards": int(count) if count.isdigit() else None,
        "gpu": gpu or None,
        "config": summary.get("recommended_text"),
        "price_per_hour": summary.get("price_per_hour"),
        "currency": summary.get("currency"),
        "price_is_from": bool(summary.get("price_is_from")),
        "price": summary.get("price_text"),
    }


def payload(
    lead: Lead,
    user: User | None,
    event: str,
    data: Mapping[str, Any],
    *,
    tr: Translate,
    lang: str,
) -> dict[str, Any]:
    """The event as the webhook receives it (README, "CRM"): the lead row as it was written, the user,
    the configuration as the answer stated it, in the sales language."""
    summary = lead.summary or {}
    configuration = None
    if summary.get("model"):
        configuration = {
            "model": summary.get("model"),
            "model_id": summary.get("model_id"),
            "task": summary.get("task"),
            "method": (lead.request or {}).get("method"),
            "precision": summary.get("precision"),
            "workload": summary.get("workload") or {},
            "headline": summary.get("headline"),
            "answer": summary.get("lead_line"),
        }
    return {
        "version": PAYLOAD_VERSION,
        "event": event,
        "event_data": dict(data),
        "idempotency_key": idempotency_key(lead, event),
        "reference": reference(lead),
        "lead_id": lead.id,
        "created_at": _iso(lead.created_at),
        "telegram_user_id": lead.telegram_id,
        "username": user.username if user is not None else None,
        "first_name": user.first_name if user is not None else None,
        "contact": {"kind": "telegram" if lead.contact_kind == "username" else lead.contact_kind,
                    "value": lead.contact},
        "comment": lead.comment,
        "kind": lead.kind,  # quote, or reservation (summary["reservation"]: the offer and the hold)
        "reservation": summary.get("reservation"),
        "qualification": {"when": lead.need_when, "for": lead.need_for},
        "language": (user.language or user.language_from_telegram) if user is not None else None,
        "source": lead.source,
        "utm": utm(lead),
        "configuration": configuration,
        "recommendation": recommendation(summary),
        "total_bytes": summary.get("total_bytes"),
        "verdict": summary.get("verdict"),
        "title": title(lead, tr, lang),
    }  # fmt: skip


def _iso(at: datetime) -> str:
    return at.isoformat(timespec="seconds").replace("+00:00", "Z")


async def refusal(response: aiohttp.ClientResponse, what: str) -> CrmRefused:
    """The CRM's HTTP error as a CrmRefused (Retry-After kept)."""
    body = (await response.text(errors="replace"))[:ERROR_BODY_CHARS]
    retry_after = None
    header = response.headers.get("Retry-After", "")
    if header.strip().isdigit():
        retry_after = float(header)
    return CrmRefused(f"{what}: HTTP {response.status} {body}".strip(), retry_after=retry_after)
