"""The generic JSON webhook (CRM_WEBHOOK_URL): one POST per lead event, the payload as JSON, its key in
``Idempotency-Key``, and with CRM_WEBHOOK_SECRET an HMAC-SHA256 of the raw body (hex) in
``X-GPUFit-Signature: sha256=<hex>``. Any 2xx is taken; anything else is retried (same key)."""

from __future__ import annotations

import hashlib
import hmac
import json
from collections.abc import Mapping
from typing import Any

import aiohttp

from bot.crm import EVENTS, refusal

SIGNATURE_HEADER = "X-GPUFit-Signature"
EVENT_HEADER = "X-GPUFit-Event"


def signature(secret: str, body: bytes) -> str:
    return "sha256=" + hmac.new(secret.encode(), body, hashlib.sha256).hexdigest()


def encode(payload: Mapping[str, Any]) -> bytes:
    return json.dumps(payload, ensure_ascii=False, sort_keys=True).encode()


class Webhook:
    name = "webhook"
    events: tuple[str, ...] = EVENTS

    def __init__(self, url: str, secret: str | None = None) -> None:
        self.url = url
        self.secret = secret

    async def push(self, http: aiohttp.ClientSession, payload: Mapping[str, Any], key: str) -> str | None:
        body = encode(payload)
        headers = {
            "Content-Type": "application/json; charset=utf-8",
            "Idempotency-Key": key,
            EVENT_HEADER: str(payload["event"]),
        }
        if self.secret:
            headers[SIGNATURE_HEADER] = signature(self.secret, body)
        async with http.post(self.url, data=body, headers=headers) as response:
            if response.status // 100 != 2:
                raise await refusal(response, "webhook")
        return None
