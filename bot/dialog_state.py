"""What the dialog keeps in the FSM data, as one typed model: handlers never touch a string key.

Read once and saved at most once per update: `DialogStateMiddleware` parses the FSM data into the
handler data (`data["dialog"]`, a `DialogHolder`, also `ctx.dialog`), the handlers read and change it
there, and it is written back after the handler returned, only if it changed (an update that raised
writes nothing, as its database writes roll back), or before a commit of the handler's own.
`DialogState.from_data` never raises: data written by an older version, by hand or forged
(RedisStorage holds plain JSON) keeps the fields that still validate and takes the defaults for the
others; the answers' earlier flat shape is converted (`bot.flow.from_stored`).
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Mapping
from typing import Any

from aiogram import BaseMiddleware
from aiogram.fsm.context import FSMContext
from aiogram.types import TelegramObject
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from bot.flow import Answers, from_stored
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

    # Frozen: an update's readers share one parsed state (`DialogHolder`); a change is a new copy.
    model_config = ConfigDict(extra="ignore", frozen=True)

    msg_id: int | None = None  # the dialog message: buttons under any other one are stale
    source: str | None = None  # the deep-link source of /start, recorded with each dialog row
    dialog_id: int | None = None  # the dialogs row being answered
    answers: Answers = Field(default_factory=Answers)  # the request so far, the wizard position
    editing: list[str] | None = None  # changing answers from the result: the steps still to ask
    last_request: dict[str, Any] | None = None  # the core request of the last answer
    last_notes: list[Assumption] = Field(default_factory=list)  # … and what its parser assumed
    lead: LeadDraft | None = None  # the quote form in progress
    measurement: dict[str, Any] | None = None  # a pasted log's numbers, until stored (with consent)

    @field_validator("answers", mode="before")
    @classmethod
    def _answers_of_any_version(cls, value: Any) -> Any:
        return from_stored(value)  # an earlier version's flat dict, in this version's shape

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


class DialogHolder:
    """The dialog state of the update being handled: `state` as read (then as changed); `set` and
    `update` replace it with a changed copy, which `DialogStateMiddleware` saves after the handler."""

    def __init__(self, state: DialogState) -> None:
        self.loaded = state
        self.state = state

    @property
    def changed(self) -> bool:
        return self.state != self.loaded

    def set(self, state: DialogState) -> DialogState:
        self.state = state
        return state

    def update(self, **changes: Any) -> DialogState:
        """The state with some fields changed (the others as they are). A change that does not
        validate is a bug and raises. Only the changes are validated: the fields are independent,
        and the others were validated when the state was made."""
        unknown = set(changes) - set(DialogState.model_fields)
        if unknown:
            raise TypeError(f"DialogState has no fields {sorted(unknown)}")
        checked = DialogState.model_validate(changes)
        return self.set(self.state.model_copy(update={name: getattr(checked, name) for name in changes}))

    async def save(self, fsm: FSMContext) -> None:
        """Write the state now, if it changed: before a handler's own commit (with the FSM in the
        database it goes into the update's work, which `UpdateWork.commit_with` commits with the
        handler's rows), so the rows and the state they go with commit together (the middleware
        then writes only a later change)."""
        if self.changed:
            await self.state.save(fsm)
            self.loaded = self.state


class DialogStateMiddleware(BaseMiddleware):
    """Outer middleware for messages and callback queries (after aiogram's FSM middleware, so before
    the filters): one `get_data` into `data["dialog"]`, one `set_data` after the handler if changed."""

    async def __call__(
        self,
        handler: Callable[[TelegramObject, dict[str, Any]], Awaitable[Any]],
        event: TelegramObject,
        data: dict[str, Any],
    ) -> Any:
        fsm: FSMContext | None = data.get("state")
        if fsm is None:
            return await handler(event, data)
        dialog = data["dialog"] = DialogHolder(DialogState.from_data(await fsm.get_data()))
        result = await handler(event, data)
        if dialog.changed:
            await dialog.state.save(fsm)
        return result
