"""Callback data factories: every inline button of the bot packs one of these (≤ 64 bytes).

Every field is typed and bounded, so data a client made up (forged, or from an older version of the
bot) fails to unpack: no handler's filter matches it and the fallback answers "stale button". Several
factories share the prefix ``n`` (and so the format of the buttons already in chats): ``n:page:<n>``,
``n:goto:<step>``, ``n:back:`` / ``n:restart:`` / ``n:details:``; each accepts only its own action.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Annotated, Literal

from aiogram.filters.callback_data import CallbackData
from pydantic import Field, StringConstraints

TYPICAL = "_"
"""The value of a "typical" button: leave the field to the core's documented default."""

MAX_PAGE = 99
"""More pages of models than any catalogue has; a page beyond the last shows the last one."""

Name = Annotated[str, StringConstraints(pattern=r"^[a-z_]{1,32}$")]
"""A step's name as it appears in callback data (which step it is, is checked by the handler)."""
Value = Annotated[str, StringConstraints(max_length=64)]
"""A step's answer as packed (whether the step accepts it is checked by the handler)."""


class Nav(StrEnum):
    BACK = "back"
    RESTART = "restart"
    PAGE = "page"
    GOTO = "goto"
    DETAILS = "details"  # the rest of a result: every verdict, mitigation and assumption


class Change(StrEnum):
    """The answers a result's buttons can change (`bot.keyboards.result_keyboard`)."""

    PRECISION = "precision"
    METHOD = "method"
    CONTEXT_LENGTH = "context_length"
    SEQ_LEN = "seq_len"
    RESOLUTION = "resolution"


class StepCB(CallbackData, prefix="s"):
    """An answer to a wizard step: `step` is the step (= request field) name, `value` its value."""

    step: Name
    value: Value


class NavCB(CallbackData, prefix="n"):
    """Navigation inside the wizard without an argument: back, start over, the result's details."""

    action: Literal[Nav.BACK, Nav.RESTART, Nav.DETAILS]
    arg: Literal[""] = ""


class PageCB(CallbackData, prefix="n"):
    """A page of the model list."""

    action: Literal[Nav.PAGE] = Nav.PAGE
    page: Annotated[int, Field(ge=0, le=MAX_PAGE)]


class GotoCB(CallbackData, prefix="n"):
    """From the result: change one answer, then back to the result."""

    action: Literal[Nav.GOTO] = Nav.GOTO
    step: Change


class CardCB(CallbackData, prefix="c"):
    """From a result whose card was named without its memory ("4090"): the same request on the other
    card of that chip (`gpu`, a catalogue id; whether the catalogue has it is checked by the handler)."""

    gpu: Annotated[str, StringConstraints(pattern=r"^[a-z0-9][a-z0-9._-]{0,40}$")]


class LangCB(CallbackData, prefix="l"):
    """A language of `/lang` (whether the bot speaks it is checked by the handler)."""

    lang: Annotated[str, StringConstraints(pattern=r"^[a-z]{2}$")]


class Quote(StrEnum):
    OPEN = "open"  # "✉️ Request a quote" under a result
    SKIP = "skip"  # no comment for the quote
    RESERVE = "reserve"  # "📅 Reserve" under a result: a hold request for its offer
    HOURS = "hours"  # the hold: as soon as possible, for hours
    MONTHS = "months"  # the hold: as soon as possible, for months


class QuoteCB(CallbackData, prefix="q"):
    """The quote form (`bot.handlers.leads`)."""

    action: Quote


class SalesCB(CallbackData, prefix="p"):
    """ "Ask for a price" / "Request a quote" under the price list, a comparison and the "other task"
    note: the quote form (`bot.handlers.leads`), not tied to the dialog's last message as `QuoteCB`."""

    action: Literal["quote"] = "quote"


LeadId = Annotated[int, Field(ge=1, le=2**62)]


class ClaimCB(CallbackData, prefix="lc"):
    """ "Беру" on a lead's card in the sales chat (`bot.handlers.claims.on_claim`)."""

    lead_id: LeadId


class NeedCB(CallbackData, prefix="lq"):
    """A qualification answer on the user's lead: when it is needed, for how long (values in
    bot.db.models NEED_WHEN / NEED_FOR, checked by the handler), or ``skip``."""

    lead_id: LeadId
    question: Literal["when", "for"]
    value: Annotated[str, StringConstraints(pattern=r"^[a-z]{1,8}$")]


class LaunchCB(CallbackData, prefix="cmd"):
    """ "⌨️ Launch command" under a result: the commands that run what it sized (`bot.handlers.launch`)."""

    action: Literal["show"] = "show"


MAX_CALLBACK_BYTES = 64


def fits_callback(data: CallbackData) -> bool:
    return len(data.pack().encode()) <= MAX_CALLBACK_BYTES
