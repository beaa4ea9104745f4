"""Routers by feature, in the order they are tried."""

from aiogram import Router

from bot.handlers import commands, errors, fallback, inline, quick, wizard


def routers() -> list[Router]:
    """Fresh routers for one Dispatcher: commands first (/cancel works in any state), then the
    wizard's steps, then free text (quick answers), then whatever is left; errors of all of them.
    Inline queries have a router of their own."""
    return [
        errors.make_router(),
        commands.make_router(),
        wizard.make_router(),
        quick.make_router(),
        fallback.make_router(),
        inline.make_router(),
    ]
