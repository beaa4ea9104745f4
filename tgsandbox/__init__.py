"""A local fake Telegram Bot API server with a test driver and a terminal chat.

It fakes Telegram for any aiogram bot and knows nothing of the bot it talks to. See README.md here::

    async with Sandbox() as sandbox:
        bot = sandbox.make_bot()  # run your Dispatcher with it (polling or webhook)
        user = sandbox.user(id=42, language_code="ru")
        await user.send("/start")
        await user.click("Yes")
        assert user.last_message().text == "..."
"""

from .driver import CallbackAnswer, InlineAnswer, SandboxUser
from .errors import ApiError, SandboxTimeout
from .keyboards import Button
from .sandbox import Sandbox
from .state import ChatMessage, RecordedRequest

__all__ = [
    "ApiError",
    "Button",
    "CallbackAnswer",
    "ChatMessage",
    "InlineAnswer",
    "RecordedRequest",
    "Sandbox",
    "SandboxTimeout",
    "SandboxUser",
]
