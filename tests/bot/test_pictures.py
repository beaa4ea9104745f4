"""The bot's picture service (`bot.pictures`): drawn in a worker process, one render per picture however
many ask for it at once, bounded, cached by what it shows, a caption within 1024; the worker started
with the bot (not waited for), replaced after a crash, stopped by `close`, gone with the bot even after
`kill -9`."""

from __future__ import annotations

import asyncio
import os
import select
import signal
import subprocess
import sys
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from types import SimpleNamespace

import pytest
from sqlalchemy import text

from bot import picture_process, picture_worker
from bot import pictures as pictures_module
from bot.answer_picture import MAX_CAPTION, Picture, caption_html, picture_key
from bot.db.engine import create_engine, create_sessionmaker
from bot.pictures import Pictures
from core.language.answer import Answer, build_answer
from core.parse import understand
from core.sizing.estimate import estimate
from tests.bot.picture_renders import crash_on_russian, fail_always, hang

ROOT = Path(__file__).resolve().parents[2]
ORPHAN_WAIT_S = 60.0  # generous: the worker exits at once, but the machine may be loaded
TURN_WAIT_S = 60.0  # as generous: the other update gets the turn at once, or never


def answer_of(question: str, lang: str = "en") -> Answer:
    understood = understand(question)
    return build_answer(estimate(understood.request), lang, understood.notes)


@pytest.fixture
async def make() -> AsyncIterator[Callable[..., Pictures]]:
    """`make(**options)`: a `Pictures` of the test's own, closed (its worker stopped) afterwards."""
    made: list[Pictures] = []

    def new(**options: object) -> Pictures:
        made.append(Pictures(**options))  # type: ignore[arg-type]
        return made[-1]

    yield new
    for pictures in made:
        await pictures.close()


async def test_the_same_answer_is_drawn_once(make: Callable[..., Pictures]) -> None:
    pictures = make()
    first = await pictures.picture(answer_of("llama 3.1 8b int4"))
    again = await pictures.picture(answer_of("llama 3.1 8b int4"))
    other = await pictures.picture(answer_of("llama 3.1 8b int4", "ru"))  # another language
    assert first is not None and again is first and other is not None and other is not first
    assert first.png.startswith(b"\x89PNG") and first.caption
    assert pictures.rendered == 2


async def test_a_picture_asked_for_while_it_is_drawn_waits_for_that_render(
    make: Callable[..., Pictures],
) -> None:
    pictures = make(max_pending=1)
    answer = answer_of("llama 3.1 8b int4")
    # three users ask at once: the first starts the render, the second waits for it; another picture
    # would be a second render past the bound (1), so it is skipped
    first, second, other = await asyncio.gather(
        pictures.picture(answer), pictures.picture(answer_of("llama 3.1 8b int4")),
        pictures.picture(answer_of("qwen2.5 7b int4")),
    )  # fmt: skip
    assert isinstance(first, Picture) and second is first and other is None
    assert pictures.rendered == 1
    assert pictures.pending == 0
    assert await pictures.picture(answer_of("qwen2.5 7b int4")) is not None  # room again


async def test_a_failed_shared_render_gives_every_waiter_no_picture(make: Callable[..., Pictures]) -> None:
    pictures = make(render=fail_always)
    answer = answer_of("llama 3.1 8b int4")
    assert await asyncio.gather(pictures.picture(answer), pictures.picture(answer)) == [None, None]
    assert pictures.rendered == 0 and pictures.pending == 0


async def test_the_first_picture_waits_for_the_worker_within_the_limit(make: Callable[..., Pictures]) -> None:
    """The worker's start-up counts towards the render limit (the user waits no longer for it), and
    goes on for the next picture."""
    pictures = make(timeout_s=0.001)
    assert await pictures.picture(answer_of("llama 3.1 8b int4")) is None
    assert pictures.worker_pid is None  # given up while the worker was still starting (~1 s)
    await pictures.start_worker()
    assert pictures.workers_started == 1 and pictures.worker_pid is not None


async def test_the_worker_draws_below_the_bot_by_the_niceness_it_was_started_with(
    make: Callable[..., Pictures], monkeypatch: pytest.MonkeyPatch
) -> None:
    """In production the worker lowers its own priority by `picture_worker.NICENESS` (these tests
    set it to 0, tests/bot/conftest.py): the value the bot had when it started the worker."""
    monkeypatch.setattr(picture_worker, "NICENESS", 7)
    monkeypatch.setattr(picture_process, "WORKER_START_TIMEOUT_S", ORPHAN_WAIT_S)  # it starts below us
    pictures = make()
    await pictures.start_worker()
    assert pictures.worker_pid is not None
    assert os.getpriority(os.PRIO_PROCESS, pictures.worker_pid) == os.getpriority(os.PRIO_PROCESS, 0) + 7


async def test_started_with_the_bot_the_first_picture_is_drawn_by_that_worker(
    make: Callable[..., Pictures],
) -> None:
    """The bot's startup handler begins the worker's start and returns before it is ready; a picture
    asked meanwhile waits for that start (not skipped, no second start), and later ones use it."""
    pictures = make(max_pending=1)
    await pictures.start_with_the_bot()
    assert pictures.workers_started == 1 and pictures.worker_pid is None  # begun, not waited for
    first = await pictures.picture(answer_of("llama 3.1 8b int4"))
    pid = pictures.worker_pid
    assert first is not None and pid is not None
    assert await pictures.picture(answer_of("qwen2.5 7b int4")) is not None
    assert pictures.workers_started == 1 and pictures.worker_pid == pid
    assert pictures.skipped == 0 and pictures.rendered == 2


async def test_a_worker_that_fails_to_start_with_the_bot_is_logged_and_the_first_picture_starts_one(
    make: Callable[..., Pictures], monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    pictures = make(timeout_s=ORPHAN_WAIT_S)  # the second start and its render, however loaded the host
    monkeypatch.setattr(picture_process, "WORKER_START_TIMEOUT_S", 0.0)
    await pictures.start_with_the_bot()
    async with asyncio.timeout(ORPHAN_WAIT_S):
        while "did not start in time" not in caplog.text:
            await asyncio.sleep(0.01)
    monkeypatch.undo()
    assert await pictures.picture(answer_of("llama 3.1 8b int4")) is not None
    assert pictures.workers_started == 2 and pictures.worker_pid is not None


async def test_a_render_past_the_timeout_gives_every_waiter_no_picture(make: Callable[..., Pictures]) -> None:
    pictures = make(render=hang, timeout_s=0.2)
    await pictures.start_worker()  # the limit covers a start-up too: here, only the render
    answer = answer_of("llama 3.1 8b int4")
    assert await asyncio.gather(pictures.picture(answer), pictures.picture(answer)) == [None, None]
    assert pictures.pending == 0
    pid = pictures.worker_pid
    assert pid is not None
    await pictures.close()  # the worker is still drawing: killed after the grace
    assert pictures.worker_pid is None
    with pytest.raises(ProcessLookupError):
        os.kill(pid, 0)


async def test_a_crashed_worker_costs_that_picture_and_the_next_gets_a_new_worker(
    make: Callable[..., Pictures],
) -> None:
    pictures = make(render=crash_on_russian)
    assert await pictures.picture(answer_of("llama 3.1 8b int4")) is not None
    first_worker = pictures.worker_pid
    russian = answer_of("llama 3.1 8b int4", "ru")
    assert await asyncio.gather(pictures.picture(russian), pictures.picture(russian)) == [None, None]
    assert pictures.worker_pid is None  # it is gone, and noticed
    again = await pictures.picture(answer_of("qwen2.5 7b int4"))
    assert again is not None and again.png.startswith(b"\x89PNG")
    assert pictures.workers_started == 2 and pictures.worker_pid not in (None, first_worker)


async def test_close_stops_the_worker(make: Callable[..., Pictures]) -> None:
    pictures = make()
    assert pictures.worker_pid is None  # nothing started before the first picture
    assert await pictures.picture(answer_of("llama 3.1 8b int4")) is not None
    pid = pictures.worker_pid
    assert pid is not None
    os.kill(pid, 0)  # alive
    await pictures.close()
    assert pictures.worker_pid is None
    with pytest.raises(ProcessLookupError):
        os.kill(pid, 0)  # exited and reaped
    # a picture after close starts a worker again (the process-wide renderer outlives a Dispatcher)
    assert await pictures.picture(answer_of("qwen2.5 7b int4")) is not None


class PhotoBot:
    """What `Pictures.send` needs of a Bot: its id and ``send_photo``, here recording the chats."""

    id = 1

    def __init__(self) -> None:
        self.chats: list[int] = []

    async def send_photo(self, chat_id: int, photo: object, caption: str) -> SimpleNamespace:
        self.chats.append(chat_id)
        return SimpleNamespace(photo=[SimpleNamespace(file_id="photo-1")])


async def test_close_lets_a_picture_on_its_way_arrive(
    make: Callable[..., Pictures], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The last answers before a shutdown still get their pictures (sent apart from their updates)."""
    monkeypatch.setattr(pictures_module, "CLOSE_WAIT_S", 60.0)  # what is waited for is the picture itself
    pictures = make()
    bot = PhotoBot()
    pictures.send_apart(bot, 42, answer_of("llama 3.1 8b int4"))  # type: ignore[arg-type]
    assert pictures.sending == 1
    await pictures.close()
    assert bot.chats == [42] and pictures.sending == 0 and pictures.sent == 1


async def test_close_gives_up_a_picture_that_does_not_come_in_time(
    make: Callable[..., Pictures], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(pictures_module, "CLOSE_WAIT_S", 0.05)
    pictures = make(render=hang, timeout_s=600.0)  # only close's own limit can end its wait
    bot = PhotoBot()
    pictures.send_apart(bot, 42, answer_of("llama 3.1 8b int4"))  # type: ignore[arg-type]
    await asyncio.wait_for(pictures.close(), ORPHAN_WAIT_S)  # the picture cancelled, the worker stopped
    assert bot.chats == [] and pictures.sending == 0 and pictures.worker_pid is None


async def test_an_update_waiting_for_its_picture_lets_the_others_write(
    make: Callable[..., Pictures], tmp_path: Path
) -> None:
    engine = create_engine(f"sqlite+aiosqlite:///{tmp_path / 'bot.sqlite3'}")
    sessions = create_sessionmaker(engine)  # SQLite: one writer's turn at a time (bot.db.turn)
    pictures = make(render=hang)  # its picture never comes: the update waits until the worker stops

    async def update() -> Picture | None:
        async with sessions() as session:  # the update's session: its write committed first (bot.dialog)
            await session.execute(text("CREATE TABLE IF NOT EXISTS t (n INTEGER)"))
            await session.commit()
            return await pictures.picture(answer_of("llama 3.1 8b int4"))

    async def another_update() -> None:
        async with sessions() as session, session.begin():
            await session.execute(text("INSERT INTO t VALUES (1)"))

    waiting = asyncio.create_task(update())
    while not pictures.pending:  # its render asked for (the task's first steps)
        await asyncio.sleep(0)
    try:
        await asyncio.wait_for(another_update(), TURN_WAIT_S)  # not behind the picture
    finally:
        await pictures.close()  # the worker stopped: no picture
        assert await waiting is None
        await engine.dispose()


BOT = """
import asyncio
from bot import picture_worker
from bot.pictures import Pictures

picture_worker.NICENESS = 0  # as in the other tests (tests/bot/conftest.py)

async def main() -> None:
    pictures = Pictures()
    await pictures.start_worker()
    print(pictures.worker_pid, flush=True)
    await asyncio.Event().wait()

asyncio.run(main())
"""


@pytest.mark.skipif(not hasattr(os, "pidfd_open"), reason="waits for the worker's exit with a pidfd (Linux)")
def test_the_worker_does_not_outlive_a_killed_bot() -> None:
    env = os.environ | {"PYTHONPATH": str(ROOT)}
    bot = subprocess.Popen([sys.executable, "-c", BOT], cwd=ROOT, env=env, stdout=subprocess.PIPE, text=True)
    assert bot.stdout is not None
    try:
        pid = int(bot.stdout.readline())
        pidfd = os.pidfd_open(pid)  # before the kill: the id cannot be taken by another process
    finally:
        bot.kill()  # SIGKILL: no shutdown handler, no atexit
        bot.wait()
    try:
        exited, _, _ = select.select([pidfd], [], [], ORPHAN_WAIT_S)  # readable when it has exited
        if not exited:
            signal.pidfd_send_signal(pidfd, signal.SIGKILL)
        assert exited, "the picture worker outlived the bot"
    finally:
        os.close(pidfd)


async def test_past_the_bound_the_picture_is_skipped(make: Callable[..., Pictures]) -> None:
    pictures = make(max_pending=0)
    assert await pictures.picture(answer_of("llama 3.1 8b int4")) is None
    assert pictures.rendered == 0 and pictures.worker_pid is None


def test_a_render_the_worker_cannot_import_is_refused_at_once() -> None:
    with pytest.raises(ValueError, match="module-level"):
        Pictures(render=lambda answer: (b"", []))


def test_the_key_is_what_the_picture_shows() -> None:
    a, b = answer_of("llama 3.1 8b int4 8k"), answer_of("llama 3.1 8b int4 16k")
    assert picture_key(a) == picture_key(answer_of("llama 3.1 8b int4 8k"))
    assert picture_key(a) != picture_key(b)


def test_caption_is_escaped_bold_lead_and_fits() -> None:
    html = caption_html(["✔ Fits <here>", "a & b"])
    assert html == "<b>✔ Fits &lt;here&gt;</b>\na &amp; b"
    long = caption_html(["lead", *(f"line {i} " + "x" * 60 for i in range(40))])
    assert long.startswith("<b>lead</b>")
    plain = long.replace("<b>", "").replace("</b>", "")
    assert len(plain.encode("utf-16-le")) // 2 <= MAX_CAPTION
