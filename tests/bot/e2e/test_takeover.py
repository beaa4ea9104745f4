"""A killed replica's updates are taken over in seconds and answered once.

Two real `python -m bot webhook` processes on PostgreSQL + Redis behind a round-robin balancer (as
tests/bot/e2e/test_scale_out.py, but separate processes, so one can be killed with SIGKILL). One is
killed with updates of two kinds in hand: answers sent whose done marks are not committed yet (the
test holds their rows locked, as a slow group commit would), and answers not sent yet (held by the
sandbox: a killed process's held calls never take effect). The other replica takes both over once
the dead one's leases run out, sends what was not sent, and nothing twice.
"""

from __future__ import annotations

import asyncio
import os
import signal
import sys
import time
from collections.abc import AsyncIterator
from pathlib import Path

import aiohttp
import pytest
from aiohttp import web
from sqlalchemy import text as sql

from bot.db.engine import create_engine
from bot.db.inbox import LEASE
from bot.db.inbox_dispatcher import REPLICA_SWEEP_INTERVAL_S
from tests.bot.e2e.conftest import QUIET_S, result_mark, text
from tests.bot.e2e.test_delivery import PROCESS_TIMEOUT_S, STARTUP_TIMEOUT_S, BotProcess
from tests.bot.e2e.test_outages import free_port, handled
from tests.bot.e2e.test_scale_out import LoadBalancer, serve
from tgsandbox import Sandbox

ROOT = Path(__file__).resolve().parents[3]
SECRET = "takeover-secret"
PUBLIC_URL = "https://bot.example/webhook"
"""What the replicas register (Telegram calls https only); the test then points the sandbox at the
balancer in front of them, as a reverse proxy would forward."""
SENT_UNMARKED, UNSENT = 6, 6  # users of each kind
TAKEOVER_BOUND_S = LEASE.total_seconds() + REPLICA_SWEEP_INTERVAL_S + 15.0
"""The dead replica's leases run out (LEASE after its last renewal), the survivor's next sweep takes
them; the rest is slack for a loaded 2-core machine."""


async def start_replica(sandbox: Sandbox, db_url: str, redis_url: str, prefix: str) -> tuple[
    BotProcess, str
]:  # fmt: skip
    port = free_port()
    env = {key: value for key, value in os.environ.items() if key not in {"OFFERS_FILE"}}
    env.update(
        BOT_TOKEN=sandbox.token, TELEGRAM_API_URL=sandbox.base_url, DATABASE_URL=db_url,
        REDIS_URL=redis_url, REDIS_KEY_PREFIX=prefix, WEBHOOK_URL=PUBLIC_URL, WEBHOOK_SECRET=SECRET,
        WEB_SERVER_HOST="127.0.0.1", WEB_SERVER_PORT=str(port), LOG_LEVEL="INFO",
        DEFAULT_LANGUAGE="ru", ANSWER_PICTURES="false", HF_LOOKUP="false", PYTHONPATH=str(ROOT),
    )  # fmt: skip
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "bot", "webhook", cwd=ROOT, env=env,
        stdout=asyncio.subprocess.DEVNULL, stderr=asyncio.subprocess.PIPE,
    )  # fmt: skip
    replica = BotProcess(proc)

    async def read() -> None:
        assert proc.stderr is not None
        while line := await proc.stderr.readline():
            replica.lines.append(line.decode(errors="replace"))

    replica.reader = asyncio.create_task(read())
    return replica, f"http://127.0.0.1:{port}/webhook"


async def healthy(url: str) -> bool:
    try:
        async with aiohttp.ClientSession() as http, http.get(url.replace("/webhook", "/healthz")) as r:
            return r.status == 200
    except aiohttp.ClientError:
        return False


async def wait_healthy(sandbox: Sandbox, replica: BotProcess, url: str) -> None:
    deadline = time.monotonic() + STARTUP_TIMEOUT_S
    while not await healthy(url):
        assert replica.proc.returncode is None, f"the replica exited at start:\n{replica.tail()}"
        assert time.monotonic() < deadline, f"the replica did not start:\n{replica.tail()}"
        await asyncio.sleep(0.05)
    await sandbox.wait_for(lambda: replica.logged("webhook "), "the webhook registered", STARTUP_TIMEOUT_S)


@pytest.fixture
async def sandbox() -> AsyncIterator[Sandbox]:
    async with Sandbox(quiet_period=QUIET_S, reply_timeout=PROCESS_TIMEOUT_S) as running:
        yield running


def said_to(sandbox: Sandbox, chat_id: int) -> list[str]:
    return [r.params["text"] for r in sandbox.sent() if r.chat_id == chat_id]


async def test_a_killed_replica_is_taken_over_in_seconds_and_nothing_is_said_twice(
    sandbox: Sandbox, migrated_postgres_url: str, redis_url: str, redis_key_prefix: str
) -> None:
    balancer = LoadBalancer([])
    proxy = web.Application()
    proxy.router.add_post("/webhook", balancer.handle)
    proxy_runner, proxy_port = await serve(proxy)
    public = f"http://127.0.0.1:{proxy_port}/webhook"
    replicas: list[BotProcess] = []
    locker = create_engine(migrated_postgres_url)
    try:
        for _ in range(2):
            replica, url = await start_replica(sandbox, migrated_postgres_url, redis_url, redis_key_prefix)
            replicas.append(replica)
            balancer.targets.append(url)
        balancer.hits = [0, 0]
        for replica, url in zip(replicas, balancer.targets, strict=True):
            await wait_healthy(sandbox, replica, url)
        bot = sandbox.make_bot()
        try:
            await bot.set_webhook(public, secret_token=SECRET, allowed_updates=["message", "callback_query"])
        finally:
            await bot.session.close()

        # Kind one: answered, done marks held back by the test's lock on their rows.
        gate = sandbox.hold(["sendMessage"])
        first = [sandbox.user(id=8000 + n, language_code="ru") for n in range(SENT_UNMARKED)]
        for user in first:
            await user.post("qwen3 8b int4 8k")
        await sandbox.wait_for(lambda: gate.held == SENT_UNMARKED, "every first answer held")
        async with locker.connect() as lock:
            await lock.begin()
            await lock.execute(
                sql("SELECT update_id FROM processed_updates WHERE payload IS NOT NULL FOR UPDATE")
            )
            gate.release()
            await sandbox.wait_for(lambda: len(sandbox.sent()) == SENT_UNMARKED, "the first answers sent")
            # Kind two: received and confirmed, answers not sent yet.
            second_gate = sandbox.hold(["sendMessage"])
            second = [sandbox.user(id=8100 + n, language_code="ru") for n in range(UNSENT)]
            for user in second:
                await user.post("qwen3 8b int4 4k")
            await sandbox.wait_for(
                lambda: sandbox.telegram.updates.pending_count == 0 and second_gate.held == UNSENT,
                "every second answer held",
            )
            dead, survivor = replicas
            dead.proc.kill()
            assert await dead.exit_code() == -signal.SIGKILL
            killed_at = time.monotonic()
            await sandbox.wait_for(
                lambda: second_gate.held < UNSENT, "the killed replica's held calls dropped"
            )
            await lock.rollback()
        second_gate.release()
        total = SENT_UNMARKED + UNSENT
        deadline = killed_at + TAKEOVER_BOUND_S
        while await handled(migrated_postgres_url) != (total, 0):
            assert time.monotonic() < deadline, f"not taken over in {TAKEOVER_BOUND_S} s:\n{survivor.tail()}"
            await asyncio.sleep(0.05)
        took = time.monotonic() - killed_at
        assert survivor.logged("received before and not yet handled"), survivor.tail()
        survivor.proc.send_signal(signal.SIGTERM)
        assert await survivor.exit_code() == 0, survivor.tail()
        # After the exit: nothing more can come.
        for user in first + second:
            said = said_to(sandbox, user.id)
            assert len(said) == 1 and result_mark() in said[0], (user.id, said, took, survivor.tail())
            assert text("error-generic") not in said
        assert survivor.logged("made before: not made again"), survivor.tail()
    finally:
        for replica in replicas:
            if replica.proc.returncode is None:
                replica.proc.kill()
                await replica.proc.wait()
        await proxy_runner.cleanup()
        await balancer.close()
        await locker.dispose()
