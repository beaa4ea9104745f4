"""A disk that refuses writes is an outage, not an answer: on the embedded SQLite, the questions
asked while the database cannot be written stay pending; each user is told once "one moment,
retrying" and gets the real answer once the disk takes writes again, none twice.

The disk is made to refuse writes the way a full one does for this process: the file-size limit
(RLIMIT_FSIZE) is lowered to one byte, so every write that would extend or rewrite past the first
byte of a file fails (SQLite's WAL and database writes then fail with SQLITE_FULL or SQLITE_IOERR,
as on a full disk), and SIGXFSZ is ignored so the write fails instead of killing the process.
The limit is the process's own: nothing else on the machine notices.
"""

from __future__ import annotations

import logging
import resource
import signal
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from aiogram.utils.backoff import BackoffConfig

from tests.bot.e2e.conftest import result_mark, running_bot
from tests.bot.e2e.test_outages import (
    WAVE,
    assert_answered_once,
    burst_through_an_outage,
    failures_logged,
    handled,
    notices,
    outage_lines,
    said_to,
)


class RefusingDisk:
    """`fill` makes this process's file writes fail as on a full disk; `free` lets them through again."""

    def __init__(self) -> None:
        self.limits = resource.getrlimit(resource.RLIMIT_FSIZE)
        self.handler = signal.getsignal(signal.SIGXFSZ)

    async def fill(self) -> None:
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (1, self.limits[1]))

    async def free(self) -> None:
        resource.setrlimit(resource.RLIMIT_FSIZE, self.limits)
        signal.signal(signal.SIGXFSZ, self.handler)


@contextmanager
def refusing_disk() -> Iterator[RefusingDisk]:
    disk = RefusingDisk()
    try:
        yield disk
    finally:
        resource.setrlimit(resource.RLIMIT_FSIZE, disk.limits)
        signal.signal(signal.SIGXFSZ, disk.handler)


async def test_a_full_disk_mid_burst_delays_the_answers_and_loses_none(
    tmp_path: Path, template_db: Path, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO)
    with refusing_disk() as disk:
        async with running_bot(tmp_path, template_db) as h:
            first, second = await burst_through_an_outage(h, disk.fill, disk.free)
            await h.sandbox.wait_for(
                lambda: h.app is not None and not h.app.inbox_dp.handling, "nothing left in hand"
            )
            assert_answered_once(h.sandbox, first + second)
        assert await handled(h.db_url) == (2 * WAVE, 0)
    lines = outage_lines(caplog)
    assert len(lines) == 2 and "failing" in lines[0] and "back" in lines[1], lines
    assert failures_logged(caplog) == []


async def test_a_question_waiting_to_be_retried_is_not_overtaken_by_the_users_next(
    tmp_path: Path, template_db: Path
) -> None:
    with refusing_disk() as disk:
        async with running_bot(tmp_path, template_db) as h:
            assert h.app is not None
            # Long enough for the second question to arrive while the first waits for its retry.
            h.app.inbox_dp.retry_backoff = BackoffConfig(min_delay=1.0, max_delay=2.0, factor=1.5, jitter=0)
            user = h.user()

            def results() -> list[str]:
                return [said for said in said_to(h.sandbox, user.id) if result_mark() in said]

            await user.post("mistral 7b")  # the bot is up and knows the user
            await h.sandbox.wait_for(lambda: len(results()) == 1, "the first question answered")
            await disk.fill()
            await user.post("qwen3 8b int4 8k")
            await h.sandbox.wait_for(lambda: notices(h.sandbox, [user.id]) == 1, "told to wait")
            await disk.free()
            await user.post("llama 3.1 70b int4")
            await h.sandbox.wait_for(lambda: len(results()) == 3, "both questions answered")
            _, first, second = results()
            assert "Qwen3" in first and "70B" in second, (first, second)
