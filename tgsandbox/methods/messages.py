"""Sending, editing and deleting messages, with Telegram's validation."""

from __future__ import annotations

import time
from typing import Any

from aiogram.types import MessageEntity
from pydantic import ValidationError

from ..errors import bad_request
from ..formatting import FormattedText, format_text
from ..keyboards import validate_reply_markup
from ..params import Params, Upload
from ..state import ChatLog, ChatMessage
from ..telegram import FakeTelegram
from . import api_method

CHAT_ACTIONS = frozenset(
    {
        "typing",
        "upload_photo",
        "record_video",
        "upload_video",
        "record_voice",
        "upload_voice",
        "upload_document",
        "choose_sticker",
        "find_location",
        "record_video_note",
        "upload_video_note",
    }
)
NOT_MODIFIED = (
    "message is not modified: specified new message content and reply markup are exactly the same "
    "as a current content and reply markup of the message"
)


def _entities(params: Params, name: str) -> list[MessageEntity] | None:
    raw = params.json(name)
    if raw is None:
        return None
    try:
        return [MessageEntity.model_validate(item) for item in raw]
    except (TypeError, ValidationError):
        raise bad_request(f"can't parse {name} JSON object") from None


def _inline_markup(params: Params) -> dict[str, Any] | None:
    markup = validate_reply_markup(params.json("reply_markup"))
    return markup if markup and "inline_keyboard" in markup else None


def _replied_message_id(chat: ChatLog, params: Params) -> int | None:
    """The message replied to, if it exists; Telegram refuses a missing one unless told otherwise."""
    reply = params.json("reply_parameters") or {}
    message_id = reply.get("message_id") if isinstance(reply, dict) else None
    if message_id is None and params.integer("reply_to_message_id"):
        message_id = params.integer("reply_to_message_id")
    if message_id is None:
        return None
    replied = chat.messages.get(int(message_id))
    if replied is not None and not replied.deleted:
        return replied.message_id
    if reply.get("allow_sending_without_reply") or params.flag("allow_sending_without_reply"):
        return None
    raise bad_request("message to be replied not found")


def _send(
    telegram: FakeTelegram, params: Params, formatted: FormattedText, source: str | None, **media: Any
) -> dict[str, Any]:
    chat = telegram.chat_of(params)
    markup = validate_reply_markup(params.json("reply_markup"))
    reply_to = _replied_message_id(chat, params)
    message = ChatMessage(
        message_id=chat.allocate_id(),
        chat_id=chat.chat.id,
        from_bot=True,
        sender=telegram.bot_user,
        text=formatted.text or None,
        source_text=source,
        parse_mode=params.text("parse_mode"),
        entities=formatted.entities,
        reply_markup=markup,
        reply_to_message_id=reply_to,
        **media,
    )
    chat.add(message)
    return message.to_json(chat)


@api_method("sendMessage")
async def send_message(telegram: FakeTelegram, params: Params) -> Any:
    telegram.chat_of(params)  # "chat not found" comes before text errors in Telegram
    text = params.text("text")
    formatted = format_text(text, params.text("parse_mode"), _entities(params, "entities"))
    return _send(telegram, params, formatted, text)


def _send_file(telegram: FakeTelegram, params: Params, kind: str) -> tuple[FormattedText, str, str]:
    telegram.chat_of(params)
    file = params.file(kind)
    if file is None:
        raise bad_request(f"there is no {kind} in the request")
    caption = params.text("caption")
    formatted = format_text(
        caption, params.text("parse_mode"), _entities(params, "caption_entities"), caption=True
    )
    if isinstance(file, str):  # a file_id of an earlier upload, or a URL Telegram would fetch
        if file not in telegram.files and not file.startswith(("http://", "https://")):
            raise bad_request("wrong file identifier/HTTP URL specified")
        file_id = file
    else:
        file_id = telegram.next_id(f"{kind}-")
        telegram.files[file_id] = file
    name = file.filename if isinstance(file, Upload) else file.rsplit("/", 1)[-1]
    return formatted, file_id, name


@api_method("sendPhoto")
async def send_photo(telegram: FakeTelegram, params: Params) -> Any:
    formatted, file_id, _ = _send_file(telegram, params, "photo")
    return _send(telegram, params, formatted, params.text("caption"), photo_file_id=file_id)


@api_method("sendDocument")
async def send_document(telegram: FakeTelegram, params: Params) -> Any:
    formatted, file_id, name = _send_file(telegram, params, "document")
    upload = telegram.files.get(file_id)
    size = len(upload.content) if isinstance(upload, Upload) else None
    return _send(
        telegram,
        params,
        formatted,
        params.text("caption"),
        document_name=name,
        document_file_id=file_id,
        document_size=size,
    )


def _editable(telegram: FakeTelegram, params: Params) -> ChatMessage | None:
    """The message to edit, or None for an inline-mode message (accepted, not tracked)."""
    if params.values.get("inline_message_id"):
        return None
    message = telegram.message_of(params, "message to edit not found")
    if not message.from_bot:
        raise bad_request("message can't be edited")
    return message


def _apply_edit(telegram: FakeTelegram, message: ChatMessage, content: dict[str, Any], **extra: Any) -> Any:
    """Edit what a client shows (``content``); an edit that changes nothing is refused like Telegram."""
    if all(getattr(message, name) == value for name, value in content.items()):
        raise bad_request(NOT_MODIFIED)
    for name, value in {**content, **extra}.items():
        setattr(message, name, value)
    message.edit_count += 1
    message.edit_date = int(time.time())
    chat = telegram.chats[message.chat_id]
    chat.log(message.message_id, "edited")
    return message.to_json(chat)


@api_method("editMessageText")
async def edit_message_text(telegram: FakeTelegram, params: Params) -> Any:
    message = _editable(telegram, params)
    text = params.text("text")
    formatted = format_text(text, params.text("parse_mode"), _entities(params, "entities"))
    markup = _inline_markup(params)
    if message is None:
        return True
    if message.is_media:
        raise bad_request("there is no text in the message to edit")
    # Telegram removes the inline keyboard when an edit does not repeat it.
    content = {"text": formatted.text, "entities": formatted.entities, "reply_markup": markup}
    return _apply_edit(telegram, message, content, source_text=text, parse_mode=params.text("parse_mode"))


@api_method("editMessageCaption")
async def edit_message_caption(telegram: FakeTelegram, params: Params) -> Any:
    message = _editable(telegram, params)
    caption = params.text("caption")
    formatted = format_text(
        caption, params.text("parse_mode"), _entities(params, "caption_entities"), caption=True
    )
    markup = _inline_markup(params)
    if message is None:
        return True
    if not message.is_media:
        raise bad_request("there is no caption in the message to edit")
    content = {"text": formatted.text or None, "entities": formatted.entities, "reply_markup": markup}
    return _apply_edit(telegram, message, content, source_text=caption, parse_mode=params.text("parse_mode"))


@api_method("editMessageReplyMarkup")
async def edit_message_reply_markup(telegram: FakeTelegram, params: Params) -> Any:
    message = _editable(telegram, params)
    markup = _inline_markup(params)
    if message is None:
        return True
    return _apply_edit(telegram, message, {"reply_markup": markup})


@api_method("deleteMessage")
async def delete_message(telegram: FakeTelegram, params: Params) -> Any:
    message = telegram.message_of(params, "message to delete not found")
    message.deleted = True
    telegram.chats[message.chat_id].log(message.message_id, "deleted")
    return True


@api_method("sendChatAction")
async def send_chat_action(telegram: FakeTelegram, params: Params) -> Any:
    telegram.chat_of(params)
    if params.text("action") not in CHAT_ACTIONS:
        raise bad_request("wrong parameter action in request")
    return True
