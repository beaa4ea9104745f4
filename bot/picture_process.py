"""The bot's end of the picture worker process (`bot.picture_worker` is the worker's): `Worker`
starts it and waits for its ready frame, sends it answers and matches its replies to them, and stops
it. A worker that ends with renders in hand fails them with `WorkerDied`; a render that raises in it
fails with `RenderFailed`. Used by ``bot.pictures``, which starts one per event loop and replaces it."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import pickle
import signal
import sys
from collections.abc import Callable
from pathlib import Path

from bot import picture_worker
from core.language.answer import Answer

log = logging.getLogger(__name__)

WORKER_START_TIMEOUT_S = 20.0  # its start took 0.5-0.9 s idle, 3-5 s on a loaded 2-core host
STOP_GRACE_S = 2.0  # at shutdown, a worker still drawing after this is killed (nobody awaits it)

Render = Callable[[Answer], tuple[bytes, list[str]]]
"""What the worker runs: the answer → its PNG and caption lines (a module-level function: the worker
imports it by name)."""


class WorkerDied(Exception):
    """The worker process ended (crashed, killed) with renders in hand."""


class RenderFailed(Exception):
    """The render raised in the worker (its traceback is the message)."""


class Worker:
    """One worker process (`bot.picture_worker`) and the renders sent to it, on one event loop."""

    def __init__(self, process: asyncio.subprocess.Process) -> None:
        self.process = process
        self.loop = asyncio.get_running_loop()
        self.waiting: dict[int, asyncio.Future[tuple[bytes, list[str]]]] = {}
        self.sent = 0
        self.ended: str | None = None  # why it is of no more use (it exited, its stream broke)
        self.reader = asyncio.create_task(self._read())

    @classmethod
    async def start(cls, render: Render) -> Worker:
        """A new worker, once it has imported matplotlib and loaded its font (its ready frame)."""
        # The same code as the bot's: the worker searches the bot's import path first.
        paths = [str(Path(p or ".").resolve()) for p in sys.path]
        env = os.environ | {"PYTHONPATH": os.pathsep.join(paths)}
        process = await asyncio.create_subprocess_exec(
            sys.executable, "-m", picture_worker.__name__, str(picture_worker.NICENESS),
            picture_worker.reference(render),
            stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE, env=env,
        )  # fmt: skip
        assert process.stdout is not None
        try:
            async with asyncio.timeout(WORKER_START_TIMEOUT_S):
                header = await process.stdout.readexactly(picture_worker.HEADER_BYTES)
                pickle.loads(await process.stdout.readexactly(int.from_bytes(header, "big")))
        except BaseException as e:
            with contextlib.suppress(ProcessLookupError):
                process.kill()
            code = await process.wait()
            if isinstance(e, asyncio.IncompleteReadError | TimeoutError):
                why = "did not start in time" if isinstance(e, TimeoutError) else f"exited at start ({code})"
                raise WorkerDied(f"the picture worker {why}") from e
            raise
        return cls(process)

    @property
    def usable(self) -> bool:
        return self.ended is None and self.loop is asyncio.get_running_loop()

    async def render(self, answer: Answer) -> tuple[bytes, list[str]]:
        """The worker's drawing of `answer`; WorkerDied, RenderFailed. Cancelled (timed out): its
        reply, when it comes, is dropped."""
        assert self.process.stdin is not None
        if self.ended is not None:
            raise WorkerDied(self.ended)
        self.sent += 1
        ident = self.sent
        reply = self.waiting[ident] = self.loop.create_future()
        try:
            self.process.stdin.write(picture_worker.frame((ident, answer)))
            try:
                await self.process.stdin.drain()
            except ConnectionError as e:  # its stdin is closed: it has exited
                raise WorkerDied(f"the picture worker's input is closed ({e})") from e
            return await reply
        finally:
            del self.waiting[ident]

    async def _read(self) -> None:
        assert self.process.stdout is not None
        stream = self.process.stdout
        try:
            while True:
                header = await stream.readexactly(picture_worker.HEADER_BYTES)
                body = await stream.readexactly(int.from_bytes(header, "big"))
                ident, ok, payload = pickle.loads(body)
                reply = self.waiting.get(ident)
                if reply is None or reply.done():
                    continue  # given up (timed out) meanwhile
                if ok:
                    reply.set_result(payload)
                else:
                    reply.set_exception(RenderFailed(payload))
        except (asyncio.IncompleteReadError, ConnectionError):
            code = await self.process.wait()
            self.ended = f"the picture worker exited ({code})"
        except Exception as e:  # a frame that does not unpickle: the stream is out of step
            self.ended = f"the picture worker's replies are unreadable ({type(e).__name__})"
            self.kill()
        finally:
            self.ended = self.ended or "the picture worker was stopped"
            for reply in self.waiting.values():
                if not reply.done():
                    reply.set_exception(WorkerDied(self.ended))

    def kill(self) -> None:
        with contextlib.suppress(ProcessLookupError):
            os.kill(self.process.pid, signal.SIGKILL)

    async def stop(self) -> None:
        """EOF on its stdin (it exits after the render in hand); killed after `STOP_GRACE_S`."""
        assert self.process.stdin is not None
        self.process.stdin.close()
        try:
            await asyncio.wait_for(self.process.wait(), STOP_GRACE_S)
        except TimeoutError:
            log.warning("the picture worker did not stop within %.0f s: killed", STOP_GRACE_S)
            self.kill()
            await self.process.wait()
        await self.reader
