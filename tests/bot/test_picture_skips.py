"""Pictures skipped under load (the renderer busy, by design) are counted and logged as one summary line
per while, not one line each, so an operator sees how many (issue 19, item 9; `/stats` shows the counts:
tests/bot/e2e/test_admin.py)."""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import AsyncIterator

import pytest

from bot.pictures import Pictures
from core.language.answer import Answer, build_answer
from core.parse import understand
from core.sizing.estimate import estimate

SUMMARY = "answer pictures skipped within"
WAIT_S = 30.0  # the summary is due after 0.05 s; generous for a loaded machine


def answer_of(question: str) -> Answer:
    understood = understand(question)
    return build_answer(estimate(understood.request), "en", understood.notes)


@pytest.fixture
async def busy() -> AsyncIterator[Pictures]:
    """A renderer that is always busy (no render at a time), its summary due 0.05 s after a skip."""
    pictures = Pictures(max_pending=0, skip_summary_s=0.05)
    yield pictures
    await pictures.close()


def summaries(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [r.getMessage() for r in caplog.records if SUMMARY in r.getMessage()]


async def logged(caplog: pytest.LogCaptureFixture, count: int) -> list[str]:
    """The summary lines, once there are `count` of them."""
    deadline = time.monotonic() + WAIT_S
    while len(summaries(caplog)) < count:
        assert time.monotonic() < deadline, summaries(caplog)
        await asyncio.sleep(0.01)
    return summaries(caplog)


async def test_a_burst_of_skips_is_one_summary_line(busy: Pictures, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO, logger="bot.pictures")
    for question in ("llama 3.1 8b", "llama 3.1 70b int4", "qwen 2.5 7b"):
        assert await busy.picture(answer_of(question)) is None
    assert busy.skipped == 3 and busy.rendered == 0
    (line,) = await logged(caplog, 1)
    assert line.startswith("3 answer pictures skipped within") and "since start: 0 sent, 3 skipped" in line
    # a later skip: a line of its own, with the total
    assert await busy.picture(answer_of("llama 3.1 8b")) is None
    assert (await logged(caplog, 2))[1].startswith("1 answer pictures skipped")
    assert "3 skipped" not in summaries(caplog)[1] and "4 skipped" in summaries(caplog)[1]
    assert not [r for r in caplog.records if "skipped" in r.getMessage() and SUMMARY not in r.getMessage()]


async def test_skips_not_logged_yet_are_logged_at_close(caplog: pytest.LogCaptureFixture) -> None:
    pictures = Pictures(max_pending=0, skip_summary_s=3600)
    assert await pictures.picture(answer_of("llama 3.1 8b")) is None
    assert await pictures.picture(answer_of("llama 3.1 70b")) is None
    assert summaries(caplog) == []
    await pictures.close()
    (line,) = summaries(caplog)
    assert line.startswith("2 answer pictures skipped")
    await pictures.close()  # nothing new: no second line
    assert len(summaries(caplog)) == 1
