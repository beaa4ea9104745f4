"""A user's side of one chat in the fake Telegram: what the user sees in it, the messages they
compose and push to the bot as updates, and the waits until the bot has answered and gone quiet
(`SandboxUser`, in tgsandbox.driver, acts through it)."""

from __future__ import annotations

import asyncio
import copy
import re
import time
from collections.abc import Callable

from aiogram.types import Chat, MessageEntity, Update, User

from .errors import SandboxTimeout
from .state import ChatLog, ChatMessage
from .telegram import FakeTelegram

COMMAND_PATTERN = re.compile(r"^/[A-Za-z0-9_]{1,32}(@[A-Za-z0-9_]+)?")
MENTION_PATTERN = re.compile(r"(?<![A-Za-z0-9_])@[A-Za-z][A-Za-z0-9_]{3,31}")


class UserChat:
    """One user in one chat (private, or a group the bot is in): the chat log they see, the
    messages they add to it and the waits on the bot, each bounded by ``timeout`` seconds."""

    def __init__(
        self,
        telegram: FakeTelegram,
        user: User,
        *,
        quiet_period: float,
        timeout: float,
        chat: Chat | None = None,
    ) -> None:
        self.telegram = telegram
        self.user = user
        private = telegram.add_user(user)
        if chat is None:
            self.chat: ChatLog = private
        else:
            self.chat = telegram.chats.setdefault(chat.id, ChatLog(chat))
        self.quiet_period = quiet_period
        self.timeout = timeout
        self._seen_changes = len(self.chat.changes)  # what happened before this user object is not "new"
        self.last_update_id: int | None = None  # of the latest update this user sent (message, press…)

    @property
    def id(self) -> int:
        return self.user.id

    # --- what the user sees ---

    def messages(self) -> list[ChatMessage]:
        """The chat history, oldest first, including the user's own and deleted (flagged) messages."""
        return self.chat.history()

    def bot_messages(self) -> list[ChatMessage]:
        return [m for m in self.chat.history() if m.from_bot and not m.deleted]

    def last_message(self) -> ChatMessage:
        """The bot's latest message still in the chat (as currently shown, edits applied)."""
        messages = self.bot_messages()
        if not messages:
            raise AssertionError(f"the bot has sent nothing to user {self.id}")
        return messages[-1]

    # --- internals ---

    def _new_user_message(self, text: str, *, sender: User | None = None) -> ChatMessage:
        entities = []
        if command := COMMAND_PATTERN.match(text):
            entities.append(MessageEntity(type="bot_command", offset=0, length=len(command.group())))
        if self.chat.chat.type != "private":  # as Telegram marks them (offsets in UTF-16 code units)
            for mention in MENTION_PATTERN.finditer(text):
                if command and mention.start() < command.end():
                    continue
                entities.append(
                    MessageEntity(
                        type="mention",
                        offset=_utf16_len(text[: mention.start()]),
                        length=_utf16_len(mention.group()),
                    )
                )
        message = ChatMessage(
            message_id=self.chat.allocate_id(),
            chat_id=self.chat.chat.id,
            from_bot=False,
            sender=sender or self.user,
            text=text,
            source_text=text,
            entities=entities,
        )
        self.chat.add(message)
        self._seen_changes = len(self.chat.changes)
        return message

    async def _push(self, update: Update, update_id: int | None) -> None:
        data = update.model_dump(mode="json", exclude_none=True, by_alias=True)
        if update_id is None:
            data.pop("update_id")
        else:
            data["update_id"] = update_id
        self._seen_changes = len(self.chat.changes)
        self.last_update_id = await self.telegram.updates.push(data)

    def _bot_changed_chat(self) -> bool:
        return len(self.chat.changes) > self._seen_changes

    def _message_with_button(
        self, text: str | None, callback_data: str | None, message: ChatMessage | int | None
    ) -> ChatMessage:
        if text is None and callback_data is None:
            raise ValueError("click() needs a button text or callback_data")
        if isinstance(message, int):
            message = self.chat.messages.get(message)
        if message is not None and message.deleted:
            raise AssertionError(f"message {message.message_id} was deleted: its buttons are gone")
        if message is not None and not message.buttons:
            raise AssertionError(f"message {message.message_id} has no buttons (any more)")
        candidates = [message] if message is not None else list(reversed(self.bot_messages()))
        wanted = text if text is not None else f"callback_data={callback_data!r}"
        for candidate in candidates:
            if candidate.buttons:
                if candidate.find_button(text, callback_data) is None:
                    shown = [b.text for row in candidate.buttons for b in row]
                    raise AssertionError(f"no button {wanted!r} on message {candidate.message_id}: {shown}")
                return candidate
        raise AssertionError(f"no message with buttons to press {wanted!r}")

    async def _settle(self, done: Callable[[], bool], what: str, timeout: float | None) -> list[ChatMessage]:
        """Wait until ``done()`` and the bot has made no call for ``quiet_period``; return the changes."""
        timeout = self.timeout if timeout is None else timeout
        deadline = time.monotonic() + timeout
        while True:
            now = time.monotonic()
            quiet = (
                self.telegram.in_flight == 0
                and now - self.telegram.last_activity >= self.quiet_period
                and not self.telegram.bot_busy()
            )
            if done() and (quiet or now >= deadline):
                return self._take_changes()
            if now >= deadline:
                raise SandboxTimeout(f"timed out after {timeout:.1f} s waiting for {what}{self._failures()}")
            await asyncio.sleep(0.01)

    def _take_changes(self) -> list[ChatMessage]:
        changed_ids: list[int] = []
        for change in self.chat.changes[self._seen_changes :]:
            if change.message_id not in changed_ids:
                changed_ids.append(change.message_id)
        self._seen_changes = len(self.chat.changes)
        changed = [self.chat.messages[i] for i in changed_ids]
        return [copy.copy(m) for m in changed if m.from_bot and not m.deleted]

    def _failures(self) -> str:
        """Hints for a timeout message: the bot's failed calls, updates it never asked for."""
        hints = []
        failed = [r for r in self.telegram.requests[-20:] if r.error and r.chat_id in (None, self.id)]
        if failed:
            calls = "; ".join(f"{r.method} → {r.error}" for r in failed[-3:])
            hints.append(f"the bot's failed calls: {calls}")
        if dropped := self.telegram.updates.dropped_types:
            hints.append(f"update types dropped by the bot's allowed_updates: {sorted(dropped)}")
        if self.telegram.updates.pending_count:
            hints.append(f"{self.telegram.updates.pending_count} update(s) not yet taken by the bot")
        return "".join(f"; {hint}" for hint in hints)


def _utf16_len(text: str) -> int:
    return len(text.encode("utf-16-le")) // 2
