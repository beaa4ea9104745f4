"""Redis commands of concurrent updates in shared round trips (the replicas' group commit for Redis).

An update's Redis work is a few short pipelines: its user's lock with their record, the journal of a
sent call, the state written before its commit, the lock's release after it (bot.redis_fsm,
bot.sent_calls). Under a crowd many updates queue such pipelines at the same moment (a group commit
ends, a burst of webhooks arrives), and each round trip costs the replica a socket write, a wake-up
and redis-py's pipeline set-up. `SharedPipeline` sends what is queued as one pipeline, one at a time:
what queues while one is on its way goes with the next. Each caller's commands stay together and in
order, and it gets its own replies, or the first error among them; a failed round trip fails every
caller in it, as its own pipeline would have.
"""

from __future__ import annotations

import asyncio
from typing import Any

Command = tuple[str, tuple[Any, ...], dict[str, Any]]


class Commands:
    """The commands of one caller's pipeline, queued (the subset of redis-py's pipeline used here)."""

    def __init__(self) -> None:
        self.queued: list[Command] = []

    def _queue(self, name: str, *args: Any, **kwargs: Any) -> None:
        self.queued.append((name, args, kwargs))

    def set(self, name: str, value: Any, **kwargs: Any) -> None:
        self._queue("set", name, value, **kwargs)

    def get(self, name: str) -> None:
        self._queue("get", name)

    def delete(self, *names: str) -> None:
        self._queue("delete", *names)

    def eval(self, script: str, numkeys: int, *keys_and_args: Any) -> None:
        self._queue("eval", script, numkeys, *keys_and_args)

    def rpush(self, name: str, *values: Any) -> None:
        self._queue("rpush", name, *values)

    def expire(self, name: str, seconds: int) -> None:
        self._queue("expire", name, seconds)

    def pexpire(self, name: str, milliseconds: int) -> None:
        self._queue("pexpire", name, milliseconds)


class SharedPipeline:
    """One Redis pipeline at a time for every caller of this process (see the module's docstring)."""

    def __init__(self, redis: Any) -> None:
        self.redis = redis
        self._waiting: list[tuple[list[Command], asyncio.Future[list[Any]]]] = []
        self._sender: asyncio.Task[None] | None = None

    async def execute(self, commands: Commands) -> list[Any]:
        """The replies to ``commands``, in their order, once the round trip that carries them is back."""
        if not commands.queued:
            return []
        future: asyncio.Future[list[Any]] = asyncio.get_running_loop().create_future()
        self._waiting.append((commands.queued, future))
        if self._sender is None:
            self._sender = asyncio.create_task(self._send())
        return await future

    async def _send(self) -> None:
        try:
            while self._waiting:
                batch, self._waiting = self._waiting, []
                await self._round_trip(batch)
        finally:
            self._sender = None

    async def _round_trip(self, batch: list[tuple[list[Command], asyncio.Future[list[Any]]]]) -> None:
        try:
            async with self.redis.pipeline(transaction=False) as pipe:
                for queued, _ in batch:
                    for name, args, kwargs in queued:
                        getattr(pipe, name)(*args, **kwargs)
                replies = await pipe.execute(raise_on_error=False)
        except BaseException as e:
            for _, future in batch:
                if not future.done():
                    future.set_exception(e if isinstance(e, Exception) else ConnectionError(repr(e)))
            if not isinstance(e, Exception):
                raise
            return
        start = 0
        for queued, future in batch:
            mine = replies[start : start + len(queued)]
            start += len(queued)
            if future.done():  # its caller was cancelled
                continue
            error = next((reply for reply in mine if isinstance(reply, Exception)), None)
            if error is not None:
                future.set_exception(error)
            else:
                future.set_result(mine)
