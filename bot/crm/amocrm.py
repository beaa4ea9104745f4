"""amoCRM API v4 with a long-lived token (AMOCRM_DOMAIN + AMOCRM_TOKEN, ``Authorization: Bearer``;
https://www.amocrm.ru/developers/content/crm_platform/leads-api, "Комплексное добавление сделок").

A lead event `lead.created` becomes one deal:
1. ``GET /api/v4/leads?query=<reference>``: a deal already made by an attempt whose answer was lost
   (its name ends with our reference) is not made again (204 No Content: none);
2. the contact, found first (``GET /api/v4/contacts?query=``) by phone or e-mail, then by the
   Telegram id (where the operator keeps it in a contact field): the deal is linked to it, else a new
   contact is made with the deal;
3. ``POST /api/v4/leads/complex``: ``[{name, price, _embedded: {contacts: [...], tags: [...]}}]``;
   the tags name the source and the GPU.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import aiohttp

from bot.crm import CRM_LEAD_CREATED, TITLE_SEPARATOR, CrmRefused, refusal

FIELD_CODES = {"phone": "PHONE", "email": "EMAIL"}
ENUM_CODE = "WORK"
SOURCE_TAG = "tg:{source}"
GPU_TAG = "GPU {gpu}"


class AmoCrm:
    name = "amocrm"
    events: tuple[str, ...] = (CRM_LEAD_CREATED,)

    def __init__(self, base_url: str, token: str) -> None:
        self.base_url = base_url.rstrip("/")
        self.headers = {"Authorization": f"Bearer {token}"}

    async def _get(self, http: aiohttp.ClientSession, path: str, query: str) -> dict[str, Any]:
        url = f"{self.base_url}{path}"
        async with http.get(url, params={"query": query}, headers=self.headers) as response:
            if response.status == 204:
                return {}
            if response.status != 200:
                raise await refusal(response, f"GET {path}")
            answer = await response.json(content_type=None)
        return answer.get("_embedded") or {} if isinstance(answer, dict) else {}

    async def push(self, http: aiohttp.ClientSession, payload: Mapping[str, Any], key: str) -> str | None:
        reference = str(payload["reference"])
        name = f"{payload['title']}{TITLE_SEPARATOR}{reference}"
        for deal in (await self._get(http, "/api/v4/leads", reference)).get("leads", []):
            if str(deal.get("name", "")).endswith(reference):
                return str(deal["id"])
        contact_id = await self.find_contact(http, payload)
        lead = self.deal(payload, name, contact_id)
        url = f"{self.base_url}/api/v4/leads/complex"
        async with http.post(url, json=[lead], headers=self.headers) as response:
            if response.status != 200:
                raise await refusal(response, "POST /api/v4/leads/complex")
            answer = await response.json(content_type=None)
        if not isinstance(answer, list) or not answer or "id" not in answer[0]:
            raise CrmRefused(f"POST /api/v4/leads/complex: {str(answer)[:200]}")
        return str(answer[0]["id"])

    async def find_contact(self, http: aiohttp.ClientSession, payload: Mapping[str, Any]) -> int | None:
        queries = []
        if payload["contact"]["kind"] in FIELD_CODES:
            queries.append(str(payload["contact"]["value"]))
        queries.append(str(payload["telegram_user_id"]))
        for query in queries:
            contacts = (await self._get(http, "/api/v4/contacts", query)).get("contacts", [])
            if contacts:
                return int(min(int(c["id"]) for c in contacts))
        return None

    def deal(self, payload: Mapping[str, Any], name: str, contact_id: int | None) -> dict[str, Any]:
        rec = payload.get("recommendation") or {}
        contact: dict[str, Any]
        if contact_id is not None:
            contact = {"id": contact_id}
        else:
            who = payload.get("first_name") or payload.get("username") or str(payload["telegram_user_id"])
            contact = {"first_name": who}
            kind = payload["contact"]["kind"]
            if kind in FIELD_CODES:
                contact["custom_fields_values"] = [
                    {
                        "field_code": FIELD_CODES[kind],
                        "values": [{"value": payload["contact"]["value"], "enum_code": ENUM_CODE}],
                    }
                ]
            else:
                contact["first_name"] = f"{who} ({payload['contact']['value']})"
        tags = [{"name": SOURCE_TAG.format(source=payload.get("source") or "direct")}]
        if rec.get("gpu"):
            tags.append({"name": GPU_TAG.format(gpu=rec["gpu"])})
        deal: dict[str, Any] = {"name": name, "_embedded": {"contacts": [contact], "tags": tags}}
        if rec.get("price_per_hour") is not None:
            deal["price"] = round(float(rec["price_per_hour"]))
        return deal
