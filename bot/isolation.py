"""Per-user locks across replicas that a dead replica does not hold for long.

aiogram's RedisEventIsolation takes a Redis lock per user for the update's handling, expiring after
60 s (DEFAULT_REDIS_LOCK_KWARGS): a replica killed mid-update left its users locked for a minute,
and the replica taking its updates over (bot.db.inbox, within seconds) waited that long. Here a lock
expires after `bot.db.inbox.LEASE`, and the inbox heartbeat renews every lock this replica holds in
one round trip (`renew`), as it renews the updates' leases: a live replica keeps its locks for as
long as its updates run, a dead one's go with its leases.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator
from contextlib import asynccontextmanager
from typing import Any

from aiogram.fsm.storage.base import StorageKey
from aiogram.fsm.storage.redis import KeyBuilder, RedisEventIsolation
from redis.asyncio.lock import Lock


class RenewedRedisIsolation(RedisEventIsolation):
    def __init__(self, redis: Any, key_builder: KeyBuilder, ttl_s: float) -> None:
        # A lock that expired unrenewed (a loop stalled past ttl_s) is logged at release by redis-py,
        # not raised: the update is done by then.
        super().__init__(redis, key_builder, lock_kwargs={"timeout": ttl_s, "raise_on_release_error": False})
        self.ttl_ms = int(ttl_s * 1000)
        self.held: dict[str, int] = {}  # the Redis keys of the locks this process holds (how many times)

    @asynccontextmanager
    async def lock(self, key: StorageKey) -> AsyncGenerator[None, None]:
        redis_key = self.key_builder.build(key, "lock")
        lock = self.redis.lock(name=redis_key, **self.lock_kwargs, lock_class=Lock)
        async with lock:
            self.held[redis_key] = self.held.get(redis_key, 0) + 1
            try:
                yield None
            finally:
                if self.held[redis_key] <= 1:
                    del self.held[redis_key]
                else:
                    self.held[redis_key] -= 1

    async def renew(self) -> None:
        """Push back the expiry of every lock held here (one round trip)."""
        if not self.held:
            return
        async with self.redis.pipeline(transaction=False) as pipe:
            for redis_key in self.held:
                pipe.pexpire(redis_key, self.ttl_ms)
            await pipe.execute()
