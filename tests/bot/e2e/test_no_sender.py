"""Updates without a sender (`from`): Telegram leaves it out of messages sent on behalf of a chat (a
channel, an anonymous admin) and a client or a forged webhook call can leave it out anywhere. None of
them may crash a handler or a middleware (issue 19, item 9)."""

from __future__ import annotations

import pytest

from tests.bot.e2e.conftest import Harness, assert_no_failed_calls
from tests.bot.e2e.test_edges import finished, no_errors

CHAT_ID = 5050
TEXTS = ["/start", "/start habr", "/new", "/lang", "/about", "/stats", "/export", "/offers", "/cancel",
         "llama 3.1 8b int4", "что-то непонятное", "/quote"]  # fmt: skip


async def test_a_private_message_without_a_sender_crashes_nothing(
    harness: Harness, caplog: pytest.LogCaptureFixture
) -> None:
    harness.sandbox.user(id=CHAT_ID)  # the chat exists (a throttle notice may go to it)
    ids = []
    for number, body in enumerate(TEXTS, start=1):
        message = {"message_id": number, "date": 0, "chat": {"id": CHAT_ID, "type": "private"}, "text": body}
        ids.append(await harness.sandbox.deliver_raw({"message": message}))
    await finished(harness, *ids)
    assert_no_failed_calls(harness.sandbox)
    no_errors(caplog)
    assert await harness.dialogs(CHAT_ID) == []  # no dialog for nobody
    (reply,) = await harness.user().send("llama 3.1 8b int4")  # and the bot goes on answering
    assert "8B" in (reply.text or "")
