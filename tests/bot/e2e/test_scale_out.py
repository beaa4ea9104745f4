"""The scale-out deployment (README, Deploy): several webhook replicas behind a load balancer, sharing a
real PostgreSQL (users, dialogs, de-duplication) and a real Redis (dialog state, per-user locks).

Two replicas are built by `bot.app`'s factory from Settings, as `python -m bot webhook` builds them; a
tiny round-robin proxy on 127.0.0.1 stands for the load balancer, so consecutive updates of one dialog
land on different replicas. Also: long polling on PostgreSQL (`DATABASE_URL=postgresql+asyncpg://…`).
"""

from __future__ import annotations

import asyncio
import itertools
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import aiohttp
import pytest
import redis.asyncio as redis
from aiogram.fsm.storage.redis import RedisEventIsolation, RedisStorage
from aiohttp import web
from sqlalchemy import func, select

from bot.app import App, create_app
from bot.db.engine import create_engine, create_sessionmaker
from bot.db.models import DIALOG_COMPLETED, FsmRecord, ProcessedUpdate
from bot.db.report import print_source_report
from bot.webhook import build_webhook_app, ensure_webhook
from tests.bot.e2e.conftest import (
    QUIET_S,
    REPLY_TIMEOUT_S,
    Harness,
    assert_no_failed_calls,
    core,
    make_settings,
    result_mark,
    text,
)
from tests.bot.e2e.test_dialogs import DIALOGS, play
from tgsandbox import Sandbox

SECRET = "scale-out-secret"
SECRET_HEADER = "X-Telegram-Bot-Api-Secret-Token"


@dataclass
class LoadBalancer:
    """Forwards each webhook call to the next replica in turn.

    `mirror`: a call goes to every replica at once (one delivery racing itself on two replicas).
    `hold(n)`: the next n calls are acknowledged at once and then forwarded together, each to the next
    replica, so that they are handled at the same moment (the sandbox posts one call at a time).
    `hits[i]`: calls replica i received.
    """

    targets: list[str]
    mirror: bool = False
    hits: list[int] = field(default_factory=list)
    _turn: itertools.count[int] = field(default_factory=itertools.count)
    _held: list[tuple[bytes, dict[str, str]]] = field(default_factory=list)
    _hold: int = 0
    _released: list[asyncio.Task[Any]] = field(default_factory=list)
    _http: aiohttp.ClientSession | None = None

    def hold(self, calls: int) -> None:
        self._hold = calls

    async def handle(self, request: web.Request) -> web.Response:
        body = await request.read()
        headers = {
            name: request.headers[name] for name in ("Content-Type", SECRET_HEADER) if name in request.headers
        }
        if self._hold:
            self._held.append((body, headers))
            if len(self._held) == self._hold:
                held, self._held, self._hold = self._held, [], 0
                self._released.append(asyncio.create_task(self._release(held)))
            return web.json_response({})
        chosen = range(len(self.targets)) if self.mirror else [self._next()]
        responses = await asyncio.gather(*(self._forward(i, body, headers) for i in chosen))
        status, payload = responses[0]
        return web.Response(status=status, body=payload, content_type="application/json")

    def _next(self) -> int:
        return next(self._turn) % len(self.targets)

    async def _release(self, held: list[tuple[bytes, dict[str, str]]]) -> None:
        await asyncio.gather(*(self._forward(self._next(), body, headers) for body, headers in held))

    async def _forward(self, index: int, body: bytes, headers: dict[str, str]) -> tuple[int, bytes]:
        self.hits[index] += 1
        if self._http is None:
            self._http = aiohttp.ClientSession()
        async with self._http.post(self.targets[index], data=body, headers=headers) as response:
            return response.status, await response.read()

    async def close(self) -> None:
        await asyncio.gather(*self._released)
        if self._http is not None:
            await self._http.close()


@dataclass
class Cluster:
    harness: Harness
    replicas: list[App]
    balancer: LoadBalancer
    redis_url: str
    redis_prefix: str

    async def redis_keys(self) -> list[str]:
        client = redis.Redis.from_url(self.redis_url)
        try:
            return [key.decode() async for key in client.scan_iter(match=f"{self.redis_prefix}:*")]
        finally:
            await client.aclose()

    async def count(self, model: type[FsmRecord] | type[ProcessedUpdate]) -> int:
        engine = create_engine(self.harness.db_url)
        try:
            async with create_sessionmaker(engine)() as session:
                return int(await session.scalar(select(func.count()).select_from(model)) or 0)
        finally:
            await engine.dispose()


async def serve(app: web.Application) -> tuple[web.AppRunner, int]:
    runner = web.AppRunner(app)
    await runner.setup()
    await web.TCPSite(runner, "127.0.0.1", 0).start()
    return runner, runner.addresses[0][1]


@pytest.fixture
async def cluster(
    tmp_path: Path, migrated_postgres_url: str, redis_url: str, redis_key_prefix: str
) -> AsyncIterator[Cluster]:
    runners: list[web.AppRunner] = []
    replicas: list[App] = []
    async with Sandbox(quiet_period=QUIET_S, reply_timeout=REPLY_TIMEOUT_S) as sandbox:
        settings = make_settings(
            tmp_path / "unused.sqlite3",
            database_url=migrated_postgres_url,
            redis_url=redis_url,
            redis_key_prefix=redis_key_prefix,
            telegram_api_url=sandbox.base_url,
            webhook_secret=SECRET,
        )
        balancer = LoadBalancer([])
        try:
            for _ in range(2):
                app = await create_app(settings, bot=sandbox.make_bot())
                replicas.append(app)
                runner, port = await serve(build_webhook_app(app, secret=SECRET))
                runners.append(runner)
                balancer.targets.append(f"http://127.0.0.1:{port}/webhook")
            balancer.hits = [0] * len(balancer.targets)
            proxy = web.Application()
            proxy.router.add_post("/webhook", balancer.handle)
            runner, port = await serve(proxy)
            runners.append(runner)
            public_url = f"http://127.0.0.1:{port}/webhook"
            allowed = replicas[0].dp.resolve_used_update_types()
            # Replicas start together: the first registers the webhook, the others find it in place.
            assert await ensure_webhook(replicas[0].bot, public_url, SECRET, allowed) is True
            assert await ensure_webhook(replicas[1].bot, public_url, SECRET, allowed) is False
            harness = Harness(sandbox, settings)
            yield Cluster(harness, replicas, balancer, redis_url, redis_key_prefix)
        finally:
            for runner in reversed(runners):
                await runner.cleanup()
            for app in replicas:
                await app.close()
            await balancer.close()


async def test_dialog_across_replicas(cluster: Cluster, capsys: pytest.CaptureFixture[str]) -> None:
    """Every step lands on the other replica: the state travels through Redis, the rows through
    PostgreSQL; per-user locks live in Redis, so the replicas never interleave one user's updates."""
    for app in cluster.replicas:
        assert isinstance(app.dp.storage, RedisStorage)
        assert isinstance(app.dp.fsm.events_isolation, RedisEventIsolation)
    user = cluster.harness.user()
    await user.send("/start sales-scale")
    actions, expected = DIALOGS["lora"]
    await play(user, actions)
    result = user.last_message()
    assert result_mark() in (result.text or "")
    assert_no_failed_calls(cluster.harness.sandbox)
    # seven updates, alternating between the two replicas
    assert sorted(cluster.balancer.hits) == [3, 4]

    (dialog,) = await cluster.harness.dialogs(user.id)
    assert dialog.status == DIALOG_COMPLETED and dialog.source == "sales-scale"
    for key, value in expected.items():
        assert dialog.answers.get(key) == value, (key, dialog.answers)
    row = await cluster.harness.db_user(user.id)
    assert row is not None and row.source == "sales-scale"
    # the dialog state is in Redis under the configured prefix, not in the database
    assert any(f":{user.id}:" in key for key in await cluster.redis_keys())
    assert await cluster.count(FsmRecord) == 0
    assert await cluster.count(ProcessedUpdate) == 7

    # a change from the result, on whichever replica gets it, continues the same dialog
    await user.click(text("btn-change-precision"))
    await user.click(core("precision", "int8"))
    (dialog,) = await cluster.harness.dialogs(user.id)
    assert dialog.answers["precision"] == "int8" and dialog.status == DIALOG_COMPLETED

    capsys.readouterr()
    await print_source_report(cluster.harness.db_url)  # `python -m bot stats` on the shared database
    assert capsys.readouterr().out.splitlines()[1].split()[:4] == ["sales-scale", "1", "1", "1"]


async def test_one_update_on_both_replicas_is_handled_once(cluster: Cluster) -> None:
    user = cluster.harness.user(language_code="en")
    cluster.balancer.mirror = True  # the balancer retries on the other replica while the first works
    replies = await user.send("qwen3 8b int4 8k", update_id=777)
    assert cluster.balancer.hits == [1, 1]
    assert len(replies) == 1 and result_mark("en") in (replies[0].text or "")
    cluster.balancer.mirror = False
    # and Telegram's own redelivery of it later
    await user.send("qwen3 8b int4 8k", update_id=777, expect_reply=False)
    assert len(user.bot_messages()) == 1
    (dialog,) = await cluster.harness.dialogs(user.id)
    assert dialog.status == DIALOG_COMPLETED and dialog.answers["precision"] == "int4"
    assert await cluster.count(ProcessedUpdate) == 1
    assert_no_failed_calls(cluster.harness.sandbox)


async def test_double_tap_on_two_replicas_runs_the_step_once(cluster: Cluster) -> None:
    """Two taps of one button reach two replicas at the same moment: one runs the step, the other then
    sees a step that has moved on and answers "stale" (one user's updates are serialised across
    replicas by RedisEventIsolation, and on PostgreSQL also by the lock on the user's row)."""
    user = cluster.harness.user()
    await user.send("/start")
    hits = list(cluster.balancer.hits)
    cluster.balancer.hold(2)
    first, second = await asyncio.gather(
        user.click(text("task-inference")), user.click(text("task-inference"))
    )
    assert sorted([first.text or "", second.text or ""]) == ["", text("stale-button")]
    assert [now - before for now, before in zip(cluster.balancer.hits, hits, strict=True)] == [1, 1]
    (dialog,) = await cluster.harness.dialogs(user.id)
    assert dialog.task == "inference"


@pytest.fixture
async def postgres_harness(tmp_path: Path, migrated_postgres_url: str) -> AsyncIterator[Harness]:
    """Long polling, like `python -m bot` with DATABASE_URL pointing at PostgreSQL (state included)."""
    async with Sandbox(quiet_period=QUIET_S, reply_timeout=REPLY_TIMEOUT_S) as sandbox:
        settings = make_settings(
            tmp_path / "unused.sqlite3", database_url=migrated_postgres_url, telegram_api_url=sandbox.base_url
        )
        h = Harness(sandbox, settings)
        await h.start()
        try:
            yield h
        finally:
            await h.stop()


async def test_polling_dialog_on_postgres(postgres_harness: Harness) -> None:
    h = postgres_harness
    user = h.user()
    await user.send("/start")
    actions, expected = DIALOGS["inference"]
    await play(user, actions[:2])
    await h.restart()  # the dialog state is in PostgreSQL: a new process continues it
    await play(user, actions[2:])
    assert result_mark() in (user.last_message().text or "")
    (dialog,) = await h.dialogs(user.id)
    assert dialog.status == DIALOG_COMPLETED
    for key, value in expected.items():
        assert dialog.answers.get(key) == value, (key, dialog.answers)
    assert_no_failed_calls(h.sandbox)


async def test_a_failed_update_leaves_no_dangling_dialog(
    cluster: Cluster, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An update fails after it opened the dialog row: the row rolls back with the transaction, and the
    state in Redis with it (an update's state is written only before its last commit, bot.redis_fsm):
    the task's button, pressed again, opens the dialog afresh, and the walk goes on to its result."""
    from bot import presenter

    render_step = presenter.render_step
    calls = itertools.count()

    def fails_once(*args: Any, **kwargs: Any) -> str:
        if next(calls) == 1:  # the model question, right after the task opened the dialog
            raise RuntimeError("boom")
        return render_step(*args, **kwargs)

    monkeypatch.setattr(presenter, "render_step", fails_once)
    user = cluster.harness.user()
    await user.send("/start")
    await user.click(text("task-inference"))
    assert user.last_message().text == text("error-generic")
    assert await cluster.harness.dialogs(user.id) == []  # rolled back
    await user.click(text("task-inference"))  # the state in Redis still asks for the task
    await user.send("qwen3 8b")
    await user.click(core("precision", "bf16"))
    await user.click("8K")
    await user.click("1")
    assert result_mark() in (user.last_message().text or "")
    (dialog,) = await cluster.harness.dialogs(user.id)
    assert dialog.status == DIALOG_COMPLETED and dialog.answers["model"] == "qwen3-8b"


async def test_a_database_restart_does_not_break_the_next_update(cluster: Cluster) -> None:
    """Every server connection of the replicas' pools is terminated between two steps (what a
    PostgreSQL restart does to them): the next updates are answered as usual, without a ping at every
    checkout (the pool sees the closed connections and replaces them, bot.db.engine)."""
    from urllib.parse import urlsplit

    import asyncpg

    from tests.conftest import POSTGRES_URL

    user = cluster.harness.user()
    await user.send("/start")
    await user.click(text("task-inference"))  # both replicas' pools now hold connections
    role = urlsplit(cluster.harness.db_url).username
    admin = await asyncpg.connect(POSTGRES_URL)
    try:
        terminated = await admin.fetchval(
            "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity WHERE usename = $1", role
        )
    finally:
        await admin.close()
    assert terminated >= 2
    for _ in cluster.replicas:  # each replica in turn, its pool's connections all terminated
        replies = await user.send("/start")
        assert len(replies) == 1 and text("ask-task") in (replies[0].text or "")
    assert_no_failed_calls(cluster.harness.sandbox)


async def test_a_language_chosen_on_one_replica_is_spoken_by_both(cluster: Cluster) -> None:
    """The user's row (their language) is kept with their Redis lock: a change made on one replica is
    what the other reads for the next update (bot.redis_state), not a copy of its own."""
    user = cluster.harness.user(language_code="ru")
    await user.send("/lang")
    hits = list(cluster.balancer.hits)
    await user.click(text("lang-en", "en"))
    chose_on = [now - before for now, before in zip(cluster.balancer.hits, hits, strict=True)].index(1)
    for _ in range(2):  # one question on each replica, whichever comes first
        before = list(cluster.balancer.hits)
        (reply,) = await user.send("qwen3 8b int4 8k")
        assert result_mark("en") in (reply.text or ""), reply.text
        cluster_hits = [now - then for now, then in zip(cluster.balancer.hits, before, strict=True)]
        assert sum(cluster_hits) == 1
    assert cluster.balancer.hits[1 - chose_on] > hits[1 - chose_on]  # the other replica answered too
