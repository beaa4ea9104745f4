"""What the dialog keeps in the FSM data, as one typed model: handlers never touch a string key.

`DialogState.load` reads what the storage holds and never raises: data written by an older version,
by hand or forged (RedisStorage holds plain JSON) keeps the fields that still validate and takes the
defaults for the others. The keys are the field names, so data written before this model loads as is.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any

from aiogram.fsm.context import FSMContext
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from bot.flow import Answers
from bot.storage import SqlAlchemyStorage
from core.contract import Assumption, Request

log = logging.getLogger(__name__)


class LeadDraft(BaseModel):
    """The quote form being filled (`bot.handlers.leads`): where to return, the dialog it came from, the
    contact given so far."""

    model_config = ConfigDict(extra="ignore")

    back_state: str | None = None  # the FSM state the form was opened from, restored after it
    dialog_id: int | None = None
    contact_kind: str | None = None
    contact: str | None = None
    # a reservation (bot.db.models.LEAD_RESERVATION): the offer to hold, and when / for how long
    reserve_offer: str | None = None
    hold: str | None = None


class DialogState(BaseModel):
    """One user's dialog: the message it edits, where the user came from, the answers so far and the
    last answer given (what follow-ups, "📋 Details" and "what changed" are about)."""

    # Frozen: one parsed state is shared by an update's readers (bot.storage.SqlAlchemyStorage.parsed).
    model_config = ConfigDict(extra="ignore", frozen=True)

    msg_id: int | None = None  # the dialog message: buttons under any other one are stale
    source: str | None = None  # the deep-link source of /start, recorded with each dialog row
    dialog_id: int | None = None  # the dialogs row being answered
    answers: Answers = Field(default_factory=dict)  # the steps' answers (`bot.flow`)
    editing: list[str] | None = None  # changing answers from the result: the steps still to ask
    last_request: dict[str, Any] | None = None  # the core request of the last answer
    last_notes: list[Assumption] = Field(default_factory=list)  # … and what its parser assumed
    lead: LeadDraft | None = None  # the quote form in progress
    measurement: dict[str, Any] | None = None  # a pasted log's numbers, until stored (with consent)

    @classmethod
    async def load(cls, fsm: FSMContext) -> DialogState:
        if isinstance(fsm.storage, SqlAlchemyStorage):
            return await fsm.storage.parsed(fsm.key, cls.from_data)
        return cls.from_data(await fsm.get_data())

    @classmethod
    def from_data(cls, data: Any) -> DialogState:
        """The state in `data`; a field that does not validate takes its default (logged, not raised)."""
        if not isinstance(data, Mapping):
            log.info("dialog state: not a mapping (%s), starting afresh", type(data).__name__)
            return cls()
        unknown = sorted(str(key) for key in data if key not in cls.model_fields)
        if unknown:
            log.info("dialog state: ignoring unknown keys %s", unknown)
        try:
            return cls.model_validate(dict(data))
        except ValidationError:
            pass
        kept: dict[str, Any] = {}
        for name in cls.model_fields:
            if name not in data:
                continue
            try:
                cls.model_validate({name: data[name]})
            except ValidationError as e:
                log.info("dialog state: dropping %s (%s)", name, e.errors()[0]["msg"])
            else:
                kept[name] = data[name]
        return cls.model_validate(kept)

    def to_data(self) -> dict[str, Any]:
        """What the storage keeps: JSON, defaults left out (they are what `from_data` fills in)."""
        return self.model_dump(mode="json", exclude_defaults=True)

    async def save(self, fsm: FSMContext) -> None:
        await fsm.set_data(self.to_data())

    def forget_answers(self) -> DialogState:
        """A new dialog's state: what outlives a dialog stays (the dialog message, the deep-link source,
        the last answer for follow-ups), the answers and the dialog row go."""
        return DialogState(
            msg_id=self.msg_id,
            source=self.source,
            last_request=self.last_request,
            last_notes=self.last_notes,
        )

    def previous_request(self) -> Request | None:
        """The last answer's request, for follow-ups; None when there is none or it no longer validates
        (kept from an older version of the contract: start afresh)."""
        if self.last_request is None:
            return None
        try:
            return Request.model_validate(self.last_request)
        except ValidationError:
            return None


async def update(fsm: FSMContext, **changes: Any) -> DialogState:
    """Change some fields of the stored state (the others as they are) and return the new state.
    A change that does not validate is a bug and raises; one that changes nothing writes nothing
    (the dialog message's id set again after each edit of it)."""
    unknown = set(changes) - set(DialogState.model_fields)
    if unknown:
        raise TypeError(f"DialogState has no fields {sorted(unknown)}")
    current = await DialogState.load(fsm)
    state = DialogState.model_validate({**dict(current), **changes})
    if state == current:
        return current
    await state.save(fsm)
    return state
