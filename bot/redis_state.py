"""The user's dialog state in Redis as an update sees it (bot.redis_fsm), without importing Redis:
bot.db.middleware writes it before the update's last commit (`flush_state`)."""

from __future__ import annotations

from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Any


@dataclass
class UserRecord:
    """The state and data of the update's user, read with the user's lock; ``changed``: which of the
    two the update changed and Redis does not have yet."""

    storage: Any  # the bot.redis_fsm.PipelinedRedisStorage it belongs to
    state_key: str
    data_key: str
    state: str | None
    data: dict[str, Any]
    changed: set[str] = field(default_factory=set)
    closed: bool = False  # the lock released: a task the update spawned reads and writes Redis itself

    def write(self, pipe: Any) -> None:
        """Queue the changed fields' writes on a Redis pipeline (as aiogram's RedisStorage writes them:
        an empty field is deleted, a set one expires after the storage's TTL), and forget them."""
        if "state" in self.changed:
            if self.state is None:
                pipe.delete(self.state_key)
            else:
                pipe.set(self.state_key, self.state, ex=self.storage.state_ttl)
        if "data" in self.changed:
            if not self.data:
                pipe.delete(self.data_key)
            else:
                pipe.set(self.data_key, self.storage.json_dumps(self.data), ex=self.storage.data_ttl)
        self.changed.clear()


current_record: ContextVar[UserRecord | None] = ContextVar("redis_user_record", default=None)


async def flush_state() -> None:
    """Write what the update changed of its user's state, in one round trip (nothing when nothing
    changed or the state is not in Redis)."""
    record = current_record.get()
    if record is None or not record.changed:
        return
    async with record.storage.redis.pipeline(transaction=False) as pipe:
        record.write(pipe)
        await pipe.execute()
