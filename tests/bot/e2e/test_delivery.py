"""Nothing is lost: `python -m bot` killed (SIGTERM, kill -9) during a burst of questions; the webhook's
edges; no lock held across a Telegram call; a slow button press answered early.

Every wait is for an event (the sandbox saw N calls, a call is held, the bot logged its drain, rows are
marked handled), never for a quiet period. The sandbox's `hold` gate stops the bot's sendMessage calls
before they take effect, so the moment of the crash is chosen, not raced.
"""

from __future__ import annotations

import asyncio
import os
import shutil
import signal
import sqlite3
import sys
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from pathlib import Path

import aiohttp
import pytest
from aiohttp import web

from bot.app import create_app
from bot.webhook import build_webhook_app
from tests.bot.e2e.conftest import QUIET_S, Harness, make_settings, text, url_of
from tests.bot.updates import message_body
from tgsandbox import Sandbox

ROOT = Path(__file__).resolve().parents[3]
STARTUP_TIMEOUT_S = 90.0  # a cold `python -m bot` (aiogram's import) on a loaded 2-core machine
USERS, QUESTIONS_EACH = 5, 4
PROCESS_TIMEOUT_S = 60.0
CONTEXTS = ("1k", "2k", "4k", "8k")


@dataclass
class BotProcess:
    """`python -m bot` (polling) against the sandbox; its stderr lines collected as they come."""

    proc: asyncio.subprocess.Process
    lines: list[str] = field(default_factory=list)
    reader: asyncio.Task[None] | None = None

    def logged(self, fragment: str) -> bool:
        return any(fragment in line for line in self.lines)

    async def exit_code(self, timeout: float = 60.0) -> int:
        code = await asyncio.wait_for(self.proc.wait(), timeout)
        if self.reader is not None:
            await self.reader
        return code

    def tail(self) -> str:
        return "".join(self.lines[-30:])


async def start_bot(
    sandbox: Sandbox, db_path: Path, cwd: Path, *, python_options: tuple[str, ...] = (), **settings: str
) -> BotProcess:
    env = {
        key: value for key, value in os.environ.items()
        if key not in {"REDIS_URL", "WEBHOOK_URL", "WEBHOOK_SECRET", "OFFERS_FILE"}
    }  # fmt: skip
    env.update(
        BOT_TOKEN=sandbox.token, TELEGRAM_API_URL=sandbox.base_url, DATABASE_URL=url_of(db_path),
        LOG_LEVEL="INFO", DEFAULT_LANGUAGE="ru", PYTHONPATH=str(ROOT), **settings,
    )  # fmt: skip
    polls = sandbox.polls
    proc = await asyncio.create_subprocess_exec(
        sys.executable, *python_options, "-m", "bot", cwd=cwd, env=env,
        stdout=asyncio.subprocess.DEVNULL, stderr=asyncio.subprocess.PIPE,
    )  # fmt: skip
    bot = BotProcess(proc)

    async def read() -> None:
        assert proc.stderr is not None
        while line := await proc.stderr.readline():
            bot.lines.append(line.decode(errors="replace"))

    bot.reader = asyncio.create_task(read())
    try:
        await sandbox.wait_for(
            lambda: sandbox.polls > polls or proc.returncode is not None, "getUpdates", STARTUP_TIMEOUT_S
        )
    except AssertionError:
        proc.kill()
        raise
    assert proc.returncode is None, f"the bot exited at start:\n{bot.tail()}"
    return bot


def handled_count(db_path: Path) -> tuple[int, int]:
    """(handled, pending) updates in the bot's database."""
    db = sqlite3.connect(db_path)
    try:
        return db.execute(
            "SELECT count(*) - count(payload), count(payload) FROM processed_updates"
        ).fetchone()
    finally:
        db.close()


async def burst(sandbox: Sandbox) -> list[int]:
    """USERS users each post QUESTIONS_EACH different questions at once; their chat ids."""
    users = [sandbox.user(id=7000 + n, language_code="ru") for n in range(USERS)]
    for context in CONTEXTS[:QUESTIONS_EACH]:
        for user in users:
            await user.post(f"qwen3 8b int4 {context}")
    return [user.id for user in users]


def still_asking(sandbox: Sandbox, chats: list[int]) -> int:
    """Users with a question not answered yet: each has one reply in flight while the gate holds
    (one user may have had all of the first five answers and be done)."""
    answered = [sum(1 for r in sandbox.sent() if r.chat_id == chat_id) for chat_id in chats]
    return sum(1 for n in answered if n < QUESTIONS_EACH)


def assert_each_answered_once(sandbox: Sandbox, chats: list[int]) -> None:
    for chat_id in chats:
        answers = [r.params["text"] for r in sandbox.sent() if r.chat_id == chat_id]
        assert len(answers) == QUESTIONS_EACH, (chat_id, answers)
        assert len(set(answers)) == QUESTIONS_EACH, "an answer sent twice"
        assert text("error-generic") not in answers


@pytest.fixture
async def sandbox() -> AsyncIterator[Sandbox]:
    # a bot process starts, takes a burst and restarts on a loaded 2-core machine: the waits are for
    # events, so a generous bound costs nothing when they come and only avoids false alarms
    async with Sandbox(quiet_period=QUIET_S, reply_timeout=PROCESS_TIMEOUT_S) as running:
        yield running


@pytest.fixture
def db_path(tmp_path: Path, template_db: Path) -> Path:
    path = tmp_path / "bot.sqlite3"
    shutil.copy(template_db, path)
    return path


async def test_sigterm_during_a_burst_answers_every_question_before_exiting(
    sandbox: Sandbox, db_path: Path, tmp_path: Path
) -> None:
    """SIGTERM while every question is in hand (taken and confirmed, replies held): the bot stops
    polling, finishes them with its texts still loaded, then exits 0."""
    bot = await start_bot(sandbox, db_path, tmp_path)
    gate = sandbox.hold(["sendMessage"])
    chats = await burst(sandbox)
    await sandbox.wait_for(
        lambda: sandbox.telegram.updates.pending_count == 0 and gate.held == USERS,
        "all questions taken and confirmed, a reply per user held",
    )
    bot.proc.send_signal(signal.SIGTERM)
    await sandbox.wait_for(lambda: bot.logged("Draining"), "the bot draining its updates")
    gate.release()
    assert await bot.exit_code() == 0, bot.tail()
    assert_each_answered_once(sandbox, chats)
    assert handled_count(db_path) == (USERS * QUESTIONS_EACH, 0)
    assert not bot.logged("Traceback"), bot.tail()


async def test_kill_9_during_a_burst_loses_nothing_and_repeats_nothing(
    sandbox: Sandbox, db_path: Path, tmp_path: Path
) -> None:
    """kill -9 with five questions answered and the rest taken and confirmed but unanswered: after
    the restart every question is answered, none twice."""
    bot = await start_bot(sandbox, db_path, tmp_path)
    gate = sandbox.hold(["sendMessage"], after=5)
    chats = await burst(sandbox)
    await sandbox.wait_for(
        lambda: (
            sandbox.telegram.updates.pending_count == 0
            and handled_count(db_path)[0] == 5
            and gate.held == still_asking(sandbox, chats)
        ),
        "all questions confirmed, five answered and marked handled, the others' replies held",
    )
    bot.proc.kill()
    assert await bot.exit_code() == -signal.SIGKILL
    # The dead bot's held calls are cancelled with their connections, never sent.
    await sandbox.wait_for(lambda: gate.held == 0, "the killed bot's held calls dropped")
    gate.release()
    assert len(sandbox.sent()) == 5

    bot = await start_bot(sandbox, db_path, tmp_path)
    total = USERS * QUESTIONS_EACH
    await sandbox.wait_for(lambda: handled_count(db_path) == (total, 0), "every question handled")
    bot.proc.send_signal(signal.SIGTERM)
    assert await bot.exit_code() == 0, bot.tail()
    assert_each_answered_once(sandbox, chats)  # after the exit: nothing more can come
    assert bot.logged(f"handling {total - 5} update(s) received before"), bot.tail()


def rows_of(db_path: Path, sql: str) -> list[tuple[object, ...]]:
    db = sqlite3.connect(db_path)
    try:
        return db.execute(sql).fetchall()
    finally:
        db.close()


async def test_kill_9_between_the_last_telegram_call_and_the_commit_replays_the_update(
    sandbox: Sandbox, db_path: Path, tmp_path: Path
) -> None:
    """The update's answer is sent, but its commit cannot happen (the test holds SQLite's write
    lock): kill -9 lands between its last Telegram call and the commit of its work. Nothing of the
    update is on disk then (its done mark and its dialog state commit together, or not at all);
    after the restart it is handled again from the state before it and answered (at least once)."""
    bot = await start_bot(sandbox, db_path, tmp_path, ANSWER_PICTURES="0")
    gate = sandbox.hold(["sendMessage"])
    user = sandbox.user(id=7100, language_code="ru")
    await user.post("qwen3 8b int4 8k")
    await sandbox.wait_for(
        lambda: sandbox.telegram.updates.pending_count == 0 and gate.held == 1,
        "the question recorded and confirmed, its answer held",
    )
    assert rows_of(db_path, "SELECT count(*) FROM fsm_records") == [(0,)]
    lock = sqlite3.connect(db_path, isolation_level=None)
    try:
        lock.execute("BEGIN IMMEDIATE")  # the bot's next commit waits for this lock
        gate.release()
        await sandbox.wait_for(lambda: len(sandbox.sent()) == 1, "the answer sent")
        bot.proc.kill()
        assert await bot.exit_code() == -signal.SIGKILL
    finally:
        lock.execute("ROLLBACK")
        lock.close()
    assert handled_count(db_path) == (0, 1)  # pending: handled again at the restart
    assert rows_of(db_path, "SELECT count(*) FROM fsm_records") == [(0,)]  # nothing half-written

    bot = await start_bot(sandbox, db_path, tmp_path, ANSWER_PICTURES="0")
    await sandbox.wait_for(lambda: handled_count(db_path) == (1, 0), "the question handled again")
    await sandbox.wait_for(lambda: len(sandbox.sent()) == 2, "the question answered again")
    bot.proc.send_signal(signal.SIGTERM)
    assert await bot.exit_code() == 0, bot.tail()
    first, again = (r.params["text"] for r in sandbox.sent())
    assert again == first  # the same answer: replayed from the state before the update
    assert rows_of(db_path, "SELECT count(*) FROM fsm_records") == [(1,)]  # with its mark, this time
    assert bot.logged("handling 1 update(s) received before"), bot.tail()


# ---------------------------------------------------------------- in-process: webhook, locks, buttons

SECRET = "delivery-secret"


@pytest.fixture
async def webhook(sandbox: Sandbox, db_path: Path) -> AsyncIterator[str]:
    app = await create_app(make_settings(db_path, telegram_api_url=sandbox.base_url), bot=sandbox.make_bot())
    runner = web.AppRunner(build_webhook_app(app, secret=SECRET))
    await runner.setup()
    await web.TCPSite(runner, "127.0.0.1", 0).start()
    try:
        yield f"http://127.0.0.1:{runner.addresses[0][1]}"
    finally:
        await runner.cleanup()
        await app.close()


async def test_webhook_refuses_what_is_not_an_update_and_reports_health(
    webhook: str, sandbox: Sandbox, caplog: pytest.LogCaptureFixture
) -> None:
    headers = {"X-Telegram-Bot-Api-Secret-Token": SECRET, "Content-Type": "application/json"}
    user = sandbox.user(id=4242, language_code="en")
    async with aiohttp.ClientSession() as http:
        for body in (b"{not json", b"\xff\xfe", b"[1, 2]", b'{"foo": 1}', b'{"update_id": 5}',
                     b'{"update_id": "x", "message": 1}'):  # fmt: skip
            async with http.post(f"{webhook}/webhook", data=body, headers=headers) as response:
                assert response.status == 400, body
        async with http.post(f"{webhook}/webhook", data=b"{}", headers={}) as response:
            assert response.status == 401
        async with http.get(f"{webhook}/healthz") as response:
            assert response.status == 200
            assert await response.json() == {"ok": True, "database": "ok"}
        update_id = 31337
        body = message_body(update_id, "/help", user.id)
        for _ in range(2):  # the second delivery is a duplicate: 200, dropped
            async with http.post(f"{webhook}/webhook", data=body, headers=headers) as response:
                assert response.status == 200
    await sandbox.wait_for(lambda: len(sandbox.sent()) >= 1, "the answer to /help")
    assert [r.chat_id for r in sandbox.sent()] == [user.id]
    assert "Traceback" not in caplog.text


async def test_no_lock_is_held_while_telegram_answers(harness: Harness) -> None:
    """While the bot waits on sendMessage, another writer gets SQLite's write lock at once."""
    gate = harness.sandbox.hold(["sendMessage"])
    user = harness.user()
    await user.post("qwen3 8b int4")
    await harness.sandbox.wait_for(lambda: gate.held == 1, "the answer held")
    db = sqlite3.connect(harness.db_url.split("///", 1)[1], timeout=0, isolation_level=None)
    try:
        db.execute("BEGIN IMMEDIATE")  # "database is locked" if the update's transaction were open
        db.execute("ROLLBACK")
    finally:
        db.close()
    gate.release()
    await harness.sandbox.wait_for(lambda: len(harness.sandbox.sent()) == 1, "the answer")


async def test_a_slow_button_press_is_answered_early(harness: Harness) -> None:
    """The handler is stuck on Telegram (its edit held): the press is answered anyway, by the timer."""
    user = harness.user()
    await user.send("/start")
    gate = harness.sandbox.hold(["editMessageText", "sendMessage"])
    click = asyncio.create_task(user.click(text("task-inference")))
    await harness.sandbox.wait_for(
        lambda: bool(harness.sandbox.sent("answerCallbackQuery")), "the early answer"
    )
    assert gate.held == 1  # the handler has not finished
    gate.release()
    answer = await click
    assert answer.text is None
    assert len(harness.sandbox.sent("answerCallbackQuery")) == 1
