"""The terminal chat, driven by scripted input against the tiny bot in polling mode."""

from __future__ import annotations

import asyncio
import io
import time
from collections.abc import Callable

from aiogram import Bot

from tgsandbox import Sandbox
from tgsandbox.terminal import run_terminal_chat


def scripted(*lines: str) -> Callable[[str], str]:
    """An ``input()`` that types ``lines`` and then hits end of input."""
    remaining = list(lines)

    def type_line(prompt: str) -> str:
        if not remaining:
            raise EOFError
        return remaining.pop(0)

    return type_line


async def test_terminal_chat_renders_messages_and_presses_numbered_buttons(
    sandbox: Sandbox, polling_bot: Bot
) -> None:
    output = io.StringIO()
    user = sandbox.user(id=21, first_name="Newcomer")
    await run_terminal_chat(sandbox, user, scripted("/start", "3", "\\1", "2", "/quit", "never sent"), output)

    shown = output.getvalue()
    assert "Chatting with @sandbox_bot as Newcomer" in shown
    assert (
        "bot:\n*Hello*, do you like GPUs?\n  [1] Yes   [2] No\n  [3] Docs -> https://example.com/docs"
    ) in shown
    assert "(opens https://example.com/docs)" in shown  # a URL button is shown, not clicked
    assert "(alert: Noted: no)" in shown
    assert "bot (edited):\nYou said _no_" in shown
    assert "bot:\necho: 1" in shown  # "\1" is sent as text, not a button press
    assert shown.rstrip().endswith("bye")
    assert [m.text for m in sandbox.chat(21) if not m.from_bot] == ["/start", "1"]


async def test_terminal_chat_ends_on_end_of_input_and_reports_silence(
    sandbox: Sandbox, polling_bot: Bot
) -> None:
    output = io.StringIO()
    sandbox.reply_timeout = 0.3
    await run_terminal_chat(sandbox, sandbox.user(id=22), scripted("/silent"), output)
    assert "(no reply from the bot)" in output.getvalue()
    assert output.getvalue().rstrip().endswith("bye")


async def test_terminal_chat_shows_messages_that_arrive_while_typing(sandbox: Sandbox, bot: Bot) -> None:
    output = io.StringIO()
    user = sandbox.user(id=23)
    typed = asyncio.Event()

    def slow_typist(prompt: str) -> str:
        if typed.is_set():
            raise EOFError
        time.sleep(0.6)  # meanwhile the bot sends a reminder on its own
        typed.set()
        return "/quit"

    chat = asyncio.create_task(run_terminal_chat(sandbox, user, slow_typist, output))
    await asyncio.sleep(0.1)
    await bot.send_message(user.id, "<i>reminder</i>")
    await asyncio.wait_for(chat, 3)
    assert "bot:\n_reminder_" in output.getvalue()
