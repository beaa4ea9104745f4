"""A scripted Telegram user for tests: sends messages, presses buttons, waits for the bot's replies
(the chat it sees and the waits: tgsandbox.user_chat)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from aiogram.types import (
    CallbackQuery,
    Chat,
    Contact,
    InaccessibleMessage,
    InlineQuery,
    Update,
    User,
)

from .params import Upload
from .state import ChatMessage
from .user_chat import UserChat

# The senders Telegram puts in ``from`` when nobody in particular speaks (Bot API docs, Message.from):
GROUP_ANONYMOUS_BOT = User(id=1087968824, is_bot=True, first_name="Group", username="GroupAnonymousBot")
"""An anonymous group administrator; ``sender_chat`` is the group itself."""
CHANNEL_BOT = User(id=136817688, is_bot=True, first_name="Channel", username="Channel_Bot")
"""A message sent on behalf of a channel ("send as channel"); ``sender_chat`` is that channel."""


@dataclass
class CallbackAnswer:
    """What the bot answered to a button press (answerCallbackQuery), and what it changed in the chat."""

    text: str | None
    show_alert: bool
    url: str | None
    messages: list[ChatMessage] = field(default_factory=list)


@dataclass
class InlineAnswer:
    results: list[dict[str, Any]]
    is_personal: bool
    next_offset: str | None
    cache_time: int | None


class SandboxUser(UserChat):
    """A user in a private chat with the bot (or, from `in_group`, in a group the bot is in).
    All waits are bounded by ``timeout`` seconds."""

    def in_group(
        self,
        chat_id: int = -1001000000001,
        title: str = "Test group",
        *,
        type: str = "supergroup",
        username: str | None = None,
    ) -> SandboxUser:
        """This user writing in a group (``type="group"``) or supergroup with the bot; the chat is
        created on first use and shared by everyone who joins it with the same ``chat_id``."""
        existing = self.telegram.chats.get(chat_id)
        chat = (
            existing.chat
            if existing is not None
            else Chat(id=chat_id, type=type, title=title, username=username)
        )
        return SandboxUser(
            self.telegram, self.user, quiet_period=self.quiet_period, timeout=self.timeout, chat=chat
        )

    # --- actions ---

    async def send(
        self,
        text: str,
        *,
        reply_to: ChatMessage | int | None = None,
        update_id: int | None = None,
        expect_reply: bool = True,
        timeout: float | None = None,
        sender: User | None = None,
        sender_chat: Chat | None = None,
        via_bot: User | None = None,
    ) -> list[ChatMessage]:
        """Send a text message (optionally a reply to ``reply_to``); return the bot messages it caused
        (new or edited) once the bot is quiet.

        ``sender`` replaces this user in ``from`` (e.g. `GROUP_ANONYMOUS_BOT`, `CHANNEL_BOT`),
        ``sender_chat`` is the chat it is sent on behalf of (the group for an anonymous admin, a
        channel), ``via_bot`` the bot whose inline result this message is (``sandbox.bot_user``)."""
        message = self._new_user_message(text, sender=sender)
        if reply_to is not None:
            message.reply_to_message_id = reply_to if isinstance(reply_to, int) else reply_to.message_id
        api_message = self.chat.api_message(message)
        extra: dict[str, Any] = {}
        if sender_chat is not None:
            extra["sender_chat"] = sender_chat
        if via_bot is not None:
            extra["via_bot"] = via_bot
        if extra:
            api_message = api_message.model_copy(update=extra)
        update = Update(update_id=update_id or 0, message=api_message)
        delivered_before = self.telegram.updates.delivered
        await self._push(update, update_id)
        if expect_reply:
            return await self._settle(self._bot_changed_chat, f"a reply to {text!r}", timeout)
        return await self._settle(
            lambda: self.telegram.updates.delivered > delivered_before, f"delivery of {text!r}", timeout
        )

    async def post(self, text: str, *, update_id: int | None = None) -> int:
        """Send a text message and return at once (no waiting for the bot); returns its update_id."""
        message = self._new_user_message(text)
        update = Update(update_id=update_id or 0, message=self.chat.api_message(message))
        data = update.model_dump(mode="json", exclude_none=True, by_alias=True)
        if update_id is None:
            data.pop("update_id")
        return await self.telegram.updates.push(data)

    async def click(
        self,
        text: str | None = None,
        *,
        callback_data: str | None = None,
        message: ChatMessage | int | None = None,
        inaccessible: bool = False,
        timeout: float | None = None,
    ) -> CallbackAnswer:
        """Press an inline button (by text or callback data) on ``message`` or the latest keyboard;
        wait until the bot answers the callback query and has gone quiet.

        ``inaccessible=True`` sends the message as Telegram does for messages older than 48 hours:
        an ``InaccessibleMessage`` (date 0, no text, no ``edit_text``)."""
        target = self._message_with_button(text, callback_data, message)
        button = target.find_button(text, callback_data)
        assert button is not None
        if not button.inline:
            replies = await self.send(button.text, timeout=timeout)
            return CallbackAnswer(None, False, None, replies)
        if button.callback_data is None:
            raise AssertionError(f"button {button.text!r} is not a callback button (url={button.url!r})")
        query = self.telegram.new_query("callback_query", self.id, self.chat.chat.id)
        callback = CallbackQuery(
            id=query.query_id,
            from_user=self.user,
            chat_instance=f"ci{self.id}",
            message=InaccessibleMessage(chat=self.chat.chat, message_id=target.message_id)
            if inaccessible
            else self.chat.api_message(target),
            data=button.callback_data,
        )
        await self._push(Update(update_id=0, callback_query=callback), None)
        what = f"an answer to the callback query of button {button.text!r} ({button.callback_data!r})"
        replies = await self._settle(lambda: query.answered, what, timeout)
        answer = query.answer or {}
        return CallbackAnswer(answer.get("text"), bool(answer.get("show_alert")), answer.get("url"), replies)

    async def press(
        self,
        callback_data: str,
        *,
        message: ChatMessage | int | None = None,
        timeout: float | None = None,
    ) -> CallbackAnswer:
        """Send a callback query with ``callback_data`` as given, whatever the buttons say: what a
        modified client does (forged or stale data). ``message``: the message it claims to come from
        (default: the bot's latest message in this chat). Waits like `click`."""
        if isinstance(message, int):
            message = self.chat.messages.get(message)
        target = message if message is not None else self.last_message()
        query = self.telegram.new_query("callback_query", self.id, self.chat.chat.id)
        callback = CallbackQuery(
            id=query.query_id,
            from_user=self.user,
            chat_instance=f"ci{self.id}",
            message=self.chat.api_message(target),
            data=callback_data,
        )
        await self._push(Update(update_id=0, callback_query=callback), None)
        what = f"an answer to the callback query {callback_data!r}"
        replies = await self._settle(lambda: query.answered, what, timeout)
        answer = query.answer or {}
        return CallbackAnswer(answer.get("text"), bool(answer.get("show_alert")), answer.get("url"), replies)

    async def send_nowait(
        self,
        text: str,
        *,
        sender: User | None = None,
        sender_chat: Chat | None = None,
        via_bot: User | None = None,
    ) -> int:
        """Queue a text message without waiting for anything (a flood, concurrent users); returns its
        update_id. Read the bot's answers later (`wait_reply`, `messages`)."""
        message = self._new_user_message(text, sender=sender)
        extra: dict[str, Any] = {"sender_chat": sender_chat, "via_bot": via_bot}
        api_message = self.chat.api_message(message).model_copy(
            update={k: v for k, v in extra.items() if v is not None}
        )
        await self._push(Update(update_id=0, message=api_message), None)
        assert self.last_update_id is not None
        return self.last_update_id

    async def share_contact(
        self,
        phone_number: str,
        *,
        user_id: int | None = None,
        first_name: str | None = None,
        timeout: float | None = None,
    ) -> list[ChatMessage]:
        """Send a contact, as a ``request_contact`` reply-keyboard button does (the user's own phone:
        ``user_id`` is this user's unless given); return the bot messages it caused once it is quiet."""
        message = self._new_user_message("")
        message.text = None
        contact = Contact(
            phone_number=phone_number,
            first_name=first_name or self.user.first_name,
            user_id=self.id if user_id is None else user_id,
        )
        api_message = self.chat.api_message(message).model_copy(update={"contact": contact})
        await self._push(Update(update_id=0, message=api_message), None)
        return await self._settle(self._bot_changed_chat, f"a reply to the contact {phone_number!r}", timeout)

    async def send_document(
        self,
        file_name: str,
        content: bytes,
        *,
        mime_type: str | None = None,
        caption: str | None = None,
        timeout: float | None = None,
    ) -> list[ChatMessage]:
        """Send a file as a document (kept so the bot can `getFile` and download it); return the bot
        messages it caused once the bot is quiet."""
        file_id = self.telegram.next_id("userdoc-")
        self.telegram.files[file_id] = Upload(file_name, content)
        message = self._new_user_message(caption or "")
        message.text = caption or None
        message.entities = []
        message.document_name, message.document_file_id = file_name, file_id
        message.document_mime, message.document_size = mime_type, len(content)
        await self._push(Update(update_id=0, message=self.chat.api_message(message)), None)
        return await self._settle(self._bot_changed_chat, f"a reply to the document {file_name!r}", timeout)

    async def inline(
        self, query_text: str, *, offset: str = "", timeout: float | None = None
    ) -> InlineAnswer:
        """Type ``@bot query_text`` and wait for the bot's answerInlineQuery."""
        query = self.telegram.new_query("inline_query", self.id, self.chat.chat.id)
        inline_query = InlineQuery(
            id=query.query_id,
            from_user=self.user,
            query=query_text,
            offset=offset,
            chat_type="private" if self.chat.chat.type == "private" else self.chat.chat.type,
        )
        await self._push(Update(update_id=0, inline_query=inline_query), None)
        await self._settle(lambda: query.answered, f"an answer to the inline query {query_text!r}", timeout)
        answer = query.answer or {}
        return InlineAnswer(
            answer.get("results", []),
            bool(answer.get("is_personal")),
            answer.get("next_offset"),
            answer.get("cache_time"),
        )

    async def wait_reply(self, timeout: float | None = None) -> list[ChatMessage]:
        """Wait for bot messages not yet returned by an earlier call (e.g. sent by a background task)."""
        return await self._settle(self._bot_changed_chat, "a message from the bot", timeout)

    def unread(self) -> list[ChatMessage]:
        """Bot messages new or edited since the last call that returned messages, without waiting."""
        return self._take_changes()
