"""The dialog message's calls, their answers read only as far as the dialog reads them.

Each press edits the dialog's message, and Telegram answers with the whole edited message, which
aiogram parses into a `Message` (its sender, chat, entities, each a model). The dialog reads none of
it, and of a sent message only its id. `EditDialogMessage` and `SendDialogMessage` are aiogram's
calls answered as `Acknowledged`: the message's id, the rest of the answer left unread. Any session
reads them so, as the method's answer type says; errors are read and raised as aiogram raises them.
Why, with the figures: bench/README.md ("Bot API calls").
"""

from __future__ import annotations

from aiogram.methods import EditMessageText, SendMessage
from pydantic import BaseModel, ConfigDict


class Acknowledged(BaseModel):
    """A sent or edited message as the dialog reads Telegram's answer: its id alone."""

    model_config = ConfigDict(extra="ignore", frozen=True)

    message_id: int


class EditDialogMessage(EditMessageText):
    """aiogram's ``editMessageText``, answered as `Acknowledged` (``True`` for an inline message)."""

    __returning__ = Acknowledged | bool


class SendDialogMessage(SendMessage):
    """aiogram's ``sendMessage``, answered as `Acknowledged`."""

    __returning__ = Acknowledged  # type: ignore[assignment]  # the answer read as the dialog reads it
