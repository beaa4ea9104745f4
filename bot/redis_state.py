"""The user's dialog state in Redis as an update sees it (bot.redis_fsm), without importing Redis:
taken with the user's lock, it is in the handler data (`RECORD_KEY`), the update's FSMContext reads
and writes it, and bot.db.middleware writes it before the update's last commit (`flush_state`).

In a private chat (or inline mode) the record also holds the user's row of the users table as the
last update holding the same lock committed it (`kept_user_row`), so a known user's update reads no
row from the database. Only those updates write it (`keep_user_row`, after their commit, with the
lock's release): every change of the row that is not "what Telegram says" or ``last_seen_at`` (the
language, the currency) is made by them, and the others are compared on every update. An update
from a group reads the row from the database, as without Redis."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from datetime import timedelta
from typing import Any

from bot.redis_batch import Commands

USER_ROW_TTL = timedelta(days=2)
"""How long a user's row stays in Redis after the last update that wrote it (the database keeps it)."""


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
    user_key: str | None = None
    """Where the user's row is kept (None: not a private chat's record, the row is not kept)."""
    user_row: str | None = None
    """The kept row, as JSON (`keep_user_row`); None: none kept."""

    def write(self, pipe: Commands) -> None:
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
        if "user" in self.changed and self.user_key is not None and self.user_row is not None:
            pipe.set(self.user_key, self.user_row, ex=USER_ROW_TTL)
        self.changed.clear()


RECORD_KEY = "redis_record"
"""Handler data key of the update's `UserRecord` (bot.storage.DeferredStateMiddleware puts it there)."""


async def flush_state(record: UserRecord | None) -> None:
    """Write what the update changed of its user's state, in one round trip shared with other
    updates' (bot.redis_batch; nothing when nothing changed or the state is not in Redis: ``record``
    None)."""
    if record is None or not record.changed:
        return
    commands = Commands()
    record.write(commands)
    await record.storage.shared.execute(commands)


def keeps_user_row(record: UserRecord | None) -> bool:
    """Whether the update's record keeps its user's row (a private chat's, with the FSM in Redis)."""
    return record is not None and record.user_key is not None


def kept_user_row(record: UserRecord | None, telegram_id: int) -> dict[str, Any] | None:
    """The user's row kept in the update's record (its values by column; datetimes as ISO text), or
    None: not kept, or the update's record is not the user's private one."""
    if record is None or record.user_key is None or record.user_row is None:
        return None
    try:
        row = json.loads(record.user_row)
    except ValueError:  # not ours (written by hand, cut short): read from the database instead
        return None
    return row if isinstance(row, dict) and row.get("telegram_id") == telegram_id else None


def keep_user_row(record: UserRecord | None, telegram_id: int, row: dict[str, Any]) -> None:
    """Keep the row as the update just committed it (written with the lock's release); nothing when
    it is what the record holds already, or the record cannot keep it."""
    if record is None or record.user_key is None or record.closed:
        return
    text = json.dumps(row, default=str, separators=(",", ":"))
    if text != record.user_row and row.get("telegram_id") == telegram_id:
        record.user_row = text
        record.changed.add("user")
