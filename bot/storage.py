"""aiogram FSM storage in our database (the default), or aiogram's RedisStorage when REDIS_URL is set.

Within an update the handlers' FSMContext is bound to the update's unit of work (`UpdateStorage`,
made by bot.db.middleware): the record is read once (from memory where one process owns the
database), later reads come from the work, and writes change the work's copy. Nothing is written
before the handler returned: the record commits with the update's done mark (bot.db.work), and a
failed update's changes are dropped. Outside an update each call is its own transaction.
"""

import asyncio
import json
from collections import OrderedDict
from collections.abc import AsyncGenerator, AsyncIterator, Awaitable, Callable, Hashable, Iterable, Mapping
from contextlib import asynccontextmanager
from functools import partial
from typing import Any

from aiogram.exceptions import DataNotDictLikeError
from aiogram.fsm.context import FSMContext
from aiogram.fsm.middleware import FSMContextMiddleware
from aiogram.fsm.state import State
from aiogram.fsm.storage.base import (
    BaseEventIsolation,
    BaseStorage,
    DefaultKeyBuilder,
    KeyBuilder,
    StateType,
    StorageKey,
)
from aiogram.types import TelegramObject
from sqlalchemy import select
from sqlalchemy.engine import make_url
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from bot.config import Settings
from bot.db.group_commit import store_records
from bot.db.models import FsmRecord
from bot.db.work import Record, UpdateWork, copy_data
from bot.redis_state import RECORD_KEY, UserRecord


class SqlAlchemyStorage(BaseStorage):
    """FSM state and data as one FsmRecord row per StorageKey; survives restarts of the bot.

    ``remember`` (one process owns the database: the embedded SQLite) keeps each record as its last
    commit left it (`Committed`), so a user's next update reads it from memory, not from the
    database. Safe only there, as for the users' rows (bot.db.middleware.KnownUsers): every change
    of a record is made by this process, and memory takes a change only once its commit succeeded.
    """

    def __init__(
        self,
        sessionmaker: async_sessionmaker[AsyncSession],
        key_builder: KeyBuilder | None = None,
        *,
        remember: bool = False,
    ) -> None:
        self.sessionmaker = sessionmaker
        self.key_builder = key_builder or DefaultKeyBuilder(with_destiny=True)
        self.committed = Committed() if remember else None

    async def set_state(self, key: StorageKey, state: StateType = None) -> None:
        value = state.state if isinstance(state, State) else state
        await self._write(key, state=value)

    async def get_state(self, key: StorageKey) -> str | None:
        state, _ = await self._read(key)
        return state

    async def set_data(self, key: StorageKey, data: Mapping[str, Any]) -> None:
        if not isinstance(data, dict):
            raise DataNotDictLikeError(f"Data must be a dict or dict-like object, got {type(data).__name__}")
        await self._write(key, data=copy_data(data))

    async def get_data(self, key: StorageKey) -> dict[str, Any]:
        _, data = await self._read(key)
        return copy_data(data)

    def bound(self, work: UpdateWork) -> "UpdateStorage":
        """This storage as one update sees it: its reads and writes go through ``work``."""
        return UpdateStorage(self, work)

    async def prefetch(self, session: AsyncSession, keys: Iterable[StorageKey]) -> Callable[[], None] | None:
        """Read the records of these keys that memory does not keep (``remember``), in one statement
        of ``session`` (the inbox's receipt: bot.db.arrivals); returns what puts them into memory,
        to call once that session committed (None: nothing to). A key never written is kept as
        such, so the first update of a new user reads nothing. A record committed meanwhile by an
        update stays as that commit left it: memory takes only what it does not have."""
        committed = self.committed
        if committed is None:
            return None
        wanted = {record_key for key in keys if (record_key := self.key_builder.build(key)) not in committed}
        if not wanted:
            return None
        rows = await session.execute(
            select(FsmRecord.key, FsmRecord.state, FsmRecord.data).where(FsmRecord.key.in_(sorted(wanted)))
        )
        found: dict[str, Record] = {row.key: (row.state, dict(row.data)) for row in rows}

        def remember() -> None:
            for record_key in wanted:
                committed.put_if_absent(record_key, found.get(record_key, (None, {})))

        return remember

    async def close(self) -> None:
        """Nothing to release: the engine belongs to whoever created the sessionmaker."""

    @asynccontextmanager
    async def _own_session(self) -> AsyncIterator[AsyncSession]:
        async with self.sessionmaker() as session, session.begin():
            yield session

    async def _read(self, key: StorageKey) -> Record:
        """(state, data) of the key, in a transaction of its own. Not to be changed in place."""
        async with self._own_session() as own:
            return await self.select(own, self.key_builder.build(key))

    async def select(self, session: AsyncSession, record_key: str) -> Record:
        """The record from memory (``remember``), else read in ``session``."""
        if self.committed is not None and (known := self.committed.get(record_key)) is not None:
            return known
        row = (
            await session.execute(select(FsmRecord.state, FsmRecord.data).where(FsmRecord.key == record_key))
        ).one_or_none()
        record = (row.state, dict(row.data)) if row else (None, {})
        if self.committed is not None:
            self.committed.put(record_key, record)
        return record

    async def _write(self, key: StorageKey, **values: Any) -> None:
        """Change one field (state or data) in a transaction of its own; a record left with neither
        is deleted, as aiogram's are."""
        record_key = self.key_builder.build(key)
        async with self._own_session() as own:
            state, data = await self.select(own, record_key)
            record = (values.get("state", state), values.get("data", data))
            await own.run_sync(store_records, [(record_key, record)])
        if self.committed is not None:
            self.committed.put(record_key, record)


class UpdateStorage(SqlAlchemyStorage):
    """`SqlAlchemyStorage` bound to one update's `UpdateWork`: a record is read once (from memory, else
    in a session of its own), then kept in the work; writes change the work's copy and mark it for
    the update's commit (bot.db.group_commit), which puts it into memory once on disk."""

    def __init__(self, storage: SqlAlchemyStorage, work: UpdateWork) -> None:
        self.storage = storage
        self.sessionmaker = storage.sessionmaker
        self.key_builder = storage.key_builder
        self.committed = storage.committed
        self.work = work
        if storage.committed is not None:
            # Not a bound method: the work would hold this storage, which holds the work, a cycle
            # that kept both (and the update's data around them) until a garbage collection.
            work.committed.append(partial(_remember, storage.committed, work.fsm))

    async def set_state(self, key: StorageKey, state: StateType = None) -> None:
        await self._write(key, state=state.state if isinstance(state, State) else state)

    async def get_state(self, key: StorageKey) -> str | None:
        return (await self._read(key))[0]

    async def set_data(self, key: StorageKey, data: Mapping[str, Any]) -> None:
        if not isinstance(data, dict):
            raise DataNotDictLikeError(f"Data must be a dict or dict-like object, got {type(data).__name__}")
        await self._write(key, data=copy_data(data))

    async def get_data(self, key: StorageKey) -> dict[str, Any]:
        return copy_data((await self._read(key))[1])

    async def close(self) -> None:
        """The storage outlives the update."""

    async def _read(self, key: StorageKey) -> Record:
        record_key = self.key_builder.build(key)
        records = self.work.records
        if record_key not in records:
            committed = self.committed
            known = committed.get(record_key) if committed is not None else None
            if known is None:  # not kept in memory: read in a session of its own
                known = await self.work.read(self.storage.select, record_key)
            records[record_key] = known
        return records[record_key]

    async def _write(self, key: StorageKey, **values: Any) -> None:
        state, data = await self._read(key)
        record = (values.get("state", state), values.get("data", data))
        if record == (state, data):  # nothing to write (a step shown again in the same message)
            return
        record_key = self.key_builder.build(key)
        self.work.records[record_key] = self.work.fsm[record_key] = record


class Committed:
    """Records as their last commit left them, the least recently used dropped past `MAX`. Each is
    kept as its JSON text (what the database keeps of it too): a read decodes a copy of its own."""

    MAX = 20_000
    """A finished dialog's record takes ~0.6 KB in memory as JSON, its key included (~3.7 KB as
    dicts): ~12 MB at most, for the users of the last hours; an older user's next update reads the
    record from the database again."""

    def __init__(self) -> None:
        self._records: OrderedDict[str, tuple[str | None, str]] = OrderedDict()

    def get(self, record_key: str) -> Record | None:
        kept = self._records.get(record_key)
        if kept is None:
            return None
        self._records.move_to_end(record_key)
        state, data = kept
        return state, json.loads(data)

    def __contains__(self, record_key: object) -> bool:
        return record_key in self._records

    def put_if_absent(self, record_key: str, record: Record) -> None:
        if record_key not in self._records:
            self.put(record_key, record)

    def put(self, record_key: str, record: Record) -> None:
        """The record as committed (the database took its data as JSON, so it encodes)."""
        state, data = record
        self._records[record_key] = (state, json.dumps(data, separators=(",", ":")) if data else EMPTY)
        self._records.move_to_end(record_key)
        if len(self._records) > self.MAX:
            self._records.popitem(last=False)


def _remember(committed: Committed, changed: dict[str, Record]) -> None:
    """An update's work is on disk: memory takes the records it changed."""
    for record_key, record in changed.items():
        committed.put(record_key, record)


EMPTY = "{}"


class UserLocks(BaseEventIsolation):
    """One update per user at a time in this process, as aiogram's ``SimpleEventIsolation``, which
    keeps every user's lock forever: here a user's lock exists only while an update of theirs holds
    or waits for it (``len``: how many users that is)."""

    def __init__(self) -> None:
        self._locks: dict[Hashable, tuple[asyncio.Lock, int]] = {}  # the lock, its holder and waiters

    def __len__(self) -> int:
        return len(self._locks)

    @asynccontextmanager
    async def lock(self, key: StorageKey) -> AsyncGenerator[None, None]:
        lock, users = self._locks.get(key) or (asyncio.Lock(), 0)
        self._locks[key] = (lock, users + 1)
        try:
            async with lock:
                yield
        finally:
            held, users = self._locks.get(key) or (None, 0)
            if held is lock:  # else `close` forgot it meanwhile
                if users == 1:
                    del self._locks[key]
                else:
                    self._locks[key] = (lock, users - 1)

    async def close(self) -> None:
        self._locks.clear()


class DeferredStateMiddleware(FSMContextMiddleware):
    """aiogram's FSM middleware (the context, the user's lock) without its own read of the state:
    ``raw_state`` is read by DbSessionMiddleware through the update's work (`UpdateStorage`), the
    update's one read of the record (from memory where the process owns the database). With the FSM
    in Redis the lock yields the user's record (bot.redis_state): it goes into the handler data, and
    the context is bound to it (bot.redis_fsm.RecordStorage)."""

    async def __call__(
        self,
        handler: Callable[[TelegramObject, dict[str, Any]], Awaitable[Any]],
        event: TelegramObject,
        data: dict[str, Any],
    ) -> Any:
        context = self.resolve_event_context(data["bot"], data)
        data["fsm_storage"] = self.storage
        if context:
            async with self.events_isolation.lock(key=context.key) as held:
                if isinstance(held, UserRecord):  # the FSM in Redis: the user's record came with the lock
                    data[RECORD_KEY] = held
                    context = FSMContext(storage=held.storage.bound(held), key=context.key)
                data["state"] = context
                return await handler(event, data)
        return await handler(event, data)


def build_storage(settings: Settings, sessionmaker: async_sessionmaker[AsyncSession]) -> BaseStorage:
    """RedisStorage when REDIS_URL is set (several replicas), else the database storage."""
    if settings.redis_url:
        from bot.redis_fsm import PipelinedRedisStorage  # imported only then: polling never loads Redis

        key_builder = DefaultKeyBuilder(prefix=settings.redis_key_prefix, with_destiny=True)
        return PipelinedRedisStorage.from_url(settings.redis_url, key_builder=key_builder)
    # The embedded SQLite is this process's alone: its records can be kept in memory.
    remember = make_url(settings.database_url).get_backend_name() == "sqlite"
    return SqlAlchemyStorage(
        sessionmaker, key_builder=DefaultKeyBuilder(with_destiny=True), remember=remember
    )
