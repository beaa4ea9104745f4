"""Update delivery, as Telegram does it: long polling (getUpdates) or webhook POSTs with retries."""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

import aiohttp
from aiogram.types import WebhookInfo

from .errors import ApiError

# Telegram leaves these out unless they are asked for explicitly.
NOT_SENT_BY_DEFAULT = frozenset({"chat_member", "message_reaction", "message_reaction_count"})
WEBHOOK_SECRET_HEADER = "X-Telegram-Bot-Api-Secret-Token"

WebhookReplyHandler = Callable[[str, dict[str, Any]], Awaitable[None]]


def update_type(update: dict[str, Any]) -> str:
    return next((key for key in update if key != "update_id"), "")


@dataclass(eq=False)  # one queued delivery: found by identity (two may hold equal updates)
class _Queued:
    update: dict[str, Any]
    returned: bool = False  # handed to getUpdates once; confirmed only by a later, greater offset
    posting: bool = False  # being POSTed to the webhook now

    @property
    def update_id(self) -> int:
        return int(self.update["update_id"])


@dataclass
class Webhook:
    url: str
    secret_token: str | None
    max_connections: int = 40


class UpdateQueue:
    """Pending updates of the one bot, delivered by polling or by webhook."""

    def __init__(
        self, *, webhook_timeout: float = 5.0, webhook_max_attempts: int = 20, first_update_id: int = 1
    ) -> None:
        self._pending: list[_Queued] = []
        self._changed = asyncio.Condition()
        self._next_update_id = first_update_id
        self._poll_generation = 0
        self._closed = False
        self.allowed_updates: list[str] | None = None
        self.webhook: Webhook | None = None
        self._webhook_task: asyncio.Task[None] | None = None
        self.webhook_timeout = webhook_timeout
        self.webhook_max_attempts = webhook_max_attempts
        # Webhook POSTs at a time. Telegram opens up to setWebhook's max_connections (default 40); 1
        # (the default here) delivers strictly in order, one after the other.
        self.webhook_connections = 1
        self.on_webhook_reply: WebhookReplyHandler | None = None
        self.last_error_date: datetime | None = None
        self.last_error_message: str | None = None
        self.delivered = 0  # updates handed to the bot (returned by getUpdates or accepted by the webhook)
        self.polls = 0  # getUpdates calls received
        self.dropped_types: set[str] = set()  # update types never delivered because of allowed_updates

    @property
    def pending_count(self) -> int:
        return len(self._pending)

    async def push(self, update: dict[str, Any]) -> int:
        """Queue an update; gives it the next update_id unless it has one (duplicates are allowed)."""
        update = dict(update)
        if "update_id" not in update:
            update = {"update_id": self._next_update_id, **update}
        self._next_update_id = max(self._next_update_id, int(update["update_id"]) + 1)
        async with self._changed:
            queued = _Queued(update)
            if self._is_allowed(queued):
                self._pending.append(queued)
                self._changed.notify_all()
            else:  # Telegram never sends it
                self.dropped_types.add(update_type(update))
        return int(update["update_id"])

    def _is_allowed(self, queued: _Queued) -> bool:
        kind = update_type(queued.update)
        if self.allowed_updates:
            return kind in self.allowed_updates
        return kind not in NOT_SENT_BY_DEFAULT

    def _ask_for(self, allowed_updates: list[str]) -> None:
        """The types the bot asks for from now on: those pending of other types are dropped. The
        queue holds only the types asked for: each update is checked as it comes, and once more
        here (a pass over the queue for each change, not for each update delivered: a crowd's
        hundreds of pending updates would cost the load tests' sandbox more than the bot)."""
        self.allowed_updates = allowed_updates
        wanted = []
        for queued in self._pending:
            if self._is_allowed(queued):
                wanted.append(queued)
            else:
                self.dropped_types.add(update_type(queued.update))
        self._pending = wanted

    async def get_updates(
        self, offset: int | None, limit: int, timeout: float, allowed_updates: list[str] | None
    ) -> list[dict[str, Any]]:
        if self.webhook is not None:
            raise ApiError(
                409,
                "Conflict: can't use getUpdates method while webhook is active; "
                "use deleteWebhook to delete the webhook first",
            )
        self.polls += 1
        async with self._changed:
            if allowed_updates is not None:
                self._ask_for(allowed_updates)  # remembered for later calls, as Telegram does
            self._poll_generation += 1
            generation = self._poll_generation
            self._changed.notify_all()  # terminates an older long poll with 409, like Telegram
            if offset is not None:
                self._pending = [q for q in self._pending if not (q.returned and q.update_id < offset)]
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(
                    self._changed.wait_for(lambda: self._has_news(generation)), timeout=max(timeout, 0)
                )
            if generation != self._poll_generation:
                raise ApiError(
                    409,
                    "Conflict: terminated by other getUpdates request; "
                    "make sure that only one bot instance is running",
                )
            batch = self._pending[: max(1, min(limit, 100))]
            for queued in batch:
                if not queued.returned:
                    self.delivered += 1
                queued.returned = True
            return [q.update for q in batch]

    def _has_news(self, generation: int) -> bool:
        """Whether a waiting getUpdates should answer now."""
        return bool(self._pending) or self._closed or generation != self._poll_generation

    async def drop_pending(self) -> None:
        async with self._changed:
            self._pending.clear()

    async def set_webhook(self, webhook: Webhook, allowed_updates: list[str] | None) -> None:
        await self._stop_webhook_task()
        if allowed_updates is not None:
            async with self._changed:
                self._ask_for(allowed_updates)
        self.webhook = webhook
        self._webhook_task = asyncio.create_task(self._deliver_to_webhook(webhook))

    async def delete_webhook(self) -> bool:
        existed = self.webhook is not None
        await self._stop_webhook_task()
        self.webhook = None
        return existed

    async def _stop_webhook_task(self) -> None:
        task, self._webhook_task = self._webhook_task, None
        if task is not None:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task

    def webhook_info(self) -> dict[str, Any]:
        info = WebhookInfo(
            url=self.webhook.url if self.webhook else "",
            has_custom_certificate=False,
            pending_update_count=self.pending_count,
            last_error_date=self.last_error_date,
            last_error_message=self.last_error_message,
            max_connections=self.webhook.max_connections if self.webhook else None,
            allowed_updates=self.allowed_updates,
        )
        return info.model_dump(mode="json", exclude_none=True)

    async def _deliver_to_webhook(self, webhook: Webhook) -> None:
        headers = {WEBHOOK_SECRET_HEADER: webhook.secret_token} if webhook.secret_token else {}
        timeout = aiohttp.ClientTimeout(total=self.webhook_timeout)
        connections = max(1, min(self.webhook_connections, webhook.max_connections))
        async with aiohttp.ClientSession(timeout=timeout) as http:
            await asyncio.gather(
                *(self._webhook_connection(http, webhook, headers) for _ in range(connections))
            )

    def _next_to_post(self) -> _Queued | None:
        return next((queued for queued in self._pending if not queued.posting), None)

    async def _webhook_connection(
        self, http: aiohttp.ClientSession, webhook: Webhook, headers: dict[str, str]
    ) -> None:
        """One connection: POST the oldest update nobody is posting, retrying it until accepted."""
        attempts = 0
        while True:
            async with self._changed:
                await self._changed.wait_for(lambda: self._next_to_post() is not None)
                queued = self._next_to_post()
                assert queued is not None
                queued.posting = True
            error = await self._post_update(http, webhook.url, headers, queued.update)
            async with self._changed:
                queued.posting = False
                if error is None or attempts + 1 >= self.webhook_max_attempts:
                    if queued in self._pending:
                        self._pending.remove(queued)
                    self.delivered += error is None
                    attempts = 0
                    self._changed.notify_all()
                    continue
                self._changed.notify_all()
            self.last_error_date = datetime.now(UTC).replace(microsecond=0)
            self.last_error_message = error
            attempts += 1
            # Telegram backs off between retries; here short and bounded so tests stay fast.
            await asyncio.sleep(min(0.05 * 2**attempts, 0.5))

    async def _post_update(
        self, http: aiohttp.ClientSession, url: str, headers: dict[str, str], update: dict[str, Any]
    ) -> str | None:
        """POST one update; the error text Telegram would report, or None when accepted."""
        try:
            async with http.post(url, json=update, headers=headers) as response:
                if not 200 <= response.status < 300:
                    return f"Wrong response from the webhook: {response.status} {response.reason}"
                await self._run_method_in_reply(response)
                return None
        except TimeoutError:
            return "Read timeout expired"
        except aiohttp.ClientConnectorDNSError:
            return "Failed to resolve host: Name or service not known"
        except aiohttp.ClientConnectorError:
            return "Connection refused"
        except aiohttp.ClientError as error:
            return f"Connection error: {type(error).__name__}"

    async def _run_method_in_reply(self, response: aiohttp.ClientResponse) -> None:
        """Telegram runs a Bot API method returned as the webhook's response body."""
        if self.on_webhook_reply is None:
            return
        fields: dict[str, Any] = {}
        if response.content_type.startswith("multipart/"):
            reader = aiohttp.MultipartReader.from_response(response)
            while (part := await reader.next()) is not None:
                if isinstance(part, aiohttp.BodyPartReader) and part.name:
                    fields[part.name] = await part.text()
        elif response.content_type == "application/json":
            with contextlib.suppress(ValueError):
                loaded = json.loads(await response.text() or "null")
                fields = loaded if isinstance(loaded, dict) else {}
        method = fields.pop("method", None)
        if isinstance(method, str) and method:
            with contextlib.suppress(ApiError):
                await self.on_webhook_reply(method, fields)

    async def close(self) -> None:
        await self._stop_webhook_task()
        async with self._changed:
            self._closed = True
            self._changed.notify_all()
