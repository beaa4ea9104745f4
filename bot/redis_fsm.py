"""Dialog state in Redis (the webhook replicas): aiogram's RedisStorage and RedisEventIsolation,
with an update's Redis work in two or three pipelines, sent with other updates' (bot.redis_batch).

- The user's lock is taken in this process first (an ``asyncio.Lock`` per user), then in Redis, in
  one pipeline with the reads of the user's state and data (`PipelinedRedisIsolation.lock`).
- In a private chat the same pipeline reads the user's row of the users table (bot.redis_state).
- The lock yields that copy (`UserRecord`); bot.storage.DeferredStateMiddleware puts it in the
  handler data and binds the update's FSMContext to it (`PipelinedRedisStorage.bound`). Within the
  update the state and data are read from and written to the copy; what changed is written in one
  pipeline right before the update's work commits (`flush_state`, called by bot.db.middleware), and
  the lock is released after it. An update that raised writes nothing.
- Outside an update every call goes to Redis. The contract: docs/persistence.md.
"""

from __future__ import annotations

import asyncio
import secrets
from collections.abc import AsyncGenerator, Mapping
from contextlib import asynccontextmanager
from typing import Any, cast

from aiogram.exceptions import DataNotDictLikeError
from aiogram.fsm.state import State
from aiogram.fsm.storage.base import BaseStorage, KeyBuilder, StateType, StorageKey
from aiogram.fsm.storage.redis import RedisEventIsolation, RedisStorage

from bot.db.work import copy_data
from bot.redis_batch import Commands, SharedPipeline
from bot.redis_state import UserRecord, flush_state

__all__ = ["PipelinedRedisIsolation", "PipelinedRedisStorage", "RecordStorage", "flush_state"]

LOCK_TTL_MS = 60_000
"""How long a replica's lock on a user outlives the replica (aiogram's DEFAULT_REDIS_LOCK_KWARGS)."""
POLL_FIRST_S = 0.002
POLL_MAX_S = 0.05
"""A lock held by another replica is polled from every 2 ms up to every 50 ms (an update holds it for
tens of milliseconds; redis-py's default, 100 ms, was a user's wait under a crowd)."""
_RELEASE = "if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('del', KEYS[1]) else return 0 end"


class PipelinedRedisStorage(RedisStorage):
    """aiogram's RedisStorage; within an update, seen through `bound` (the record taken with the lock).
    The updates' pipelines go through `shared` (bot.redis_batch)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.shared = SharedPipeline(self.redis)

    def bound(self, record: UserRecord) -> RecordStorage:
        """This storage as the update holding ``record`` sees it."""
        return RecordStorage(self, record)

    def create_isolation(self, **kwargs: Any) -> PipelinedRedisIsolation:
        """``ttl_ms``: how long a lock outlives its replica unless renewed (default aiogram's 60 s)."""
        return PipelinedRedisIsolation(self, **kwargs)


class RecordStorage(BaseStorage):
    """`PipelinedRedisStorage` bound to one update's `UserRecord`: its user's state and data are read
    from and written to the record; another key, or any key once the lock is released (a task the
    update started, still running), goes to Redis."""

    def __init__(self, storage: PipelinedRedisStorage, record: UserRecord) -> None:
        self.storage = storage
        self.record = record

    def _mine(self, key: StorageKey) -> bool:
        record = self.record
        return not record.closed and record.state_key == self.storage.key_builder.build(key, "state")

    async def get_state(self, key: StorageKey) -> str | None:
        return self.record.state if self._mine(key) else await self.storage.get_state(key)

    async def set_state(self, key: StorageKey, state: StateType = None) -> None:
        if not self._mine(key):
            await self.storage.set_state(key, state)
            return
        self.record.state = state.state if isinstance(state, State) else state
        self.record.changed.add("state")

    async def get_data(self, key: StorageKey) -> dict[str, Any]:
        return copy_data(self.record.data) if self._mine(key) else await self.storage.get_data(key)

    async def set_data(self, key: StorageKey, data: Mapping[str, Any]) -> None:
        if not self._mine(key):
            await self.storage.set_data(key, data)
            return
        if not isinstance(data, dict):
            raise DataNotDictLikeError(f"Data must be a dict or dict-like object, got {type(data).__name__}")
        self.record.data = copy_data(data)
        self.record.changed.add("data")

    async def close(self) -> None:
        """The storage outlives the update."""


class PipelinedRedisIsolation(RedisEventIsolation):
    """One update per user at a time across replicas; the lock also reads the user's record.

    A lock expires after ``ttl_ms`` unless renewed: the replicas set it to the inbox lease and the
    inbox heartbeat calls `renew` for every lock this process holds (one round trip), so a live
    replica keeps its users' locks while their updates run and a dead one's go with its leases
    (bot.db.inbox: another replica takes its updates over within seconds)."""

    def __init__(self, storage: PipelinedRedisStorage, ttl_ms: int = LOCK_TTL_MS) -> None:
        super().__init__(redis=storage.redis, key_builder=storage.key_builder)
        self.storage = storage
        self.ttl_ms = ttl_ms
        self._local: dict[str, tuple[asyncio.Lock, int]] = {}
        self.held: set[str] = set()  # the Redis keys of the locks this process holds now

    @asynccontextmanager
    async def lock(self, key: StorageKey) -> AsyncGenerator[UserRecord, None]:  # type: ignore[override]
        """The user's lock, yielding their record (aiogram's isolations yield nothing)."""
        builder: KeyBuilder = self.key_builder
        lock_key = builder.build(key, "lock")
        async with self._in_process(lock_key):
            token = secrets.token_hex(8)
            record = await self._acquire(lock_key, token, key)
            self.held.add(lock_key)
            failed = True
            try:
                yield record
                failed = False
            finally:
                self.held.discard(lock_key)
                record.closed = True
                if failed:
                    record.changed.clear()  # rolled back with the update's database writes
                await self._release(lock_key, token, record)

    @asynccontextmanager
    async def _in_process(self, lock_key: str) -> AsyncGenerator[None, None]:
        lock, users = self._local.get(lock_key) or (asyncio.Lock(), 0)
        self._local[lock_key] = (lock, users + 1)
        try:
            async with lock:
                yield
        finally:
            lock, users = self._local[lock_key]
            if users == 1:
                del self._local[lock_key]
            else:
                self._local[lock_key] = (lock, users - 1)

    async def _acquire(self, lock_key: str, token: str, key: StorageKey) -> UserRecord:
        storage = self.storage
        state_key, data_key = storage.key_builder.build(key, "state"), storage.key_builder.build(key, "data")
        pause = POLL_FIRST_S
        # A private chat's (or inline mode's) lock is the user's own: their row is kept with it.
        user_key = f"{storage.key_builder.build(key)}:user" if key.chat_id == key.user_id else None
        while True:
            commands = Commands()
            commands.set(lock_key, token, nx=True, px=self.ttl_ms)
            commands.get(state_key)
            commands.get(data_key)
            if user_key is not None:
                commands.get(user_key)
            taken, state, data, *user_row = await storage.shared.execute(commands)
            if taken:
                break
            await asyncio.sleep(pause)
            pause = min(pause * 2, POLL_MAX_S)
        return UserRecord(
            storage=storage, state_key=state_key, data_key=data_key,
            state=_text(state), data=cast(dict[str, Any], storage.json_loads(_text(data))) if data else {},
            user_key=user_key, user_row=_text(user_row[0]) if user_row else None,
        )  # fmt: skip

    async def _release(self, lock_key: str, token: str, record: UserRecord) -> None:
        """What is left to write (normally nothing: `flush_state` wrote it) and the release, at once."""
        commands = Commands()
        record.write(commands)
        commands.eval(_RELEASE, 1, lock_key, token)
        await self.storage.shared.execute(commands)

    async def renew(self) -> None:
        """Push back the expiry of every lock held here (one round trip; the inbox heartbeat)."""
        if not self.held:
            return
        commands = Commands()
        for lock_key in self.held:
            commands.pexpire(lock_key, self.ttl_ms)
        await self.storage.shared.execute(commands)

    async def close(self) -> None:
        pass


def _text(value: bytes | str | None) -> str | None:
    return value.decode("utf-8") if isinstance(value, bytes) else value
