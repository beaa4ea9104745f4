"""Routers by feature, in the order they are tried, under one root router whose gate comes first;
each feature passes by at once what none of its handlers can take (bot.routing)."""

from aiogram import Router

from bot.handlers import (
    admin,
    claims,
    commands,
    errors,
    fallback,
    gate,
    groups,
    inline,
    launch,
    leads,
    pasted_logs,
    prices,
    quick,
    rentbuy,
    wizard,
)
from bot.webapp import handler as webapp


def routers() -> list[Router]:
    """Fresh routers for one Dispatcher: one root router, its gate (`bot.handlers.gate`: what is not
    for the bot dropped, the rest throttled per sender) before every message and button press; under
    it groups first (nothing from a group reaches the dialog), the admin commands (only for ADMIN_IDS:
    anyone else's go on as unknown commands), then commands (/cancel works in any
    state), the wizard's steps, free text (quick answers), whatever is left; errors of all of them.
    Inline queries have a router of their own."""
    root = Router(name="bot")
    door = gate.Gate()
    root.message.outer_middleware(door)
    root.callback_query.outer_middleware(door)
    for observer in (root.message, root.callback_query, root.inline_query):
        observer.outer_middleware(admin.LiveCatalog())  # the offers in force after /offers reload
    root.include_routers(
        errors.make_router(),
        claims.make_sales_router(),  # "Беру" on the sales chat's cards, before groups' stale-button answer
        groups.make_router(),
        webapp.make_router(),  # the Mini App's "quote" and "to the chat", before the form's states
        admin.make_router(),
        pasted_logs.make_router(),  # a pasted OOM / nvidia-smi / vLLM / llama.cpp log, before any question
        rentbuy.make_router(),  # "rent or buy?", before the price questions and the quote form
        prices.make_router(),  # /prices and price questions, before the form's "сколько стоит"
        leads.make_router(),  # the quote form's states, /contact and "talk to a manager" first
        commands.make_router(),
        wizard.make_router(),
        launch.make_router(),  # "⌨️ Launch command" under a result
        quick.make_router(),
        fallback.make_router(),
        inline.make_router(),
    )
    return [root]
