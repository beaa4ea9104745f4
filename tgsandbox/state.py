"""What the fake Telegram remembers: chats with their message history, queries, recorded requests."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, Literal

from aiogram.types import (
    Chat,
    Document,
    InlineKeyboardMarkup,
    Message,
    MessageEntity,
    PhotoSize,
    User,
)

from .keyboards import Button, buttons_of

ChangeKind = Literal["new", "edited", "deleted"]
QueryKind = Literal["callback_query", "inline_query"]


@dataclass
class ChatMessage:
    """A message as a Telegram client shows it now (current text and keyboard, edits applied)."""

    message_id: int
    chat_id: int
    from_bot: bool
    sender: User
    date: datetime = field(default_factory=lambda: datetime.now(UTC).replace(microsecond=0))
    text: str | None = None  # the text, or the caption of a photo / document, after entity parsing
    source_text: str | None = None  # as the bot sent it (with HTML tags)
    parse_mode: str | None = None
    entities: list[MessageEntity] = field(default_factory=list)
    reply_markup: dict[str, Any] | None = None
    reply_to_message_id: int | None = None
    photo_file_id: str | None = None
    document_name: str | None = None
    document_file_id: str | None = None  # a document a user sent: its upload in `FakeTelegram.files`
    document_mime: str | None = None
    document_size: int | None = None
    edit_count: int = 0
    edit_date: int | None = None
    deleted: bool = False

    @property
    def buttons(self) -> list[list[Button]]:
        """Rows of buttons; inline ones carry ``callback_data`` or ``url``."""
        return buttons_of(self.reply_markup)

    @property
    def photos(self) -> list[str]:
        return [self.photo_file_id] if self.photo_file_id else []

    @property
    def has_photo(self) -> bool:
        return self.photo_file_id is not None

    @property
    def has_document(self) -> bool:
        return self.document_name is not None

    @property
    def is_media(self) -> bool:
        return self.has_photo or self.has_document

    def find_button(self, text: str | None = None, callback_data: str | None = None) -> Button | None:
        for row in self.buttons:
            for button in row:
                if (text is None or button.text == text) and (
                    callback_data is None or button.callback_data == callback_data
                ):
                    return button
        return None

    def to_message(self, chat: Chat, replied: Message | None = None) -> Message:
        """The Bot API ``Message`` object for this message (``replied``: the message it answers)."""
        inline_markup = None
        if self.reply_markup and "inline_keyboard" in self.reply_markup:
            inline_markup = InlineKeyboardMarkup.model_validate(self.reply_markup)
        text_field = "caption" if self.is_media else "text"
        entities_field = "caption_entities" if self.is_media else "entities"
        extra: dict[str, Any] = {text_field: self.text or None, entities_field: self.entities or None}
        if self.photo_file_id:
            extra["photo"] = [
                PhotoSize(
                    file_id=self.photo_file_id,
                    file_unique_id=self.photo_file_id[-16:],
                    width=1280,
                    height=720,
                )
            ]
        if self.document_name:
            extra["document"] = Document(
                file_id=self.document_file_id or f"doc-{self.chat_id}-{self.message_id}",
                file_unique_id=f"udoc-{self.chat_id}-{self.message_id}",
                file_name=self.document_name,
                mime_type=self.document_mime,
                file_size=self.document_size,
            )
        return Message(
            message_id=self.message_id,
            date=self.date,
            chat=chat,
            from_user=self.sender,
            edit_date=self.edit_date,
            reply_markup=inline_markup,
            reply_to_message=replied,
            **extra,
        )

    def to_json(self, chat: ChatLog) -> dict[str, Any]:
        return chat.api_message(self).model_dump(mode="json", exclude_none=True, by_alias=True)


@dataclass(frozen=True)
class Change:
    """One entry of a chat's change log, which the driver reads to know what the bot did."""

    seq: int
    message_id: int
    kind: ChangeKind


@dataclass
class ChatLog:
    chat: Chat
    messages: dict[int, ChatMessage] = field(default_factory=dict)
    changes: list[Change] = field(default_factory=list)
    next_message_id: int = 1

    def add(self, message: ChatMessage) -> None:
        self.messages[message.message_id] = message
        self.log(message.message_id, "new")

    def log(self, message_id: int, kind: ChangeKind) -> None:
        self.changes.append(Change(len(self.changes), message_id, kind))

    def api_message(self, message: ChatMessage) -> Message:
        """The Bot API ``Message``, with the message it replies to."""
        replied = self.messages.get(message.reply_to_message_id or 0)
        return message.to_message(self.chat, replied.to_message(self.chat) if replied else None)

    def allocate_id(self) -> int:
        message_id = self.next_message_id
        self.next_message_id += 1
        return message_id

    def history(self) -> list[ChatMessage]:
        """All messages, oldest first, deleted ones included (flagged)."""
        return list(self.messages.values())


@dataclass(frozen=True)
class RecordedRequest:
    """A call the bot made, with parameters parsed (nested JSON decoded) and how it was answered."""

    method: str
    params: dict[str, Any]
    chat_id: int | None
    at: float
    error: str | None = None


@dataclass
class PendingQuery:
    """A callback or inline query waiting for the bot's answer."""

    query_id: str
    kind: QueryKind
    user_id: int
    created_at: float
    answered: bool = False
    answer: dict[str, Any] | None = None
    chat_id: int | None = None
