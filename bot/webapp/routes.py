"""The Mini App's HTTP side, added to the bot's aiohttp application (`install`).

    GET  /app                 the page (static/index.html; its script and style under /app/static/)
    POST /app/api/init        the page's words and choices in the user's language, the request to open
    GET  /app/api/models?q=   catalogue models matching q (a Hugging Face id is offered as itself)
    POST /app/api/answer      a contract `Request` → `layout.page` of its answer, its model's `sliders`
    POST /app/api/lead        the request → the answer and the quote form in the chat
    POST /app/api/chat        the request → the answer in the chat

Every call is authenticated and throttled per user (`WebApp.user_of`: → 401, 429), bodies over
`MAX_BODY` bytes → 413, errors are JSON `{"error": <code>, "field", "message"}`, never a traceback.
A request is sized as the chat sizes it (`WebApp.sized`); lead and chat reach the bot as updates (`relay`).
"""

from __future__ import annotations

import json
import logging
import re
import secrets
import time
from collections.abc import Awaitable, Callable, Iterable
from html import unescape
from pathlib import Path
from typing import TYPE_CHECKING, Any

from aiogram.types import Update
from aiogram.utils.web_app import WebAppInitData, WebAppUser
from aiohttp import web

from bot.handlers import admin
from bot.i18n import language_for
from bot.throttle import Kind, Throttle
from bot.webapp import auth, layout
from core.catalogue.models import ModelKind, ModelSpec
from core.language.words import LANGUAGES
from core.sizing import partial

if TYPE_CHECKING:
    from bot.app import App
    from core.catalogue.catalog import Catalog

log = logging.getLogger(__name__)

STATIC_DIR = Path(__file__).parent / "static"
MAX_BODY = 16 * 1024
"""Bytes of a request body: a contract request with a full stack of extra models is ~2 KB."""
INIT_DATA_HEADER = "X-Telegram-Init-Data"
WEBAPP_KEY = "webapp"  # the `WebApp` of an aiohttp application
RELAY_ACTIONS = ("lead", "chat")
SEARCH_LIMIT = 8
MAX_QUERY = 200
CSP = (
    "default-src 'self'; script-src 'self' https://telegram.org; style-src 'self'; img-src 'self' data:; "
    "connect-src 'self'; frame-ancestors https://web.telegram.org https://*.telegram.org 'self'"
)
TASKS = {  # the page's task choice → the request's fields
    "inference": {"task": "inference"},
    "lora": {"task": "training", "method": "lora"},
    "qlora": {"task": "training", "method": "qlora"},
    "full": {"task": "training", "method": "full"},
    "image": {"task": "image_generation"},
    "video": {"task": "video_generation"},
}
KINDS = {task: ModelKind.LLM for task in TASKS} | {"image": ModelKind.IMAGE, "video": ModelKind.VIDEO}
STRINGS = (
    "title", "model", "model-placeholder", "task", "precision", "context", "users", "batch", "seq-len",
    "resolution", "frames", "card", "card-any", "cards", "band-comfortable", "band-tight", "usable", "rent",
    "quote", "chat", "sent-quote", "sent-chat", "loading", "error-unauthorized", "error-throttled",
    "error-too_large", "error-internal", "error-network",
)  # fmt: skip
SLIDERS = {  # field: (low, high, step as a power of two: 0 = linear)
    "context_length": (512, 131072, 2),
    "concurrency": (1, 256, 2),
    "batch_size": (1, 64, 2),
    "seq_len": (256, 32768, 2),
    "resolution": (256, 2048, 0),
    "frames": (1, 161, 0),
    "num_gpus": (1, 8, 2),
}
MODEL_BOUND = ("context_length", "seq_len")
"""Sliders whose top is the catalogue model's `max_context` where that is lower (`sliders`)."""
Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]


class ApiError(Exception):
    def __init__(self, status: int, code: str, message: str = "", field: str | None = None) -> None:
        super().__init__(code)
        self.status, self.code, self.message, self.field = status, code, message, field


class WebApp:
    """The page's server side over one running bot (`App`): its token, dispatcher and catalogue."""

    def __init__(self, app: App, throttle: Throttle | None = None) -> None:
        from bot.db.engine import create_sessionmaker

        self.app = app
        self.throttle = throttle if throttle is not None else Throttle()  # (one with no buckets is falsy)
        self.sessionmaker = create_sessionmaker(app.engine)

    # --- the common part of every call

    def user_of(self, request: web.Request, kind: Kind) -> WebAppUser:
        """Every call carries Telegram's initData in `X-Telegram-Init-Data`, checked with the bot token
        (`auth.verify`: missing, forged or stale → 401), and is throttled per user like chat messages
        (`bot.throttle`: answers and searches as button presses, lead and chat as messages → 429)."""
        data: WebAppInitData | None = auth.verify(self.app.bot.token, request.headers.get(INIT_DATA_HEADER))
        if data is None or data.user is None:
            raise ApiError(401, "unauthorized")
        if self.throttle.check(data.user.id, kind) != "allow":
            raise ApiError(429, "throttled")
        return data.user

    async def body(self, request: web.Request) -> dict[str, Any]:
        if request.content_length is not None and request.content_length > MAX_BODY:
            raise ApiError(413, "too_large")
        raw = bytearray()
        while chunk := await request.content.read(MAX_BODY + 1 - len(raw)):
            raw += chunk
            if len(raw) > MAX_BODY:
                raise ApiError(413, "too_large")
        try:
            data = json.loads(raw or b"{}", parse_constant=_no_constant)
        except (ValueError, RecursionError):
            raise ApiError(400, "invalid", "the body is not JSON") from None
        if not isinstance(data, dict):
            raise ApiError(400, "invalid", "the body must be a JSON object")
        return data

    async def prefs(self, user: WebAppUser) -> tuple[str, str]:
        """(language, currency) as the chat answers this user: their /lang and /currency choices,
        else their Telegram language's (bot.i18n, bot.context)."""
        from bot.context import user_currency
        from bot.db import users

        settings = self.app.settings
        async with self.sessionmaker() as session:
            db_user = await users.get_user(session, user.id)
        lang = language_for(user.language_code, settings.default_language)
        if db_user is not None and db_user.language in LANGUAGES:
            lang = db_user.language
        return lang, user_currency(db_user, user.language_code, settings.default_currency)

    def tr(self, lang: str) -> Callable[..., str]:
        return lambda key, **args: self.app.i18n.core.get(key, lang, **args)

    async def catalog(self) -> Catalog:
        dp = self.app.dp
        catalog: Catalog = dp.workflow_data["catalog"]
        live = dp.workflow_data.get(admin.AVAILABILITY_KEY)
        return await live.catalog(catalog) if live is not None else catalog

    # --- sizing

    async def sized(self, fields: dict[str, Any], prefs: tuple[str, str]) -> tuple[Any, Any, Catalog]:
        """(result, answer, catalogue) of a request, as the chat sizes it; ApiError when it cannot be.

        A Hugging Face id goes through the chat's own look-up and cache (`bot.hf_models`); the estimate
        is the chat's (`bot.dialog.estimate`: `core.inverse.solve.run`, remembered), on the event loop
        as in the chat (a page's request is sized and laid out in a few milliseconds:
        `python bench/webapp_speed.py`, bench/README.md)."""
        from bot import dialog, presenter
        from bot.hf_models import ANSWERS, HF_MODELS
        from core.errors import CoreError
        from core.model.hub import LOOKUP_BUDGET_S

        lang, currency = prefs
        catalog = await self.catalog()
        settings = self.app.settings
        model = fields.get("model")
        if HF_MODELS.needs_lookup(model, catalog):
            async with self.sessionmaker() as session:
                status = await HF_MODELS.ensure(
                    model, catalog, session, endpoint=settings.hf_endpoint, enabled=settings.hf_lookup
                )
                await session.commit()
            if status in ANSWERS:
                said = self.tr(lang)(
                    ANSWERS[status], model=str(model), seconds=round(LOOKUP_BUDGET_S), **HF_MODELS.why(model)
                )
                raise ApiError(422, "model", _plain(said), "model")
        try:
            result = dialog.estimate(fields, catalog)
        except CoreError as e:
            raise ApiError(422, "invalid", presenter.core_error_reason(e, lang), e.field) from None
        answer = dialog.ESTIMATES.answer(result, lang, currency=currency)
        return result, answer, catalog

    # --- the routes

    async def page(self, request: web.Request) -> web.StreamResponse:
        response = web.FileResponse(STATIC_DIR / "index.html")
        response.headers["Content-Security-Policy"] = CSP
        response.headers["Cache-Control"] = "no-cache"
        return response

    async def init(self, request: web.Request) -> web.StreamResponse:
        user = self.user_of(request, "button")
        body = await self.body(request)
        lang, _ = await self.prefs(user)
        tr = self.tr(lang)
        catalog = await self.catalog()
        start = layout.decode(str(body.get("start") or "")) or {}
        return web.json_response(
            {
                "lang": lang,
                "strings": {key: tr(f"webapp-{key}") for key in STRINGS},
                "tasks": [
                    {"id": key, "label": tr(f"webapp-task-{key}"), "fields": f} for key, f in TASKS.items()
                ],
                "precisions": _precisions(lang),
                "gpus": _gpus(catalog),
                "sliders": sliders(SLIDERS, None),
                "start": start,
                "default_models": {task: _first_popular(catalog, KINDS[task]) for task in TASKS},
            }
        )

    async def models(self, request: web.Request) -> web.StreamResponse:
        from core.model import hub as hf

        self.user_of(request, "button")
        query = request.query.get("q", "")[:MAX_QUERY].strip()
        catalog = await self.catalog()
        kind = KINDS.get(request.query.get("task", ""), ModelKind.LLM)
        models = catalog.search(query, limit=SEARCH_LIMIT) if query else catalog.popular(kind)[:SEARCH_LIMIT]
        found = [{"id": m.id, "name": m.name, "params_b": m.params_b, "kind": str(m.kind)} for m in models]
        if hf.is_hub_id(query) and catalog.find_model(query) is None:
            found.insert(0, {"id": query, "name": query, "params_b": None, "kind": "huggingface"})
        return web.json_response({"models": found})

    async def answer(self, request: web.Request) -> web.StreamResponse:
        user = self.user_of(request, "button")
        fields = await self.body(request)
        result, answer, catalog = await self.sized(fields, await self.prefs(user))
        bounds = sliders(MODEL_BOUND, partial.catalogue_model(fields, catalog))
        return web.json_response({**layout.page(result, answer, catalog), "sliders": bounds})

    async def relay_call(self, request: web.Request) -> web.StreamResponse:
        action = request.match_info["action"]
        user = self.user_of(request, "message")
        fields = await self.body(request)
        await self.sized(fields, await self.prefs(user))  # an error is said on the page, not in the chat
        await relay(self.app, user, action, fields)
        return web.json_response({"ok": True})


async def relay(app: App, user: WebAppUser, action: str, fields: dict[str, Any]) -> None:
    """The page's request reaches the bot as an update: a private message of `user` carrying
    `web_app_data` {"action", "request"}, recorded in the inbox and handled in the background like any
    other update, so the answer, the quote form, the lead, its card and the outbox are the chat's
    (`bot.webapp.handler`); "Оставить заявку" and "В чат" come this way. Its update id is negative and
    random: Telegram's are positive, so none is ever taken for another."""
    data = json.dumps({"action": action, "request": fields}, ensure_ascii=False, separators=(",", ":"))
    sender = user.model_dump(
        exclude_none=True, include={"id", "first_name", "last_name", "username", "language_code"}
    )
    payload = {
        "update_id": -1 - secrets.randbits(52),
        "message": {
            "message_id": 1,
            "date": int(time.time()),
            "chat": {"id": user.id, "type": "private", "first_name": user.first_name},
            "from": {**sender, "is_bot": False},
            "web_app_data": {"data": data, "button_text": action},
        },
    }
    update = Update.model_validate(payload, context={"bot": app.bot})
    await app.inbox_dp.receive_webhook_update(app.bot, update, payload)


def sliders(fields: Iterable[str], spec: ModelSpec | None) -> dict[str, dict[str, Any]]:
    """The page's sliders of `fields`: {"min", "max", "log2"}. Those that follow the model (`MODEL_BOUND`)
    end at the catalogue model's `max_context` where it is below `SLIDERS`' top (a 2K model: 2048; a
    40K one: 40960, the top stop though no power of two), as the dialog's buttons do
    (`bot.flow.options.model_tokens`). A longer value is still sized, with the core's note."""
    bounds = {}
    for field in fields:
        low, high, step = SLIDERS[field]
        if field in MODEL_BOUND and spec is not None and spec.max_context is not None:
            high = min(high, spec.max_context)
            low = min(low, high)
        bounds[field] = {"min": low, "max": high, "log2": bool(step)}
    return bounds


def _no_constant(name: str) -> float:
    raise ValueError(f"{name} is not a number")


def _plain(html: str) -> str:
    return unescape(re.sub(r"<[^>]+>", "", html))


def _precisions(lang: str) -> list[dict[str, str]]:
    from core.contract import Precision
    from core.language.words import label

    return [{"id": p.value, "label": label("precision", p.value, lang)} for p in Precision]


def _first_popular(catalog: Catalog, kind: ModelKind) -> str | None:
    popular = catalog.popular(kind)
    return popular[0].id if popular else None


def _gpus(catalog: Catalog) -> list[dict[str, Any]]:
    """Every card, those we rent first (as offered), then by memory."""
    rented = list(dict.fromkeys(o.gpu for o in catalog.offers))
    rest = sorted((g for g in catalog.gpus if g not in rented), key=lambda g: catalog.gpus[g].usable_bytes)
    return [
        {"id": g, "name": catalog.gpus[g].short_name or catalog.gpus[g].name, "rented": g in rented}
        for g in [*rented, *rest]
    ]


@web.middleware
async def _json_errors(request: web.Request, handler: Handler) -> web.StreamResponse:
    if not request.path.startswith("/app/api/"):
        return await handler(request)
    try:
        return await handler(request)
    except ApiError as e:
        headers = {"Retry-After": "1"} if e.status == 429 else None
        body = {"error": e.code, "field": e.field, "message": e.message}
        return web.json_response(body, status=e.status, headers=headers)
    except web.HTTPException as e:  # aiohttp's own (405, 404 of a sub-path): its status, as JSON
        return web.json_response({"error": "http", "field": None, "message": e.reason}, status=e.status)
    except Exception:
        log.exception("webapp: %s %s failed", request.method, request.path)
        return web.json_response({"error": "internal", "field": None, "message": ""}, status=500)


def install(web_app: web.Application, app: App, throttle: Throttle | None = None) -> WebApp:
    """Add the page and its API to `web_app` (the webhook server, or the polling mode's own)."""
    webapp = WebApp(app, throttle)
    web_app.middlewares.append(_json_errors)
    web_app.router.add_get("/app", webapp.page)
    web_app.router.add_static("/app/static/", STATIC_DIR)
    web_app.router.add_post("/app/api/init", webapp.init)
    web_app.router.add_get("/app/api/models", webapp.models)
    web_app.router.add_post("/app/api/answer", webapp.answer)
    web_app.router.add_post(r"/app/api/{action:lead|chat}", webapp.relay_call)
    return webapp
