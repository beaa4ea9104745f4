"""An infrastructure failure is not an answer: Redis or the database going away in the middle of a
burst leaves the questions pending; each user is told once "one moment, retrying" and gets the real
answer once it is back, none twice; the log says it once per outage.

The Redis server is one of the test's own (another port; the shared 6379 one is never stopped), the
database is reached through a TCP proxy the test can cut. Waits are for events (the sandbox saw the
calls, the rows are handled), never for a quiet period.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import socket
from collections.abc import Awaitable, Callable
from pathlib import Path

import pytest
import redis.asyncio as redis
from aiogram.utils.backoff import BackoffConfig
from sqlalchemy import func, select
from sqlalchemy.engine import make_url

from bot.db.engine import create_engine, create_sessionmaker
from bot.db.models import ProcessedUpdate
from tests.bot.e2e.conftest import Harness, result_mark, running_bot, text
from tgsandbox import Sandbox

FAST_RETRIES = BackoffConfig(min_delay=0.2, max_delay=1.0, factor=1.5, jitter=0.1)
OUTAGE_TIMEOUT_S = 60.0
WAVE = 5


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class RedisServer:
    """A redis-server of the test's own, without persistence: stopped, it comes back empty."""

    def __init__(self, directory: Path) -> None:
        self.port = free_port()
        self.directory = directory
        self.proc: asyncio.subprocess.Process | None = None

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    async def start(self) -> None:
        self.directory.mkdir(exist_ok=True)
        self.proc = await asyncio.create_subprocess_exec(
            "redis-server", "--port", str(self.port), "--bind", "127.0.0.1", "--save", "",
            "--appendonly", "no", "--dir", str(self.directory),
            stdout=asyncio.subprocess.DEVNULL, stderr=asyncio.subprocess.DEVNULL,
        )  # fmt: skip
        client = redis.Redis.from_url(self.url)
        try:
            for _ in range(1000):  # until it answers (a few ms)
                with contextlib.suppress(redis.ConnectionError):
                    if await client.ping():
                        return
                await asyncio.sleep(0.01)
            raise AssertionError("redis-server did not start")
        finally:
            await client.aclose()

    async def stop(self) -> None:
        if self.proc is not None and self.proc.returncode is None:
            self.proc.kill()
            await self.proc.wait()


class TcpProxy:
    """127.0.0.1:port → target; `cut` closes every connection and refuses new ones, `mend` serves again."""

    def __init__(self, target_host: str, target_port: int) -> None:
        self.target = (target_host, target_port)
        self.port = free_port()
        self.server: asyncio.Server | None = None
        self.links: set[asyncio.StreamWriter] = set()

    async def mend(self) -> None:
        self.server = await asyncio.start_server(self._link, "127.0.0.1", self.port, reuse_address=True)

    async def cut(self) -> None:
        assert self.server is not None
        self.server.close()
        for writer in list(self.links):
            writer.transport.abort()
        self.links.clear()
        await self.server.wait_closed()

    async def _link(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            up_reader, up_writer = await asyncio.open_connection(*self.target)
        except OSError:
            writer.transport.abort()
            return
        self.links.update((writer, up_writer))

        async def pipe(src: asyncio.StreamReader, dst: asyncio.StreamWriter) -> None:
            with contextlib.suppress(OSError, asyncio.CancelledError):
                while data := await src.read(65536):
                    dst.write(data)
                    await dst.drain()
            dst.transport.abort()

        await asyncio.gather(pipe(reader, up_writer), pipe(up_reader, writer))
        self.links.difference_update((writer, up_writer))


async def handled(db_url: str) -> tuple[int, int]:
    """(handled, pending) updates."""
    engine = create_engine(db_url)
    try:
        async with create_sessionmaker(engine)() as session:
            total = await session.scalar(select(func.count()).select_from(ProcessedUpdate))
            pending = await session.scalar(
                select(func.count()).select_from(ProcessedUpdate).where(ProcessedUpdate.payload.is_not(None))
            )
            return int(total or 0) - int(pending or 0), int(pending or 0)
    finally:
        await engine.dispose()


def said_to(sandbox: Sandbox, chat_id: int) -> list[str]:
    return [r.params["text"] for r in sandbox.sent() if r.chat_id == chat_id]


def answered(sandbox: Sandbox, chat_id: int) -> bool:
    return any(result_mark() in said for said in said_to(sandbox, chat_id))


def notices(sandbox: Sandbox, chats: list[int]) -> int:
    return sum(said_to(sandbox, chat_id).count(text("retry-notice")) for chat_id in chats)


def assert_answered_once(sandbox: Sandbox, chats: list[int]) -> None:
    for chat_id in chats:
        said = said_to(sandbox, chat_id)
        results = [s for s in said if result_mark() in s]
        assert len(results) == 1, (chat_id, said)
        assert said.count(text("retry-notice")) <= 1, (chat_id, said)
        assert text("error-generic") not in said, (chat_id, said)


def outage_lines(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [r.getMessage() for r in caplog.records if r.name == "bot.db.outage"]


def replayed(caplog: pytest.LogCaptureFixture) -> int:
    return sum(1 for r in caplog.records if "made before: not made again" in r.getMessage())


def failures_logged(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [r.getMessage() for r in caplog.records if r.levelno >= logging.ERROR]


async def burst_through_an_outage(
    h: Harness, stop: Callable[[], Awaitable[None]], start: Callable[[], Awaitable[None]]
) -> tuple[list[int], list[int]]:
    """Wave one is in hand (its answers held) when the outage starts; its answers then go out and
    what follows them fails. Wave two arrives during the outage. Then it ends. Their chat ids."""
    assert h.app is not None
    h.app.inbox_dp.retry_backoff = FAST_RETRIES
    sandbox = h.sandbox
    gate = sandbox.hold(["sendMessage"])
    first = [h.user() for _ in range(WAVE)]
    for user in first:
        await user.post("qwen3 8b int4 8k")
    await sandbox.wait_for(lambda: gate.held == WAVE, "each first question's answer held")
    await stop()
    gate.release()
    second = [h.user() for _ in range(WAVE)]
    for user in second:
        await user.post("qwen3 8b int4 4k")
    chats_two = [user.id for user in second]
    await sandbox.wait_for(
        lambda: notices(sandbox, chats_two) == WAVE, "the second wave told to wait", OUTAGE_TIMEOUT_S
    )
    assert not any(answered(sandbox, chat) for chat in chats_two)
    await start()
    chats = [user.id for user in first] + chats_two
    await sandbox.wait_for(
        lambda: all(answered(sandbox, chat) for chat in chats), "every question answered", OUTAGE_TIMEOUT_S
    )
    return [user.id for user in first], chats_two


async def test_a_redis_outage_mid_burst_delays_the_answers_and_loses_none(
    tmp_path: Path, template_db: Path, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO)
    server = RedisServer(tmp_path / "redis")
    await server.start()
    try:
        async with running_bot(tmp_path, template_db, redis_url=server.url, redis_key_prefix="outage") as h:
            first, second = await burst_through_an_outage(h, server.stop, server.start)
            total = 2 * WAVE
            await h.sandbox.wait_for(
                lambda: h.app is not None and not h.app.inbox_dp.handling, "nothing left in hand"
            )
            assert await handled(h.db_url) == (total, 0)
            assert_answered_once(h.sandbox, first + second)
    finally:
        await server.stop()
    lines = outage_lines(caplog)
    assert len(lines) == 2 and "failing" in lines[0] and "back" in lines[1], lines
    assert failures_logged(caplog) == []
    assert replayed(caplog) > 0  # the first wave's answers went out before it failed: not sent again


async def test_a_database_outage_mid_burst_delays_the_answers_and_loses_none(
    tmp_path: Path, template_db: Path, migrated_postgres_url: str, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO)
    url = make_url(migrated_postgres_url)
    proxy = TcpProxy(url.host or "127.0.0.1", url.port or 5432)
    await proxy.mend()
    through_proxy = url.set(host="127.0.0.1", port=proxy.port).render_as_string(hide_password=False)
    try:
        async with running_bot(tmp_path, template_db, database_url=through_proxy) as h:
            first, second = await burst_through_an_outage(h, proxy.cut, proxy.mend)
            await h.sandbox.wait_for(
                lambda: h.app is not None and not h.app.inbox_dp.handling, "nothing left in hand"
            )
            handled_rows, pending = await handled(migrated_postgres_url)
            assert pending == 0 and handled_rows == 2 * WAVE
            assert_answered_once(h.sandbox, first + second)
    finally:
        if proxy.server is not None:
            proxy.server.close()
    lines = outage_lines(caplog)
    assert len(lines) == 2 and "failing" in lines[0] and "back" in lines[1], lines
    assert failures_logged(caplog) == []
    assert replayed(caplog) > 0  # the first wave's answers went out before it failed: not sent again
