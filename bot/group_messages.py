"""Whether a message is for this bot: a command for it, a mention of it, a reply to one of its
messages (what a group's messages need to be answered at all), and the question without the mentions."""

from __future__ import annotations

from aiogram.enums import ChatType, MessageEntityType
from aiogram.types import Message


def in_group(message: Message) -> bool:
    return message.chat.type != ChatType.PRIVATE


def command_for(text: str, username: str) -> bool | None:
    """Whether text starting with a command is for this bot (None: it is no command)."""
    if not text.startswith("/"):
        return None
    command = text.split(maxsplit=1)[0] if text.strip() else text
    _, at, name = command.partition("@")
    return not at or name.lower() == username.lower()


def _mentions(message: Message, username: str, bot_id: int) -> list[tuple[int, int]]:
    """The spans (in UTF-16 code units, as Telegram counts) of the message's mentions of this bot."""
    text = message.text or message.caption or ""
    entities = message.entities or message.caption_entities or []
    spans = []
    for entity in entities:
        if entity.type == MessageEntityType.MENTION:
            if entity.extract_from(text).lower() == f"@{username.lower()}":
                spans.append((entity.offset, entity.length))
        elif entity.type == MessageEntityType.TEXT_MENTION and entity.user and entity.user.id == bot_id:
            spans.append((entity.offset, entity.length))
    return spans


def addressed_to_bot(message: Message, username: str, bot_id: int) -> bool:
    """A command for this bot, a mention of it, or a reply to one of its messages."""
    text = message.text or message.caption or ""
    if (for_us := command_for(text, username)) is not None:
        return for_us
    replied = message.reply_to_message
    if replied is not None and replied.from_user is not None and replied.from_user.id == bot_id:
        return True
    return bool(_mentions(message, username, bot_id))


def question_of(message: Message, username: str, bot_id: int) -> str:
    """The message's text without its mentions of the bot."""
    text = message.text or message.caption or ""
    encoded = text.encode("utf-16-le")
    for offset, length in sorted(_mentions(message, username, bot_id), reverse=True):
        encoded = encoded[: offset * 2] + " ".encode("utf-16-le") + encoded[(offset + length) * 2 :]
    return " ".join(encoded.decode("utf-16-le", errors="ignore").split())
