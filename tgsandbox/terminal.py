"""A terminal chat with any bot running against a sandbox: for people without a bot token.

Bot messages are printed readably, inline buttons are numbered; typing a number presses that button,
anything else is sent as a message (a leading backslash sends the rest as is, e.g. ``\\3``). Given a
``pictures_dir``, each photo the bot sends is saved there as a file, and its path is printed instead.
"""

from __future__ import annotations

import asyncio
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import TextIO

from .driver import SandboxUser
from .errors import SandboxTimeout
from .keyboards import Button
from .render import render_message
from .sandbox import Sandbox
from .state import ChatMessage

QUIT_COMMANDS = frozenset({"/quit", "/exit"})
PROMPT = "you> "


class _Chat:
    def __init__(
        self, sandbox: Sandbox, user: SandboxUser, output: TextIO, pictures_dir: Path | None = None
    ) -> None:
        self.sandbox = sandbox
        self.user = user
        self.output = output
        self.pictures_dir = pictures_dir
        self.saved: dict[str, str] = {}  # photo file_id -> the file it was saved to
        self.shown: dict[int, int] = {}  # message_id -> edit_count already printed
        self.buttons: dict[int, tuple[ChatMessage, Button]] = {}
        self.seen_requests = len(sandbox.requests)

    def say(self, text: str) -> None:
        print(text, file=self.output, flush=True)

    def show(self, messages: list[ChatMessage]) -> None:
        for message in messages:
            edited = message.message_id in self.shown
            if self.shown.get(message.message_id) == message.edit_count:
                continue
            self.shown[message.message_id] = message.edit_count
            if message.buttons:
                # Numbers always refer to the buttons printed last.
                flat = [button for row in message.buttons for button in row]
                self.buttons = {n: (message, b) for n, b in enumerate(flat, start=1)}
            elif any(shown.message_id == message.message_id for shown, _ in self.buttons.values()):
                self.buttons = {}  # an edit took that keyboard away
            self.say(render_message(message, edited=edited, photo_path=self.save_photo(message)))
        self.show_failures()

    def save_photo(self, message: ChatMessage) -> str | None:
        """The file the message's photo is saved to (once per photo); None without a photo, a
        directory, or the photo's bytes (sent by URL)."""
        file_id = message.photo_file_id
        if file_id is None or self.pictures_dir is None:
            return None
        if file_id not in self.saved:
            content = self.sandbox.upload(file_id)
            if content is None:
                return None
            self.pictures_dir.mkdir(parents=True, exist_ok=True)
            name = f"{time.strftime('%Y%m%d-%H%M%S')}-{message.chat_id}-{message.message_id}.png"
            path = self.pictures_dir / name
            path.write_bytes(content)
            self.saved[file_id] = str(path)
        return self.saved[file_id]

    def show_failures(self) -> None:
        requests = self.sandbox.requests
        for request in requests[self.seen_requests :]:
            if request.error:
                self.say(f"(!) the bot's {request.method} failed: {request.error}")
        self.seen_requests = len(requests)

    async def watch(self) -> None:
        """While the person types, show what the bot sends late (slow replies, reminders)."""
        while True:
            await asyncio.sleep(0.3)
            if late := self.user.unread():
                self.say("")
                self.show(late)
                print(PROMPT, end="", file=self.output, flush=True)

    async def act(self, line: str) -> None:
        stripped = line.strip()
        if stripped.isdigit() and int(stripped) in self.buttons:
            await self.press(*self.buttons[int(stripped)])
            return
        text = line[1:] if line.startswith("\\") else line
        if not text.strip():
            return
        try:
            self.show(await self.user.send(text))
        except SandboxTimeout:
            self.say("(no reply from the bot)")
            self.show_failures()

    async def press(self, message: ChatMessage, button: Button) -> None:
        if button.url:
            self.say(f"(opens {button.url})")
            return
        try:
            answer = await self.user.click(
                button.text,
                callback_data=button.callback_data,
                message=message.message_id if button.inline else None,
            )
        except SandboxTimeout:
            self.say("(the bot did not answer the button press)")
            self.show_failures()
            return
        except AssertionError as error:  # the button is gone (message deleted or edited meanwhile)
            self.say(f"({error})")
            return
        if answer.text:
            self.say(f"({'alert' if answer.show_alert else 'notification'}: {answer.text})")
        self.show(answer.messages)


async def _read_line(input_fn: Callable[[str], str]) -> str:
    """Read in a daemon thread: the bot keeps running on the event loop while the person types,
    and a Ctrl+C does not leave the interpreter waiting for a pending ``input()`` at exit."""
    loop = asyncio.get_running_loop()
    line: asyncio.Future[str] = loop.create_future()

    def read() -> None:
        try:
            result = input_fn(PROMPT)
        except BaseException as error:  # EOFError, KeyboardInterrupt: handed to the event loop
            loop.call_soon_threadsafe(_settle, line, None, error)
        else:
            loop.call_soon_threadsafe(_settle, line, result, None)

    threading.Thread(target=read, name="terminal-input", daemon=True).start()
    return await line


def _settle(future: asyncio.Future[str], result: str | None, error: BaseException | None) -> None:
    if future.done():
        return
    if error is not None:
        future.set_exception(error)
    else:
        future.set_result(result or "")


async def run_terminal_chat(
    sandbox: Sandbox,
    user: SandboxUser,
    input_fn: Callable[[str], str] = input,
    output: TextIO = sys.stdout,
    pictures_dir: Path | None = None,
) -> None:
    """Chat with the bot in the terminal until ``/quit`` or end of input; photos are saved to files
    under ``pictures_dir`` when given."""
    chat = _Chat(sandbox, user, output, pictures_dir)
    bot = sandbox.bot_user
    chat.say(
        f"Chatting with @{bot.username} as {user.user.first_name} (id {user.id}). "
        "Type a message; a number presses that button; /quit to leave."
    )
    while True:
        chat.show(user.unread())
        watcher = asyncio.create_task(chat.watch())
        try:
            line = await _read_line(input_fn)
        except (EOFError, KeyboardInterrupt):
            break
        finally:
            watcher.cancel()
        if line.strip() in QUIT_COMMANDS:
            break
        await chat.act(line)
    chat.say("bye")
