"""Start-up cost: the command menus are set only when they changed since they were last set."""

from __future__ import annotations

from bot.app import commands_marker
from tests.bot.e2e.conftest import Harness

ADMIN_ID = 900


def set_my_commands_calls(h: Harness) -> int:
    return len([r for r in h.sandbox.requests if r.method == "setMyCommands"])


async def started(h: Harness) -> None:
    await h.sandbox.wait_for(lambda: h.sandbox.polls > 0, "the first getUpdates")


async def test_set_my_commands_only_when_the_commands_changed(harness: Harness) -> None:
    h = harness
    await started(h)
    first = set_my_commands_calls(h)
    assert first == 3  # ru, en and the default language's menu
    marker = commands_marker(h.db_url)
    assert marker is not None and marker.is_file()

    polls = h.sandbox.polls
    await h.restart()
    await h.sandbox.wait_for(lambda: h.sandbox.polls > polls, "getUpdates after the restart")
    assert set_my_commands_calls(h) == first  # unchanged: nothing sent
    assert h.sandbox.commands(None, "en")[0]["command"] == "start"  # the menu set before stays

    # Another default language changes the menu of users of other languages: set again.
    h.settings = h.settings.model_copy(update={"default_language": "en"})
    await h.restart()
    await h.sandbox.wait_for(lambda: set_my_commands_calls(h) > first, "setMyCommands after the change")
    assert set_my_commands_calls(h) == 2 * first

    # An admin's own menu is part of what was set: a new admin gets it at the next start.
    h.settings = h.settings.model_copy(update={"admin_ids": frozenset({ADMIN_ID})})
    h.sandbox.user(id=ADMIN_ID)  # has started the bot: their chat exists
    await h.restart()
    chat = {"type": "chat", "chat_id": ADMIN_ID}
    await h.sandbox.wait_for(lambda: bool(h.sandbox.commands(chat, "en")), "the admin's command menu")
    after_admin = set_my_commands_calls(h)
    polls = h.sandbox.polls
    await h.restart()
    await h.sandbox.wait_for(lambda: h.sandbox.polls > polls, "getUpdates after the restart")
    assert set_my_commands_calls(h) == after_admin

