"""Routing cost: a button press and a typed question through the bot's routers (bot.handlers.routers),
its feature routers passing by what they cannot take (bot.routing) against aiogram's plain routing,
alternated A B A B in one process; medians and ranges of µs per event and of the ratio.

    python bench/routing.py [--rounds 7] [--events 2000]

Routing only: the handler an event reaches is replaced by one that returns at once, the root's
outer middlewares (the gate, the catalogue) are left out, and the handler data has the keys a
button press's handler is given in production (28), which every call through the routers copies.
A typed question's figure includes its filters' own work (a pasted log's, a price question's
predicates), which no routing change saves.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import time
from typing import Any

from aiogram import Router
from aiogram.types import CallbackQuery, Message, TelegramObject, Update

from bot.callbacks import StepCB
from bot.config import Settings
from bot.dialog_state import DialogHolder, DialogState
from bot.dispatcher import check_filters_in_place
from bot.handlers import routers
from bot.routing import FeatureRouter
from core.catalogue.catalog import default_catalog

REACHED = ("on_step_button", "on_free_text")
"""The handlers the two events reach, replaced by one that returns at once."""

OTHER_KEYS = (
    "bot", "bots", "callback_ticket", "ctx", "db_user", "deep_link_source", "dispatcher",
    "event_chat", "event_context", "event_from_user", "event_update", "fsm_storage", "i18n",
    "i18n_middleware", "lead_outbox", "lead_reminders", "offer_availability", "update_receipt", "work",
)  # fmt: skip
"""The rest of a button press handler's data in production (besides catalog, settings, dialog,
state and raw_state, given as they are)."""


def tree() -> Router:
    top = Router(name="dispatcher")
    (root,) = routers()
    for observer in root.observers.values():
        observer.outer_middleware._middlewares.clear()
    top.include_router(root)

    async def reached(*args: Any, **kwargs: Any) -> bool:
        return True

    for router in top.chain_tail:
        for observer in router.observers.values():
            for handler in observer.handlers:
                if getattr(handler.callback, "__name__", "") in REACHED:
                    handler.callback, handler.awaitable, handler.varkw = reached, True, True
    check_filters_in_place(top)
    return top


def events() -> dict[str, tuple[str, TelegramObject]]:
    user = {"id": 5, "is_bot": False, "first_name": "Ann"}
    chat = {"id": 5, "type": "private"}
    message = {"message_id": 3, "date": 0, "chat": chat, "from": user}
    press = Update.model_validate(
        {
            "update_id": 1,
            "callback_query": {
                "id": "1", "from": user, "chat_instance": "c",
                "data": StepCB(step="task", value="inference").pack(), "message": {**message, "text": "?"},
            },
        }
    )  # fmt: skip
    question = Update.model_validate({"update_id": 2, "message": {**message, "text": "llama 3 8b int4"}})
    assert isinstance(press.callback_query, CallbackQuery) and isinstance(question.message, Message)
    return {"press": ("callback_query", press.callback_query), "question": ("message", question.message)}


async def per_event(
    top: Router, update_type: str, event: TelegramObject, data: dict[str, Any], n: int
) -> float:
    assert await top.propagate_event(update_type, event, **data) is True  # the handler was reached
    started = time.perf_counter()
    for _ in range(n):
        await top.propagate_event(update_type, event, **data)
    return (time.perf_counter() - started) / n * 1e6


def spread(values: list[float], form: str) -> str:
    return f"({min(values):{form}}-{max(values):{form}})"


async def main(rounds: int, n: int) -> None:
    top = tree()
    data: dict[str, Any] = dict.fromkeys(OTHER_KEYS)
    settings = Settings(_env_file=None, bot_token="0:bench", database_url="sqlite+aiosqlite://")  # type: ignore[call-arg]
    data.update(catalog=default_catalog(), settings=settings, dialog=DialogHolder(DialogState()))
    data.update(state=None, raw_state=None)
    feature = FeatureRouter.propagate_event
    for name, (update_type, event) in events().items():
        figures: dict[str, list[float]] = {"plain": [], "feature": []}
        for _ in range(rounds):
            for variant in ("plain", "feature"):
                FeatureRouter.propagate_event = Router.propagate_event if variant == "plain" else feature  # type: ignore[method-assign]
                figures[variant].append(await per_event(top, update_type, event, data, n))
        FeatureRouter.propagate_event = feature  # type: ignore[method-assign]
        ratios = [f / p for f, p in zip(figures["feature"], figures["plain"], strict=True)]
        plain, mine = (statistics.median(figures[v]) for v in ("plain", "feature"))
        print(
            f"{name}: aiogram's routing {plain:.0f} µs {spread(figures['plain'], '.0f')}, "
            f"feature routers {mine:.0f} µs {spread(figures['feature'], '.0f')}; "
            f"ratio {statistics.median(ratios):.2f} {spread(ratios, '.2f')}"
        )


if __name__ == "__main__":
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--events", type=int, default=2000)
    args = parser.parse_args()
    asyncio.run(main(args.rounds, args.events))
