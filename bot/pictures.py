"""The answer's picture in the chat: rendered in a worker process, cached, sent after the text answer.

- **When**: with every result in a private chat, once its update is finished (`UpdateWork.then`):
  neither the commit nor the user's next update waits for it. The text stays the answer: a render
  that fails, times out or finds the renderer busy sends nothing more. Not in groups, inline mode,
  comparisons or details. `ANSWER_PICTURES=0` turns them off. Why every result, and the figures:
  bench/README.md ("Answer pictures").
- **Off the loop**: matplotlib draws in one worker process (`bot.picture_worker`), started with the
  bot, replaced after a crash, stopped by `close`. **Bounded**: at most `MAX_PENDING` pictures drawn
  or waiting; past that one is skipped, counted, and logged once per `SKIP_SUMMARY_S`.
- **Cached** by what the picture shows: the PNG, its caption and Telegram's `file_id` (a repeated
  answer is re-sent by id); one render and one upload serve all who ask the same at once.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging

from aiogram import Bot
from aiogram.exceptions import TelegramAPIError
from aiogram.types import BufferedInputFile, InputFile
from aiohttp import ClientError
from cachetools import LRUCache

from bot import picture_worker, tasks
from bot.answer_picture import Picture, caption_html, picture_key
from bot.metrics import RENDER_BUCKETS, Timing
from bot.picture_process import Render, RenderFailed, Worker, WorkerDied
from bot.sent_calls import unrecorded
from core.language.answer import Answer

log = logging.getLogger(__name__)

# Drawing in a thread of the bot held the GIL the event loop needs (~12 % of a burst's samples):
# `bench/picture_load.py --users 50`, 4.2 ms of the bot's CPU per update drawing in a thread, 3.4 in
# the worker, 3.0-3.1 with no pictures. Spawned with the first picture (before `start_with_the_bot`),
# the worker took 1-5 s of a crowded host, and pictures were skipped meanwhile.
MAX_PENDING = 4  # different pictures drawn or waiting; more are skipped (≤ 0.6 s of work, ≤ 150 ms each)
RENDER_TIMEOUT_S = 5.0  # a render past this is given up (the text answer has been sent)
CLOSE_WAIT_S = 3.0
"""How long `close` lets the pictures on their way (`send_apart`) arrive before it cancels them: the
last answers before a shutdown still get theirs (a render takes well under a second), and the
shutdown stays inside docker-compose.yml's 15 s stop grace after up to 10 s of draining updates."""
SHARED_UPLOAD_WAIT_S = 3.0  # waiting for another chat's upload of the same picture (~0.2-1 s), at most
CACHE_SIZE = 128  # pictures kept (~100 KB each)
SKIP_SUMMARY_S = 60.0  # skips are logged as one line per this many seconds (a burst skips ~100)


class Pictures:
    """The renderer and its cache; one per process (`PICTURES`), shared by every Dispatcher."""

    def __init__(
        self,
        max_pending: int = MAX_PENDING,
        *,
        render: Render = picture_worker.render,
        timeout_s: float = RENDER_TIMEOUT_S,
        cache_size: int = CACHE_SIZE,
        skip_summary_s: float = SKIP_SUMMARY_S,
    ) -> None:
        picture_worker.reference(render)  # a function the worker can import, or ValueError now
        self.max_pending = max_pending
        self.render = render
        self.timeout_s = timeout_s
        self.cache_size = cache_size
        self.skip_summary_s = skip_summary_s
        self.rendered = 0  # pictures drawn (not taken from the cache nor from another's render)
        self.render_time = Timing(RENDER_BUCKETS)  # seconds of each picture drawn (bot.metrics)
        # Since this process started, per picture asked for in a chat (`send`):
        self.sent = 0
        self.skipped = 0  # the renderer busy (MAX_PENDING): skipped by design, under load
        self.failed = 0  # the render failed or timed out, or Telegram refused the photo
        self._sending: set[asyncio.Task[bool]] = set()  # `send_apart`'s pictures on their way
        self._skipped_unlogged = 0  # skips since the last summary line
        self._summary: asyncio.TimerHandle | None = None  # the summary line due, if any...
        self._summary_loop: asyncio.AbstractEventLoop | None = None  # ...on this event loop
        self.workers_started = 0  # the first worker, and one after each that ended
        self._worker: asyncio.Task[Worker] | None = None  # started, or starting
        self._drawing: dict[str, asyncio.Task[Picture | None]] = {}  # picture key → its render
        self._cache: LRUCache[str, Picture] = LRUCache(cache_size)

    @property
    def pending(self) -> int:
        """Different pictures being drawn or waiting for the worker."""
        return len(self._drawing)

    @property
    def worker_pid(self) -> int | None:
        """The worker process's id, once started; None before (the bot's start, or the first picture
        begins it), after `close`."""
        worker = _started(self._worker) if self._worker is not None else None
        return worker.process.pid if worker is not None and worker.ended is None else None

    async def picture(self, answer: Answer) -> Picture | None:
        """The answer's picture: from the cache, from the render of it in flight, or drawn by the
        worker; None when busy, failed or timed out (logged)."""
        return (await self._picture(answer))[0]

    async def _picture(self, answer: Answer) -> tuple[Picture | None, bool]:
        """`picture`, and whether it was skipped (the renderer busy)."""
        key = picture_key(answer)
        cached = self._cache.get(key)  # a hit is the most recently used
        if cached is not None:
            return cached, False
        drawing = self._drawing.get(key)
        if drawing is None or drawing.get_loop() is not asyncio.get_running_loop():
            if self.pending >= self.max_pending:
                self._note_skip()
                return None, True
            drawing = self._drawing[key] = asyncio.create_task(self._draw(key, answer))
            drawing.add_done_callback(lambda done: self._forget(key, done))
        # shielded: a waiter cancelled (its update given up) leaves the render to the others
        return await asyncio.shield(drawing), False

    async def _draw(self, key: str, answer: Answer) -> Picture | None:
        """The one render of `key` that every request for it awaits; never raises."""
        started = asyncio.get_running_loop().time()
        try:
            # The first picture waits for the worker's start-up, within the same limit (the start
            # goes on, shielded, for the next picture): nobody's picture holds its user for longer.
            async with asyncio.timeout(self.timeout_s):
                worker = await self._worker_now()
                png, lines = await worker.render(answer)
        except TimeoutError:
            log.warning(
                "the answer's picture took over %.0f s: given up, the text answer stands", self.timeout_s
            )
            return None
        except WorkerDied as e:
            log.warning("%s; the text answer stands, the next picture gets a new worker", e)
            return None
        except RenderFailed as e:
            log.error("could not draw the answer's picture; the text answer stands\n%s", e)
            return None
        except Exception:
            log.exception("could not draw the answer's picture; the text answer stands")
            return None
        self.rendered += 1
        self.render_time.observe(asyncio.get_running_loop().time() - started)
        drawn = Picture(png=png, caption=lines)
        if self.cache_size > 0:  # 0: nothing kept (bench/picture_speed.py)
            self._cache[key] = drawn
        return drawn

    def _note_skip(self) -> None:
        """Count a skip; the first of a while schedules the summary line of that while."""
        self.skipped += 1
        self._skipped_unlogged += 1
        loop = asyncio.get_running_loop()
        if self._summary is None or self._summary_loop is not loop:  # none due (on this loop)
            self._summary = loop.call_later(self.skip_summary_s, self.log_skips)
            self._summary_loop = loop

    def log_skips(self) -> None:
        """The summary line of the skips not logged yet (none: nothing)."""
        if self._summary is not None:
            self._summary.cancel()
            self._summary = None
        if self._skipped_unlogged:
            log.warning(
                "%d answer pictures skipped within %.0f s: the renderer was busy (%d renders at a "
                "time; the text answers went out); since start: %d sent, %d skipped, %d failed",
                self._skipped_unlogged, self.skip_summary_s, self.max_pending,
                self.sent, self.skipped, self.failed,
            )  # fmt: skip
            self._skipped_unlogged = 0

    def _forget(self, key: str, done: asyncio.Task[Picture | None]) -> None:
        if self._drawing.get(key) is done:
            del self._drawing[key]

    async def start_worker(self) -> None:
        """Start the worker now rather than with the first picture (raises when it cannot start)."""
        await self._worker_now()

    async def start_with_the_bot(self) -> None:
        """The bot's startup handler (pictures on): the worker's start begun, not waited for (the bot
        polls at once; the first pictures wait for the start in hand instead of beginning one). A
        failed start is logged; the next picture tries again."""
        self._worker_task().add_done_callback(_log_failed_start)

    async def _worker_now(self) -> Worker:
        """The worker, started now if there is none or it has ended (the pictures asked meanwhile wait
        for its start-up, about a second; the loop goes on)."""
        return await asyncio.shield(self._worker_task())

    def _worker_task(self) -> asyncio.Task[Worker]:
        """The start-up task of the usable worker: the one in hand, or one begun now."""
        loop = asyncio.get_running_loop()
        task = self._worker
        if task is not None and task.done():
            worker = _started(task)
            if worker is None or not worker.usable:
                if worker is not None and worker.ended is None:
                    worker.kill()  # alive, but of another event loop: not to be driven from this one
                task = None
        elif task is not None and task.get_loop() is not loop:
            task = None
        if task is None:
            task = self._worker = loop.create_task(Worker.start(self.render))
            self.workers_started += 1
        return task

    def send_apart(self, bot: Bot, chat_id: int, answer: Answer) -> None:
        """`send` in a task of its own, once the answer's update is finished: not one of the
        update's calls (a retry or a takeover replays those; this update is done), awaited by
        `sending`'s waiters, given up by `close` when it has not arrived within CLOSE_WAIT_S."""
        with unrecorded():  # the task copies this context
            task = asyncio.create_task(self.send(bot, chat_id, answer), name=f"picture-{chat_id}")
        self._sending.add(task)
        task.add_done_callback(self._sending.discard)

    @property
    def sending(self) -> int:
        """Pictures started apart from their updates and not sent (or given up) yet."""
        return len(self._sending)

    async def send(self, bot: Bot, chat_id: int, answer: Answer) -> bool:
        """Send the answer's picture to `chat_id`; False when it was not (busy, failed: logged)."""
        picture, skipped = await self._picture(answer)
        if picture is None:
            self.failed += not skipped  # its render failed or timed out (a skip is counted as one)
            return False
        loop = asyncio.get_running_loop()
        file_id = picture.file_ids.get(bot.id)
        first_upload = picture.uploads.get(bot.id)
        if file_id is None and first_upload is not None and first_upload.get_loop() is loop:
            # None: it failed, or takes too long (a 429 waited out), and this one uploads
            with contextlib.suppress(TimeoutError):
                file_id = await asyncio.wait_for(asyncio.shield(first_upload), SHARED_UPLOAD_WAIT_S)
        if file_id is not None:
            return await self._send_photo(bot, chat_id, picture, file_id)
        upload = picture.uploads[bot.id] = loop.create_future()
        try:
            return await self._send_photo(
                bot, chat_id, picture, BufferedInputFile(picture.png, filename="answer.png")
            )
        finally:
            if picture.uploads.get(bot.id) is upload:
                del picture.uploads[bot.id]
            upload.set_result(picture.file_ids.get(bot.id))

    async def _send_photo(self, bot: Bot, chat_id: int, picture: Picture, photo: str | InputFile) -> bool:
        try:
            sent = await bot.send_photo(chat_id, photo, caption=caption_html(picture.caption))
        except (TimeoutError, TelegramAPIError, ClientError) as e:
            log.info("could not send the answer's picture (%s); the text answer stands", e)
            self.failed += 1
            return False
        self.sent += 1
        if sent.photo:
            picture.file_ids[bot.id] = sent.photo[-1].file_id
        return True

    async def close(self) -> None:
        """Stop the worker (the bot's shutdown handler: `dp.shutdown.register(PICTURES.close)`); the
        next picture would start another."""
        self.log_skips()  # the skips of the last while, not to be lost with the process
        loop = asyncio.get_running_loop()
        on_their_way = [sending for sending in self._sending if sending.get_loop() is loop]
        if on_their_way:  # shutting down: what arrives within CLOSE_WAIT_S is sent, the rest not
            _, late = await asyncio.wait(on_their_way, timeout=CLOSE_WAIT_S)
            for sending in late:
                await tasks.cancel(sending)
        task, self._worker = self._worker, None
        if task is None:
            return
        if not task.done() and task.get_loop() is asyncio.get_running_loop():
            await asyncio.wait([task])  # starting: stopped once started
        worker = _started(task) if task.done() else None
        if worker is None:
            return
        if worker.loop is asyncio.get_running_loop():
            await worker.stop()
        else:
            worker.kill()


def _log_failed_start(task: asyncio.Task[Worker]) -> None:
    if not task.cancelled() and (error := task.exception()) is not None:
        log.warning("%s at the bot's start; the first picture tries again", error)


def _started(task: asyncio.Task[Worker]) -> Worker | None:
    """The worker a finished start-up task made; None if it failed (the failure was logged by the
    picture that waited for it)."""
    if not task.done() or task.cancelled() or task.exception() is not None:
        return None
    return task.result()


PICTURES = Pictures()
