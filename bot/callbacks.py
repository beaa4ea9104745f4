"""Callback data factories: every inline button of the bot packs one of these (≤ 64 bytes)."""

from __future__ import annotations

from enum import StrEnum

from aiogram.filters.callback_data import CallbackData

TYPICAL = "_"
"""The value of a "typical" button: leave the field to the core's documented default."""


class Nav(StrEnum):
    BACK = "back"
    RESTART = "restart"
    PAGE = "page"
    GOTO = "goto"
    DETAILS = "details"  # the rest of a result: every verdict, mitigation and assumption


class StepCB(CallbackData, prefix="s"):
    """An answer to a wizard step: `step` is the step (= request field) name, `value` its value."""

    step: str
    value: str


class NavCB(CallbackData, prefix="n"):
    """Navigation inside the wizard: back, start over, model list page, jump to a step."""

    action: Nav
    arg: str = ""


class LangCB(CallbackData, prefix="l"):
    lang: str


MAX_CALLBACK_BYTES = 64


def fits_callback(data: CallbackData) -> bool:
    return len(data.pack().encode()) <= MAX_CALLBACK_BYTES
