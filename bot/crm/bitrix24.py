"""Bitrix24 through an inbound webhook (BITRIX24_WEBHOOK_URL, https://<portal>/rest/<user>/<code>/):
REST methods are POSTed as JSON to ``<url><method>.json`` and answer ``{"result": …}`` or
``{"error": …, "error_description": …}`` (https://apidocs.bitrix24.ru, "crm.lead.add",
"crm.lead.list", "crm.duplicate.findbycomm").

A lead event `lead.created` becomes one Bitrix24 lead (`Bitrix24.push`): never made twice for one
reference, linked to the person's known contact, with their earlier leads named in COMMENTS, so the
sales team sees a returning customer instead of a stranger.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import aiohttp

from bot.crm import CRM_LEAD_CREATED, CrmRefused, refusal

ORIGINATOR_ID = "gpufit-bot"
SOURCE_ID = "OTHER"
"""The lead's source in Bitrix24's default list (CALL, EMAIL, WEB, ADVERTISING, …, OTHER)."""
VALUE_TYPE = "WORK"
MULTIFIELD = {"phone": ("PHONE", "PHONE"), "email": ("EMAIL", "EMAIL")}
"""contact kind -> (crm.duplicate.findbycomm type, crm.lead.add field)."""
UTM_FIELDS = ("utm_source", "utm_medium", "utm_campaign", "utm_content", "utm_term")
EARLIER_LISTED = 5


class Bitrix24:
    name = "bitrix24"
    events: tuple[str, ...] = (CRM_LEAD_CREATED,)

    def __init__(self, url: str, telegram_field: str | None, tr: Callable[..., str]) -> None:
        self.url = url if url.endswith("/") else url + "/"
        self.telegram_field = telegram_field
        self.tr = tr

    async def call(self, http: aiohttp.ClientSession, method: str, params: Mapping[str, Any]) -> Any:
        async with http.post(f"{self.url}{method}.json", json=params) as response:
            if response.status != 200:
                raise await refusal(response, method)
            answer = await response.json(content_type=None)
        if not isinstance(answer, dict) or "result" not in answer:
            raise CrmRefused(f"{method}: {str(answer)[:200]}")
        return answer["result"]

    async def _ids(self, http: aiohttp.ClientSession, filter_: Mapping[str, Any]) -> list[int]:
        rows = await self.call(http, "crm.lead.list", {"filter": dict(filter_), "select": ["ID"]})
        return sorted(int(row["ID"]) for row in rows or [])

    async def push(self, http: aiohttp.ClientSession, payload: Mapping[str, Any], key: str) -> str | None:
        """A `lead.created` event as one Bitrix24 lead; its id.

        1. ``crm.lead.list`` filtered on ORIGINATOR_ID/ORIGIN_ID (our reference): already made by an
           attempt whose answer was lost, it is not made again;
        2. duplicates of the person: ``crm.duplicate.findbycomm`` by phone or e-mail (contacts and
           leads), and ``crm.lead.list`` filtered on the field the operator keeps the Telegram id in
           (BITRIX24_TELEGRAM_FIELD): a known contact is linked (CONTACT_ID), earlier leads are named
           in COMMENTS;
        3. ``crm.lead.add`` with TITLE, NAME, PHONE/EMAIL (multifields ``[{VALUE, VALUE_TYPE}]``),
           COMMENTS, SOURCE_ID/SOURCE_DESCRIPTION, UTM_*, OPPORTUNITY/CURRENCY_ID,
           ORIGINATOR_ID/ORIGIN_ID and the Telegram id field.
        """
        reference = str(payload["reference"])
        made = await self._ids(http, {"ORIGINATOR_ID": ORIGINATOR_ID, "ORIGIN_ID": reference})
        if made:
            return str(made[0])
        contact = payload["contact"]
        contact_ids: list[int] = []
        earlier: set[int] = set()
        if contact["kind"] in MULTIFIELD:
            kind = MULTIFIELD[contact["kind"]][0]
            found = await self.call(
                http, "crm.duplicate.findbycomm", {"type": kind, "values": [contact["value"]]}
            )
            if isinstance(found, dict):  # {} comes back as [] when nothing is found
                contact_ids = sorted(int(i) for i in found.get("CONTACT", []))
                earlier.update(int(i) for i in found.get("LEAD", []))
        if self.telegram_field:
            earlier.update(await self._ids(http, {self.telegram_field: str(payload["telegram_user_id"])}))
        fields = self.fields(payload, contact_ids, sorted(earlier))
        params = {"fields": fields, "params": {"REGISTER_SONET_EVENT": "Y"}}
        lead_id = await self.call(http, "crm.lead.add", params)
        return str(lead_id)

    def fields(
        self, payload: Mapping[str, Any], contact_ids: list[int], earlier: list[int]
    ) -> dict[str, Any]:
        contact = payload["contact"]
        rec = payload.get("recommendation") or {}
        comments = [payload["title"]]
        if payload.get("comment"):
            comments.append(str(payload["comment"]))
        if payload.get("configuration"):
            comments.append(str(payload["configuration"].get("headline") or ""))
        if earlier:
            shown = ", ".join(str(i) for i in earlier[-EARLIER_LISTED:])
            comments.append(self.tr("crm-earlier-leads", ids=shown))
        name = payload.get("first_name") or (f"@{payload['username']}" if payload.get("username") else None)
        fields: dict[str, Any] = {
            "TITLE": payload["title"],
            "NAME": name or str(payload["telegram_user_id"]),
            "COMMENTS": "\n".join(line for line in comments if line),
            "SOURCE_ID": SOURCE_ID,
            "SOURCE_DESCRIPTION": self.tr("crm-source", source=payload.get("source") or "—"),
            "ORIGINATOR_ID": ORIGINATOR_ID,
            "ORIGIN_ID": payload["reference"],
        }
        if contact["kind"] in MULTIFIELD:
            fields[MULTIFIELD[contact["kind"]][1]] = [{"VALUE": contact["value"], "VALUE_TYPE": VALUE_TYPE}]
        else:
            fields["IM"] = [{"VALUE": contact["value"], "VALUE_TYPE": "TELEGRAM"}]
        for name_ in UTM_FIELDS:
            if payload["utm"].get(name_):
                fields[name_.upper()] = payload["utm"][name_]
        if rec.get("price_per_hour") is not None:
            fields["OPPORTUNITY"] = rec["price_per_hour"]
            fields["CURRENCY_ID"] = rec.get("currency") or "RUB"
        if contact_ids:
            fields["CONTACT_ID"] = contact_ids[0]
        if self.telegram_field:
            fields[self.telegram_field] = str(payload["telegram_user_id"])
        return fields
