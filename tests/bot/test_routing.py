"""Feature routers pass an event by when none of their handlers can take it (bot.routing), and take
every event aiogram's own routing would give them: button presses by their callback data's prefix,
messages by a command's prefix, either by the user's state."""

from __future__ import annotations

from typing import Any

from aiogram import BaseMiddleware, Bot, F, Router
from aiogram.dispatcher.event.bases import UNHANDLED
from aiogram.filters import Command, CommandStart, StateFilter
from aiogram.filters.callback_data import CallbackData, CallbackQueryFilter
from aiogram.fsm.state import State, StatesGroup, default_state
from aiogram.types import CallbackQuery, Message, Update

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


class Form(StatesGroup):
    name = State()
    phone = State()


class Other(StatesGroup):
    step = State()


class CountingCommand(Command):
    """aiogram's command filter, counting the messages it was asked about."""

    asked = 0

    async def __call__(self, message: Message, bot: Bot) -> Any:
        CountingCommand.asked += 1
        return await super().__call__(message, bot)


BOT = Bot("42:TEST")


def text(value: str, *, caption: bool = False) -> Message:
    message = message_update(1, "x" if caption else value).message
    assert message is not None
    return message.model_copy(update={"text": None, "caption": value}) if caption else message


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


async def test_a_router_of_commands_passes_by_text_that_is_no_command() -> None:
    router = FeatureRouter(name="commands")
    router.message.register(lambda message: "start", CommandStart())
    router.message.register(lambda message: "help", CountingCommand("help"))
    router.message.register(lambda message: "bang", Command("go", prefix="!"))
    CountingCommand.asked = 0
    assert await router.propagate_event("message", text("how much for llama 70b"), bot=BOT) is UNHANDLED
    assert CountingCommand.asked == 0
    assert await router.propagate_event("message", text("/help"), bot=BOT) == "help"
    assert await router.propagate_event("message", text("  /help me"), bot=BOT) == "help"  # as aiogram splits
    assert await router.propagate_event("message", text("/help", caption=True), bot=BOT) == "help"
    assert await router.propagate_event("message", text("!go"), bot=BOT) == "bang"  # tried on the way
    assert CountingCommand.asked == 4
    # aiogram's router tries the command for any text
    plain = Router(name="plain")
    plain.message.register(lambda message: "help", CountingCommand("help"))
    assert await plain.propagate_event("message", text("how much"), bot=BOT) is UNHANDLED
    assert CountingCommand.asked == 5


async def test_a_router_of_states_passes_by_a_user_in_none_of_them() -> None:
    router = FeatureRouter(name="form")
    router.message.register(lambda message: "name", StateFilter(Form.name))
    router.message.register(lambda message: "other", StateFilter(Other))  # a group: any of its states
    router.callback_query.register(lambda query: "idle", StateFilter(None, "Custom:raw"))
    message = text("Ann")
    assert await router.propagate_event("message", message, raw_state=Form.phone.state) is UNHANDLED
    assert await router.propagate_event("message", message, raw_state=None) is UNHANDLED
    assert await router.propagate_event("message", message, raw_state=Form.name.state) == "name"
    assert await router.propagate_event("message", message, raw_state=Other.step.state) == "other"
    tap = press(ACB(n=1).pack())
    assert await router.propagate_event("callback_query", tap, raw_state=None) == "idle"
    assert await router.propagate_event("callback_query", tap, raw_state="Custom:raw") == "idle"
    assert await router.propagate_event("callback_query", tap, raw_state=Form.name.state) is UNHANDLED


async def test_any_state_and_the_default_state_are_read_as_aiogram_reads_them() -> None:
    anywhere = FeatureRouter(name="anywhere")
    anywhere.message.register(lambda message: "any", StateFilter("*"))
    assert await anywhere.propagate_event("message", text("hi"), raw_state=Form.name.state) == "any"
    idle = FeatureRouter(name="idle")
    idle.message.register(lambda message: "idle", StateFilter(default_state))
    assert await idle.propagate_event("message", text("hi"), raw_state=None) == "idle"
    assert await idle.propagate_event("message", text("hi"), raw_state=Form.name.state) is UNHANDLED


async def test_a_command_or_state_first_then_other_filters_still_decide() -> None:
    router = FeatureRouter(name="mixed")
    router.message.register(lambda message: "contact", StateFilter(Form.phone), F.contact)
    router.message.register(lambda message: "prices", Command("prices"))
    router.message.register(lambda message: "any text", F.text)  # filters otherwise: always visited
    message = text("hello")
    assert await router.propagate_event("message", message, raw_state=Form.phone.state, bot=BOT) == "any text"
    assert await router.propagate_event("message", text("/prices"), raw_state=None, bot=BOT) == "prices"
