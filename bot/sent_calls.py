"""An update handled again does not say again what it already said.

An update retried after an infrastructure failure (bot.db.outage) makes the same Telegram calls in
the same order. `SentCalls` keeps, per update, the chat-changing calls that succeeded with Telegram's
answers; the next attempt's calls are answered from it while they match (same method), without
calling Telegram; the first that differs ends the replay. Calls that change nothing the user sees
twice (answerCallbackQuery, sendChatAction) are always made. Across replicas (`RedisJournal`) each
call is also appended to the update's list in Redis right after Telegram answered, so a replica
taking over a killed one's update does not send again what was sent. A journal that cannot be
written (Redis down) costs only that.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any

from aiogram import Bot
from aiogram.client.session.middlewares.base import BaseRequestMiddleware, NextRequestMiddlewareType
from aiogram.methods import Response, TelegramMethod
from aiogram.methods.base import TelegramType
from pydantic import BaseModel, TypeAdapter

from bot.redis_batch import Commands, SharedPipeline

log = logging.getLogger(__name__)

CHAT_CHANGING = frozenset({
    "sendMessage", "sendPhoto", "sendDocument", "sendMediaGroup", "sendAnimation", "sendVideo",
    "sendAudio", "sendVoice", "sendSticker", "sendLocation", "sendContact", "sendPoll", "sendInvoice",
    "copyMessage", "copyMessages", "forwardMessage", "forwardMessages",
    "editMessageText", "editMessageCaption", "editMessageMedia", "editMessageReplyMarkup", "deleteMessage",
    "deleteMessages", "pinChatMessage",
})  # fmt: skip


JOURNAL_KEPT_S = 3600
"""How long an update's journal stays in Redis: a takeover comes within seconds of a death (an
outage of the database can delay it longer; an hour of answers is a few MB)."""


def _as_json(result: Any) -> str:
    """Telegram's answer (a model, a list of them, True) as the JSON it came as."""
    if isinstance(result, BaseModel):  # pydantic's own encoder: a third of dumping and encoding apart
        return result.model_dump_json(exclude_none=True, by_alias=True)
    if isinstance(result, list):
        return f"[{','.join(_as_json(item) for item in result)}]"
    return json.dumps(result)


class RedisJournal:
    """The calls of each update, in Redis: ``{prefix}:sent:{bot_id}:{update_id}``, a list of
    ``method\njson`` entries, expiring after `JOURNAL_KEPT_S`; written through ``shared``, the
    storage's pipeline (bot.redis_batch), or one of its own."""

    def __init__(self, redis: Any, prefix: str, shared: SharedPipeline | None = None) -> None:
        self.redis = redis
        self.prefix = prefix
        self.shared = shared or SharedPipeline(redis)

    def _key(self, bot_id: int, update_id: int) -> str:
        return f"{self.prefix}:sent:{bot_id}:{update_id}"

    async def record(self, bot_id: int, update_id: int, method: str, response: Response[Any]) -> None:
        key = self._key(bot_id, update_id)
        commands = Commands()
        commands.rpush(key, f"{method}\n{_as_json(response)}")
        commands.expire(key, JOURNAL_KEPT_S)
        await self.shared.execute(commands)

    async def load(self, bot_id: int, update_id: int) -> list[tuple[str, str]]:
        entries = await self.redis.lrange(self._key(bot_id, update_id), 0, -1)
        calls = []
        for entry in entries:
            method, _, raw = (entry.decode() if isinstance(entry, bytes) else entry).partition("\n")
            calls.append((method, raw))
        return calls


class SentCalls:
    """One update's chat-changing calls made so far (method, Telegram's answer), across attempts;
    an answer read from the journal is kept as JSON until the call that replays it comes."""

    def __init__(self, journal: RedisJournal | None = None, bot_id: int = 0, update_id: int = 0) -> None:
        self.calls: list[tuple[str, Response[Any] | str]] = []
        self._position = 0
        self._diverged = False
        self.replayed = 0  # calls answered from here (for the tests and the log)
        self.journal = journal
        self.bot_id = bot_id
        self.update_id = update_id

    async def read_journal(self) -> None:
        """What another replica sent for this update before it died (nothing without a journal)."""
        if self.journal is None:
            return
        try:
            self.calls = list(await self.journal.load(self.bot_id, self.update_id))
        except Exception as e:  # Redis failing: the update is handled as if nothing was sent
            log.warning("could not read what update %s sent before: %s", self.update_id, e)
        if self.calls:
            log.info("update %s taken over: %d call(s) already made", self.update_id, len(self.calls))

    def new_attempt(self) -> None:
        self._position = 0
        self._diverged = False

    def answer_for(self, bot: Bot, method: TelegramMethod[TelegramType]) -> Response[TelegramType] | None:
        """What Telegram answered to this call in an earlier attempt; None: make it."""
        if self._diverged or self._position >= len(self.calls):
            return None
        name, response = self.calls[self._position]
        if name != method.__api_method__:
            self._diverged = True
            del self.calls[self._position :]  # what differs from here on is not known to have happened
            return None
        if isinstance(response, str):
            returning: Any = method.__returning__
            response = TypeAdapter(returning).validate_json(response, context={"bot": bot})
        self._position += 1
        self.replayed += 1
        return response

    async def made(self, method: str, response: Response[Any]) -> None:
        self.calls.append((method, response))
        self._position = len(self.calls)
        if self.journal is None:
            return
        try:
            await self.journal.record(self.bot_id, self.update_id, method, response)
        except Exception as e:  # Redis failing: only a takeover after a death would send it again
            log.debug("call %s of update %s not journalled: %s", method, self.update_id, e)


_current: ContextVar[SentCalls | None] = ContextVar("sent_calls", default=None)
_outside: ContextVar[bool] = ContextVar("sent_calls_outside", default=False)


@contextmanager
def attempt(sent: SentCalls) -> Iterator[SentCalls]:
    """One attempt at handling an update: its calls go through ``sent``."""
    sent.new_attempt()
    token = _current.set(sent)
    try:
        yield sent
    finally:
        _current.reset(token)


@contextmanager
def unrecorded() -> Iterator[None]:
    """Calls that are not the update's answer (the errors handler's apology or retry notice)."""
    token = _outside.set(True)
    try:
        yield
    finally:
        _outside.reset(token)


class ReplaySentCalls(BaseRequestMiddleware):
    """Bot session middleware: a call the update already made in an earlier attempt is not made again."""

    async def __call__(
        self,
        make_request: NextRequestMiddlewareType[TelegramType],
        bot: Bot,
        method: TelegramMethod[TelegramType],
    ) -> Response[TelegramType]:
        sent = _current.get()
        name = method.__api_method__
        if sent is None or _outside.get() or name not in CHAT_CHANGING:
            return await make_request(bot, method)
        earlier = sent.answer_for(bot, method)
        if earlier is not None:
            log.info("%s of update %s made before: not made again", name, sent.update_id)
            return earlier
        response = await make_request(bot, method)
        await sent.made(name, response)
        return response
