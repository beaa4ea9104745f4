"""Local fakes of the three CRMs the lead outbox pushes to (aiohttp servers on 127.0.0.1; never the
real network), each checking the requests as the vendor documents them and recording them:

- `FakeWebhook`: a JSON receiver that checks ``Idempotency-Key`` and the ``X-GPUFit-Signature``
  HMAC-SHA256 of the raw body; a repeat of a key is counted, not made a second deal.
- `FakeBitrix24`: an inbound webhook ``/rest/<user>/<code>/<method>.json`` with crm.lead.list,
  crm.duplicate.findbycomm and crm.lead.add (https://apidocs.bitrix24.ru): ``{"result": …}`` or
  ``{"error", "error_description"}``.
- `FakeAmoCrm`: ``GET /api/v4/leads|contacts?query=`` (204 when nothing matches) and
  ``POST /api/v4/leads/complex`` with ``Authorization: Bearer`` (amoCRM API v4).

`fail(status, times, body=…, headers=…)` answers the next requests with an error (401, 429 with
Retry-After, 5xx); `hang(times)` holds them past any client timeout; `lose_answer(times)` does the work
and then answers 500 (the CRM made the deal, the bot never heard): a retry must not make a second.
A request that breaks the documented shape is answered 400 and listed in `violations`.
"""

from __future__ import annotations

import asyncio
import hashlib
import hmac
import json
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

from aiohttp import web

Handler = Callable[[web.Request, Any], Awaitable[web.Response]]


@dataclass
class Seen:
    method: str
    path: str
    query: dict[str, str]
    headers: dict[str, str]
    body: Any
    raw: bytes = b""
    at: float = 0.0  # time.monotonic() when it came


@dataclass
class Fault:
    kind: str  # fail | hang | lose
    times: int
    status: int = 500
    body: Any = None
    headers: dict[str, str] = field(default_factory=dict)


class FakeCrm:
    """The server, the requests seen, the faults to inject."""

    def __init__(self) -> None:
        self.requests: list[Seen] = []
        self.violations: list[str] = []
        self.faults: list[Fault] = []
        self.answered = 0  # requests answered with success
        self._runner: web.AppRunner | None = None
        self._release = asyncio.Event()
        self.port = 0

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    async def __aenter__(self) -> FakeCrm:
        app = web.Application()
        app.router.add_route("*", "/{tail:.*}", self._handle)
        self._runner = web.AppRunner(app)
        await self._runner.setup()
        site = web.TCPSite(self._runner, "127.0.0.1", 0)
        await site.start()
        self.port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
        return self

    async def __aexit__(self, *exc: object) -> None:
        self._release.set()
        if self._runner is not None:
            await self._runner.cleanup()

    def fail(
        self, status: int, times: int = 1, *, body: Any = None, headers: dict[str, str] | None = None
    ) -> None:
        self.faults.append(Fault("fail", times, status, body, headers or {}))

    def passes(self, times: int) -> None:
        """Let the next ``times`` requests through (before the next fault)."""
        self.faults.append(Fault("pass", times))

    def hang(self, times: int = 1) -> None:
        self.faults.append(Fault("hang", times))

    def lose_answer(self, times: int = 1) -> None:
        self.faults.append(Fault("lose", times))

    def down(self, status: int = 503) -> None:
        """Every request fails until `up()`."""
        self.faults.append(Fault("fail", 10**9, status))

    def up(self) -> None:
        self.faults.clear()

    def bad(self, what: str) -> web.Response:
        self.violations.append(what)
        return web.json_response({"error": "BAD_SHAPE", "error_description": what}, status=400)

    async def _handle(self, request: web.Request) -> web.StreamResponse:
        raw = await request.read()
        try:
            body = json.loads(raw) if raw else None
        except ValueError:
            body = None
        seen = Seen(request.method, request.path, dict(request.query), dict(request.headers), body)
        seen.raw, seen.at = raw, time.monotonic()
        self.requests.append(seen)
        fault = self.faults[0] if self.faults else None
        if fault is not None:
            fault.times -= 1
            if fault.times <= 0:
                self.faults.pop(0)
            if fault.kind == "hang":  # until the server stops; the work is never done
                await self._release.wait()
                return web.json_response(self.error_body(503), status=503)
            if fault.kind == "fail":
                return web.json_response(fault.body or self.error_body(fault.status), status=fault.status,
                                         headers=fault.headers)  # fmt: skip
        if body is None and request.method == "POST":
            return self.bad(f"{request.path}: the body is not JSON")
        response = await self.route(request, seen)
        if fault is not None and fault.kind == "lose":
            return web.json_response(self.error_body(500), status=500)
        if response.status < 300:
            self.answered += 1
        return response

    def error_body(self, status: int) -> Any:
        return {"error": f"HTTP {status}"}

    async def route(self, request: web.Request, seen: Seen) -> web.Response:
        raise NotImplementedError


# ---------------------------------------------------------------- the generic webhook


class FakeWebhook(FakeCrm):
    PATH = "/hooks/leads"

    def __init__(self, secret: str | None = None) -> None:
        super().__init__()
        self.secret = secret
        self.deals: dict[str, dict[str, Any]] = {}  # Idempotency-Key -> the first payload
        self.repeats = 0

    @property
    def url(self) -> str:
        return self.base_url + self.PATH

    async def route(self, request: web.Request, seen: Seen) -> web.Response:
        if request.path != self.PATH or request.method != "POST":
            return web.json_response({}, status=404)
        if request.content_type != "application/json":
            return self.bad(f"Content-Type {request.content_type}")
        key = request.headers.get("Idempotency-Key")
        if not key:
            return self.bad("no Idempotency-Key")
        if self.secret is not None:
            expected = "sha256=" + hmac.new(self.secret.encode(), seen.raw, hashlib.sha256).hexdigest()
            if not hmac.compare_digest(request.headers.get("X-GPUFit-Signature", ""), expected):
                return web.json_response({"error": "bad signature"}, status=401)
        body = seen.body
        missing = [k for k in WEBHOOK_FIELDS if k not in body]
        if missing:
            return self.bad(f"missing {missing}")
        if body["idempotency_key"] != key or request.headers.get("X-GPUFit-Event") != body["event"]:
            return self.bad("the headers and the body disagree")
        if key in self.deals:
            self.repeats += 1
        else:
            self.deals[key] = body
        return web.json_response({"ok": True})


WEBHOOK_FIELDS = (
    "event", "lead_id", "created_at", "telegram_user_id", "username", "contact", "comment", "language",
    "source", "utm", "configuration", "recommendation", "total_bytes", "verdict", "title", "idempotency_key",
)  # fmt: skip


# ---------------------------------------------------------------- Bitrix24


BITRIX_LEAD_FIELDS = {
    "TITLE", "NAME", "LAST_NAME", "COMMENTS", "SOURCE_ID", "SOURCE_DESCRIPTION", "OPPORTUNITY", "CURRENCY_ID",
    "CONTACT_ID", "ORIGINATOR_ID", "ORIGIN_ID", "PHONE", "EMAIL", "IM",
    "UTM_SOURCE", "UTM_MEDIUM", "UTM_CAMPAIGN", "UTM_CONTENT", "UTM_TERM",
}  # fmt: skip
BITRIX_MULTIFIELDS = {"PHONE", "EMAIL", "IM"}
BITRIX_SOURCES = {"CALL", "EMAIL", "WEB", "ADVERTISING", "PARTNER", "RECOMMENDATION", "TRADE_SHOW", "WEBFORM",
                  "CALLBACK", "RC_GENERATOR", "STORE", "OTHER"}  # fmt: skip


class FakeBitrix24(FakeCrm):
    PREFIX = "/rest/1/s3cr3tc0de/"

    def __init__(self, telegram_field: str | None = None) -> None:
        super().__init__()
        self.telegram_field = telegram_field
        self.leads: dict[int, dict[str, Any]] = {}
        self.contacts: dict[int, dict[str, Any]] = {}
        self._next = 100

    @property
    def url(self) -> str:
        return self.base_url + self.PREFIX

    def error_body(self, status: int) -> Any:
        if status == 401:
            return {"error": "INVALID_CREDENTIALS", "error_description": "Invalid request credentials"}
        if status in (429, 503):
            return {"error": "QUERY_LIMIT_EXCEEDED", "error_description": "Too many requests"}
        return {"error": "INTERNAL_SERVER_ERROR", "error_description": "Internal server error"}

    def add_contact(self, **fields: Any) -> int:
        self._next += 1
        self.contacts[self._next] = fields
        return self._next

    def add_lead(self, **fields: Any) -> int:
        self._next += 1
        self.leads[self._next] = fields
        return self._next

    async def route(self, request: web.Request, seen: Seen) -> web.Response:
        if not request.path.startswith(self.PREFIX) or not request.path.endswith(".json"):
            return web.json_response({"error": "NOT_FOUND", "error_description": "no such path"}, status=404)
        method = request.path[len(self.PREFIX) : -len(".json")]
        body = seen.body
        if not isinstance(body, dict):
            return self.bad(f"{method}: the parameters are not an object")
        if method == "crm.lead.list":
            return self.lead_list(body)
        if method == "crm.duplicate.findbycomm":
            return self.findbycomm(body)
        if method == "crm.lead.add":
            return self.lead_add(body)
        return web.json_response({"error": "ERROR_METHOD_NOT_FOUND", "error_description": "Method not found"},
                                 status=404)  # fmt: skip

    def lead_list(self, body: dict[str, Any]) -> web.Response:
        filter_ = body.get("filter")
        if not isinstance(filter_, dict) or not filter_ or body.get("select") != ["ID"]:
            return self.bad(f"crm.lead.list: filter {filter_!r}, select {body.get('select')!r}")
        for name in filter_:
            if name not in BITRIX_LEAD_FIELDS and name != self.telegram_field:
                return self.bad(f"crm.lead.list: filter on an unknown field {name}")
        found = [
            {"ID": str(i)}
            for i, lead in sorted(self.leads.items())
            if all(str(lead.get(k)) == str(v) for k, v in filter_.items())
        ]
        return web.json_response({"result": found, "total": len(found), "time": {}})

    def findbycomm(self, body: dict[str, Any]) -> web.Response:
        kind, values = body.get("type"), body.get("values")
        if kind not in ("PHONE", "EMAIL") or not isinstance(values, list) or not 0 < len(values) <= 20:
            return self.bad(f"crm.duplicate.findbycomm: type {kind!r}, values {values!r}")
        if "entity_type" in body and body["entity_type"] not in ("LEAD", "CONTACT", "COMPANY"):
            return self.bad(f"crm.duplicate.findbycomm: entity_type {body['entity_type']!r}")
        wanted = {str(v).lower() for v in values}
        out: dict[str, list[int]] = {}
        for entity, rows in (("LEAD", self.leads), ("CONTACT", self.contacts)):
            ids = [i for i, row in sorted(rows.items())
                   if wanted & {str(m.get("VALUE")).lower() for m in row.get(kind, [])}]  # fmt: skip
            if ids and body.get("entity_type", entity) == entity:
                out[entity] = ids
        return web.json_response({"result": out or [], "time": {}})  # PHP's empty array

    def lead_add(self, body: dict[str, Any]) -> web.Response:
        fields = body.get("fields")
        if not isinstance(fields, dict) or not isinstance(fields.get("TITLE"), str) or not fields["TITLE"]:
            return self.bad("crm.lead.add: fields.TITLE missing")
        for name, value in fields.items():
            if name not in BITRIX_LEAD_FIELDS and name != self.telegram_field:
                return self.bad(f"crm.lead.add: unknown field {name}")
            if name in BITRIX_MULTIFIELDS and not (
                isinstance(value, list)
                and all(isinstance(m, dict) and set(m) == {"VALUE", "VALUE_TYPE"} for m in value)
            ):
                return self.bad(f"crm.lead.add: {name} is not [{{VALUE, VALUE_TYPE}}]: {value!r}")
        if fields.get("SOURCE_ID") not in BITRIX_SOURCES:
            return self.bad(f"crm.lead.add: SOURCE_ID {fields.get('SOURCE_ID')!r}")
        if "CONTACT_ID" in fields and int(fields["CONTACT_ID"]) not in self.contacts:
            return self.bad(f"crm.lead.add: no contact {fields['CONTACT_ID']}")
        return web.json_response({"result": self.add_lead(**fields), "time": {}})


# ---------------------------------------------------------------- amoCRM


class FakeAmoCrm(FakeCrm):
    def __init__(self, token: str) -> None:
        super().__init__()
        self.token = token
        self.leads: dict[int, dict[str, Any]] = {}
        self.contacts: dict[int, dict[str, Any]] = {}
        self._next = 5000

    def error_body(self, status: int) -> Any:
        titles = {401: "Unauthorized", 429: "Too Many Requests"}
        return {"title": titles.get(status, "Internal Server Error"), "status": status,
                "detail": "fake amoCRM"}  # fmt: skip

    def add_contact(self, **contact: Any) -> int:
        self._next += 1
        self.contacts[self._next] = contact
        return self._next

    async def route(self, request: web.Request, seen: Seen) -> web.Response:
        if request.headers.get("Authorization") != f"Bearer {self.token}":
            return web.json_response(self.error_body(401), status=401)
        if request.method == "GET" and request.path in ("/api/v4/leads", "/api/v4/contacts"):
            query = request.query.get("query", "")
            if not query:
                return self.bad(f"GET {request.path} without query")
            entity = request.path.rsplit("/", 1)[1]
            rows = self.leads if entity == "leads" else self.contacts
            found = [{"id": i, **row} for i, row in sorted(rows.items()) if query.lower() in json.dumps(
                row, ensure_ascii=False).lower()]  # fmt: skip
            if not found:
                return web.Response(status=204)
            return web.json_response({"_page": 1, "_embedded": {entity: found}})
        if request.method == "POST" and request.path == "/api/v4/leads/complex":
            return self.complex(seen.body)
        return web.json_response(self.error_body(404), status=404)

    def complex(self, body: Any) -> web.Response:
        if not isinstance(body, list) or not 0 < len(body) <= 50:
            return self.bad("leads/complex: the body is not an array of 1 to 50 leads")
        out = []
        for lead in body:
            if not isinstance(lead.get("name"), str) or ("price" in lead and type(lead["price"]) is not int):
                return self.bad(f"leads/complex: name/price {lead.get('name')!r}/{lead.get('price')!r}")
            embedded = lead.get("_embedded", {})
            contacts = embedded.get("contacts", [])
            if len(contacts) > 1:
                return self.bad("leads/complex: more than one contact")
            for tag in embedded.get("tags", []):
                if not isinstance(tag, dict) or set(tag) - {"id", "name"}:
                    return self.bad(f"leads/complex: tag {tag!r}")
            contact_id = None
            for contact in contacts:
                if "id" in contact:
                    if contact["id"] not in self.contacts:
                        return self.bad(f"leads/complex: no contact {contact['id']}")
                    contact_id = contact["id"]
                    continue
                for value in contact.get("custom_fields_values", []):
                    if value.get("field_code") not in ("PHONE", "EMAIL") or not all(
                        set(v) <= {"value", "enum_code"} for v in value.get("values", [])
                    ):
                        return self.bad(f"leads/complex: contact field {value!r}")
                contact_id = self.add_contact(**contact)
            self._next += 1
            self.leads[self._next] = {**lead, "contact_id": contact_id}
            out.append({"id": self._next, "contact_id": contact_id, "company_id": None,
                        "request_id": [str(len(out))], "merged": False})  # fmt: skip
        return web.json_response(out)
