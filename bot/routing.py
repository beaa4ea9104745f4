"""Feature routers that an event passes by at once when none of their handlers can take it.

aiogram tries the routers in order, and each visit passes the handler data (~28 keys) through about
six calls and tries every handler's filters: a button press crossed 13 routers to reach the wizard's
(bench/README.md, "Routing"). A `FeatureRouter` first asks its handlers' first filters, which aiogram
would try first: a press's callback-data prefix (`CallbackData.filter()`), a command's prefix
(`Command`), the user's state (`StateFilter`). When no handler's first filter can pass, or no handler
is for the event's type, the visit ends there. It is read off those filters, so it cannot disagree
with them: any other first filter, a root filter, an outer middleware or a sub-router makes the
router visited as aiogram visits it.
"""

from __future__ import annotations

from dataclasses import dataclass
from inspect import isclass
from typing import Any

from aiogram import Router
from aiogram.dispatcher.event.bases import UNHANDLED
from aiogram.dispatcher.event.handler import HandlerObject
from aiogram.dispatcher.event.telegram import TelegramEventObserver
from aiogram.filters import Command, StateFilter
from aiogram.filters.callback_data import CallbackQueryFilter
from aiogram.fsm.state import State, StatesGroup
from aiogram.types import CallbackQuery, Message, TelegramObject


@dataclass(frozen=True)
class Reach:
    """What a router's handlers of one update type can take: anything (`everything`), or only an
    event one of their first filters may pass: a press whose callback data starts with a prefix of
    `presses` (by separator), a message whose text starts with a character of `commands` (a command's
    prefix), or any event of a user in one of `states`."""

    everything: bool
    presses: tuple[tuple[str, frozenset[str]], ...] = ()
    commands: str = ""
    states: frozenset[str | None] = frozenset()

    def takes(self, event: TelegramObject, raw_state: str | None) -> bool:
        if self.everything or raw_state in self.states:
            return True
        if self.presses and isinstance(event, CallbackQuery) and event.data:
            data = event.data
            return any(data.partition(separator)[0] in prefixes for separator, prefixes in self.presses)
        if self.commands and isinstance(event, Message):
            text = (event.text or event.caption or "").lstrip()
            return text[:1] != "" and text[0] in self.commands
        return False


EVERYTHING = Reach(everything=True)


def reach_of(observer: TelegramEventObserver, sub_routers: int) -> Reach:
    """The reach of one observer's handlers, read off their first filters (the module doc)."""
    if sub_routers or len(observer.outer_middleware) or observer._handler.filters:
        return EVERYTHING
    presses: dict[str, set[str]] = {}
    commands: set[str] = set()
    states: set[str | None] = set()
    for handler in observer.handlers:
        first = _first_filter(handler)
        if isinstance(first, CallbackQueryFilter):
            data = first.callback_data
            presses.setdefault(data.__separator__, set()).add(data.__prefix__)
        elif isinstance(first, Command):
            commands.update(first.prefix)
        elif isinstance(first, StateFilter) and (names := state_names(first)) is not None:
            states.update(names)
        else:
            return EVERYTHING
    return Reach(
        everything=False,
        presses=tuple((separator, frozenset(prefixes)) for separator, prefixes in presses.items()),
        commands="".join(sorted(commands)),
        states=frozenset(states),
    )


def _first_filter(handler: HandlerObject) -> object:
    return handler.filters[0].callback if handler.filters else None


def state_names(state_filter: StateFilter) -> set[str | None] | None:
    """The raw states a `StateFilter` passes (None: any state, "*")."""
    names: set[str | None] = set()
    for state in state_filter.states:
        if isinstance(state, State):
            state = state.state
        elif isinstance(state, StatesGroup):
            names.update(type(state).__all_states_names__)
            continue
        elif isclass(state) and issubclass(state, StatesGroup):
            names.update(state.__all_states_names__)
            continue
        if state == "*" or not (state is None or isinstance(state, str)):
            return None
        names.add(state)
    return names


class FeatureRouter(Router):
    """A router of one feature's handlers, passed by when they cannot take the event (module doc)."""

    def __init__(self, *, name: str | None = None) -> None:
        super().__init__(name=name)
        self._reach: dict[str, tuple[tuple[int, ...], Reach]] = {}

    def reach(self, update_type: str) -> Reach:
        observer = self.observers.get(update_type)
        if observer is None:
            return EVERYTHING  # not one of aiogram's types: as aiogram does
        # Kept per update type, read again when a handler, filter or middleware was added since.
        registered = (
            len(observer.handlers),
            len(self.sub_routers),
            len(observer.outer_middleware),
            len(observer._handler.filters or ()),
        )
        kept = self._reach.get(update_type)
        if kept is None or kept[0] != registered:
            kept = self._reach[update_type] = (registered, reach_of(observer, len(self.sub_routers)))
        return kept[1]

    async def propagate_event(self, update_type: str, event: TelegramObject, **kwargs: Any) -> Any:
        if not self.reach(update_type).takes(event, kwargs.get("raw_state")):
            return UNHANDLED
        return await super().propagate_event(update_type, event, **kwargs)
