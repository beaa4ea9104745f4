"""Feature routers that an event passes by at once when none of their handlers can take it.

aiogram tries the routers in order, and each visit passes the handler data (~28 keys) through about
six calls and tries every handler's filters: a button press crossed 13 routers to reach the wizard's,
~0.25 ms of routing (bench/README.md, "Routing"). A `FeatureRouter` first asks what its own handlers
declare: none for the event's type, or, for a button press, no handler whose callback data has the
press's prefix (its first filter, aiogram's `CallbackData.filter()`), and the visit ends there. It is
read off the handlers' filters, so it cannot disagree with them: a handler that filters otherwise, a
root filter, an outer middleware or a sub-router makes the router visited as aiogram visits it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from aiogram import Router
from aiogram.dispatcher.event.bases import UNHANDLED
from aiogram.dispatcher.event.telegram import TelegramEventObserver
from aiogram.filters.callback_data import CallbackQueryFilter
from aiogram.types import CallbackQuery, TelegramObject


@dataclass(frozen=True)
class Reach:
    """What a router's handlers of one update type can take: anything (`everything`), nothing, or
    only button presses whose callback data starts with one of `prefixes` (by separator)."""

    everything: bool
    prefixes: tuple[tuple[str, frozenset[str]], ...] = ()

    def takes(self, event: TelegramObject) -> bool:
        if self.everything:
            return True
        if not self.prefixes or not isinstance(event, CallbackQuery) or not event.data:
            return False
        data = event.data
        return any(data.partition(separator)[0] in prefixes for separator, prefixes in self.prefixes)


def reach_of(observer: TelegramEventObserver, update_type: str, sub_routers: int) -> Reach:
    """The reach of one observer's handlers, read off their filters (the module doc)."""
    if sub_routers or len(observer.outer_middleware) or observer._handler.filters:
        return Reach(everything=True)
    if not observer.handlers:
        return Reach(everything=False)
    if update_type != "callback_query":
        return Reach(everything=True)
    by_separator: dict[str, set[str]] = {}
    for handler in observer.handlers:
        first = handler.filters[0].callback if handler.filters else None
        if not isinstance(first, CallbackQueryFilter):
            return Reach(everything=True)
        data = first.callback_data
        by_separator.setdefault(data.__separator__, set()).add(data.__prefix__)
    return Reach(False, tuple((sep, frozenset(prefixes)) for sep, prefixes in by_separator.items()))


class FeatureRouter(Router):
    """A router of one feature's handlers, passed by when they cannot take the event (module doc)."""

    def __init__(self, *, name: str | None = None) -> None:
        super().__init__(name=name)
        self._reach: dict[str, tuple[tuple[int, ...], Reach]] = {}

    def reach(self, update_type: str) -> Reach:
        observer = self.observers.get(update_type)
        if observer is None:
            return Reach(everything=True)  # not one of aiogram's types: as aiogram does
        # Kept per update type, read again when a handler, filter or middleware was added since.
        registered = (
            len(observer.handlers),
            len(self.sub_routers),
            len(observer.outer_middleware),
            len(observer._handler.filters or ()),
        )
        kept = self._reach.get(update_type)
        if kept is None or kept[0] != registered:
            kept = self._reach[update_type] = (
                registered,
                reach_of(observer, update_type, len(self.sub_routers)),
            )
        return kept[1]

    async def propagate_event(self, update_type: str, event: TelegramObject, **kwargs: Any) -> Any:
        if not self.reach(update_type).takes(event):
            return UNHANDLED
        return await super().propagate_event(update_type, event, **kwargs)
