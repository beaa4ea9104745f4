"""The fake Telegram's memory of one bot and its users: chats, queries, commands, recorded calls."""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import json
import secrets
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from aiogram.types import Chat, User

from .errors import ApiError, bad_request
from .params import Params, Upload
from .state import ChatLog, ChatMessage, PendingQuery, QueryKind, RecordedRequest
from .updates import UpdateQueue


class Gate:
    """Holds matching calls before they take effect, after the first ``after`` of them, until
    `release` (a test's way to have the bot wait on Telegram at a moment it chose). A held call whose
    client went away (a killed bot) is cancelled with its request and never takes effect."""

    def __init__(self, methods: frozenset[str] | None, after: int) -> None:
        self.methods = methods
        self.after = after
        self.passed = 0  # calls let through without waiting
        self.held = 0  # calls waiting now
        self._open = asyncio.Event()

    def matches(self, method: str) -> bool:
        return self.methods is None or method.lower() in self.methods

    async def pass_through(self, method: str) -> None:
        if self._open.is_set() or not self.matches(method):
            return
        if self.passed < self.after:
            self.passed += 1
            return
        self.held += 1
        try:
            await self._open.wait()
        finally:
            self.held -= 1

    def release(self) -> None:
        self._open.set()


class Latency(Gate):
    """Delays matching calls by ``seconds`` before they take effect: the round trip to a real Bot API
    server (~100-200 ms from a data centre), so load and timing can be tried as in production. Calls
    are delayed concurrently (nothing is queued behind a delayed call); `release` ends the delays."""

    def __init__(self, seconds: float, methods: frozenset[str] | None) -> None:
        super().__init__(methods, after=0)
        self.seconds = seconds

    async def pass_through(self, method: str) -> None:
        if self._open.is_set() or not self.matches(method) or method.lower() == "getupdates":
            return
        self.held += 1
        try:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._open.wait(), self.seconds)
        finally:
            self.held -= 1


@dataclass
class FloodRule:
    """Answer the next ``times`` matching calls with 429, as Telegram does when a bot sends too fast."""

    retry_after: int
    methods: frozenset[str] | None
    chat_id: int | None
    times: int

    def matches(self, method: str, chat_id: int | None) -> bool:
        return (
            self.times > 0
            and (self.methods is None or method.lower() in self.methods)
            and (self.chat_id is None or self.chat_id == chat_id)
        )


@dataclass
class FaultRule:
    """Answer the next ``times`` matching calls (None: every one, until `stop`) with an error: 400,
    5xx, 429 — a chat the bot cannot reach, Telegram having a bad moment."""

    error_code: int
    description: str
    methods: frozenset[str] | None
    chat_id: int | None
    times: int | None
    retry_after: int | None = None
    hits: int = 0  # calls answered with the error so far

    def matches(self, method: str, chat_id: int | None) -> bool:
        return (
            (self.times is None or self.times > 0)
            and (self.methods is None or method.lower() in self.methods)
            and (self.chat_id is None or self.chat_id == chat_id)
        )

    def stop(self) -> None:
        self.times = 0


class FakeTelegram:
    """Everything the server knows; the method handlers and the driver read and change it."""

    def __init__(self, bot_id: int, bot_username: str, query_ttl: float, first_update_id: int = 1) -> None:
        self.token = f"{bot_id}:TEST{secrets.token_urlsafe(24)}"
        self.bot_user = User(
            id=bot_id,
            is_bot=True,
            first_name="Sandbox Bot",
            username=bot_username,
            can_join_groups=True,
            can_read_all_group_messages=False,
            supports_inline_queries=True,
        )
        self.query_ttl = query_ttl
        self.updates = UpdateQueue(first_update_id=first_update_id)
        self.users: dict[int, User] = {}
        self.chats: dict[int, ChatLog] = {}
        self.requests: list[RecordedRequest] = []
        self.queries: dict[str, PendingQuery] = {}
        self.commands: dict[tuple[str, str], list[dict[str, Any]]] = {}
        self.menu_buttons: dict[int | None, dict[str, Any]] = {}  # setChatMenuButton: chat id (None: default)
        self.files: dict[str, Upload | str] = {}
        self.flood_rules: list[FloodRule] = []
        self.fault_rules: list[FaultRule] = []
        self.gates: list[Gate] = []
        # The bot's own "still working" (e.g. updates in hand), if it tells: the driver waits for it.
        self.bot_busy: Callable[[], bool] = lambda: False
        # The driver's "the bot has gone quiet": no call in flight and none for a quiet period.
        self.in_flight = 0
        self.last_activity = time.monotonic()
        self._ids = itertools.count(1)

    def next_id(self, prefix: str) -> str:
        return f"{prefix}{next(self._ids)}"

    # --- chats and messages ---

    def add_user(self, user: User) -> ChatLog:
        self.users[user.id] = user
        if user.id not in self.chats:
            chat = Chat(
                id=user.id,
                type="private",
                first_name=user.first_name,
                last_name=user.last_name,
                username=user.username,
            )
            self.chats[user.id] = ChatLog(chat)
        return self.chats[user.id]

    def chat_of(self, params: Params) -> ChatLog:
        raw = params.values.get("chat_id")
        if raw in (None, ""):
            raise bad_request("chat_id is empty")
        if isinstance(raw, str) and raw.startswith("@"):
            found = next((c for c in self.chats.values() if c.chat.username == raw[1:]), None)
        else:
            chat_id = params.integer("chat_id")
            found = self.chats.get(chat_id) if chat_id is not None else None
        if found is None:
            raise bad_request("chat not found")
        return found

    def message_of(self, params: Params, missing: str) -> ChatMessage:
        chat = self.chat_of(params)
        message_id = params.integer("message_id")
        if message_id is None:
            raise bad_request("message identifier is not specified")
        message = chat.messages.get(message_id)
        if message is None or message.deleted:
            raise bad_request(missing)
        return message

    # --- queries ---

    def new_query(self, kind: QueryKind, user_id: int, chat_id: int | None) -> PendingQuery:
        query = PendingQuery(
            query_id=str(secrets.randbits(63)),
            kind=kind,
            user_id=user_id,
            created_at=time.monotonic(),
            chat_id=chat_id,
        )
        self.queries[query.query_id] = query
        return query

    # --- bookkeeping of calls ---

    def chat_id_of_call(self, params: Params) -> int | None:
        raw = params.values.get("chat_id")
        if isinstance(raw, int) or (isinstance(raw, str) and raw.lstrip("-").isdigit()):
            return int(raw)
        for key in ("callback_query_id", "inline_query_id"):
            query = self.queries.get(str(params.values.get(key)))
            if query is not None:
                return query.chat_id
        return None

    def check_flood(self, method: str, chat_id: int | None) -> None:
        for rule in self.flood_rules:
            if rule.matches(method, chat_id):
                rule.times -= 1
                raise ApiError(429, f"Too Many Requests: retry after {rule.retry_after}", rule.retry_after)

    def check_faults(self, method: str, chat_id: int | None) -> None:
        for rule in self.fault_rules:
            if rule.matches(method, chat_id):
                if rule.times is not None:
                    rule.times -= 1
                rule.hits += 1
                raise ApiError(rule.error_code, rule.description, rule.retry_after)

    def record(self, method: str, params: Params, chat_id: int | None, error: str | None) -> None:
        self.requests.append(RecordedRequest(method, params.typed_values(), chat_id, time.monotonic(), error))

    def touch(self) -> None:
        self.last_activity = time.monotonic()

    def commands_key(self, params: Params) -> tuple[str, str]:
        scope = params.json("scope") or {"type": "default"}
        return json.dumps(scope, sort_keys=True), params.text("language_code") or ""
