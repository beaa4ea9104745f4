"""Feature routers pass an event by when none of their handlers can take it (bot.routing), and take
every event aiogram's own routing would give them."""

from __future__ import annotations

from typing import Any

from aiogram import BaseMiddleware, F, Router
from aiogram.dispatcher.event.bases import UNHANDLED
from aiogram.filters.callback_data import CallbackData, CallbackQueryFilter
from aiogram.types import CallbackQuery, Update

from bot.handlers import routers
from bot.routing import FeatureRouter
from tests.bot.updates import message_update


class ACB(CallbackData, prefix="a"):
    n: int


class BCB(CallbackData, prefix="b"):
    n: int


class OtherSeparatorCB(CallbackData, prefix="a", sep="|"):
    n: int


class CountingFilter(CallbackQueryFilter):
    """aiogram's callback-data filter, counting the presses it was asked about."""

    def __init__(self, callback_data: type[CallbackData]) -> None:
        super().__init__(callback_data=callback_data)
        self.asked = 0

    async def __call__(self, query: CallbackQuery) -> Any:
        self.asked += 1
        return await super().__call__(query)


def press(data: str) -> CallbackQuery:
    update = Update.model_validate(
        {
            "update_id": 1,
            "callback_query": {
                "id": "1",
                "from": {"id": 5, "is_bot": False, "first_name": "Ann"},
                "chat_instance": "c",
                "data": data,
                "message": {"message_id": 3, "date": 0, "chat": {"id": 5, "type": "private"}, "text": "?"},
            },
        }
    )
    assert update.callback_query is not None
    return update.callback_query


def two_features(first: Router) -> tuple[Router, CountingFilter]:
    """A parent with `first` (an "a" button's handler) before a feature taking "b" buttons."""
    parent = Router(name="parent")
    asked = CountingFilter(ACB)
    first.callback_query.register(lambda query: "a", asked)
    second = FeatureRouter(name="b")
    second.callback_query.register(lambda query: "b", BCB.filter())
    parent.include_routers(first, second)
    return parent, asked


async def test_a_press_for_another_feature_passes_it_by_without_trying_its_handlers() -> None:
    parent, asked = two_features(FeatureRouter(name="a"))
    assert await parent.propagate_event("callback_query", press(BCB(n=1).pack())) == "b"
    assert asked.asked == 0
    assert await parent.propagate_event("callback_query", press(ACB(n=1).pack())) == "a"
    assert asked.asked == 1
    # aiogram's router tries the handler for every press
    plain, tried = two_features(Router(name="a"))
    assert await plain.propagate_event("callback_query", press(BCB(n=1).pack())) == "b"
    assert tried.asked == 1


async def test_a_prefix_is_read_with_its_own_separator() -> None:
    router = FeatureRouter(name="a")
    router.callback_query.register(lambda query: "a|", OtherSeparatorCB.filter())
    assert await router.propagate_event("callback_query", press("a|1")) == "a|"
    assert await router.propagate_event("callback_query", press("a:1")) is UNHANDLED


async def test_a_handler_filtering_otherwise_keeps_the_router_visited() -> None:
    router = FeatureRouter(name="any")
    router.callback_query.register(lambda query: "mine", F.data == "raw")
    assert await router.propagate_event("callback_query", press("raw")) == "mine"
    catch_all = FeatureRouter(name="fallback")
    catch_all.callback_query.register(lambda query: "stale")
    assert await catch_all.propagate_event("callback_query", press("zz:1")) == "stale"


async def test_handlers_registered_after_an_event_are_tried() -> None:
    router = FeatureRouter(name="late")
    assert await router.propagate_event("callback_query", press(ACB(n=1).pack())) is UNHANDLED
    assert await router.propagate_event("message", message_update(1).message) is UNHANDLED
    router.callback_query.register(lambda query: "a", ACB.filter())
    router.message.register(lambda message: "text")
    assert await router.propagate_event("callback_query", press(ACB(n=1).pack())) == "a"
    assert await router.propagate_event("message", message_update(2).message) == "text"


async def test_an_outer_middleware_or_a_root_filter_keeps_the_router_visited() -> None:
    seen: list[str] = []

    class Seen(BaseMiddleware):
        async def __call__(self, handler: Any, event: Any, data: dict[str, Any]) -> Any:
            seen.append("middleware")
            return await handler(event, data)

    router = FeatureRouter(name="watched")
    router.callback_query.outer_middleware(Seen())
    await router.propagate_event("callback_query", press(ACB(n=1).pack()))
    assert seen == ["middleware"]
    filtered = FeatureRouter(name="filtered")
    filtered.callback_query.filter(lambda query: seen.append("root filter") or False)
    filtered.callback_query.register(lambda query: "a", ACB.filter())
    assert await filtered.propagate_event("callback_query", press(BCB(n=1).pack())) is UNHANDLED
    assert seen == ["middleware", "root filter"]


def test_every_feature_router_of_the_bot_passes_by_what_it_cannot_take() -> None:
    """A feature added with aiogram's plain Router would be tried by every press before it."""
    (root,) = routers()
    assert root.sub_routers
    assert all(isinstance(feature, FeatureRouter) for feature in root.sub_routers)
