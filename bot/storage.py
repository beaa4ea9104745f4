"""aiogram FSM storage in our database (the default), or aiogram's RedisStorage when REDIS_URL is set.

Within an update (`current_update_session` set) the FSM record is read from the database once and
kept in the session: later reads come from there, writes change that copy and are written in one
statement just before the session commits (the commit before a Telegram call, the update's last one),
so they stay in the update's transaction: state and the rows the handler wrote commit, or roll back,
together. A rollback forgets the copy.
"""

from collections import OrderedDict
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable, Mapping
from contextlib import asynccontextmanager
from contextvars import ContextVar
from copy import deepcopy
from functools import partial
from typing import Any, TypeVar, cast

from aiogram.exceptions import DataNotDictLikeError
from aiogram.fsm.middleware import FSMContextMiddleware
from aiogram.fsm.state import State
from aiogram.fsm.storage.base import BaseStorage, DefaultKeyBuilder, KeyBuilder, StateType, StorageKey
from aiogram.types import TelegramObject
from sqlalchemy import delete, event, select
from sqlalchemy.engine import make_url
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker
from sqlalchemy.orm import Session, SessionTransaction

from bot.config import Settings
from bot.db import repository, upserts
from bot.db.group_commit import FinalWrites
from bot.db.models import FsmRecord, utc_now

# The session of the update being handled, set by DbSessionMiddleware. FSM writes join its
# transaction: on SQLite a second connection could not write while that transaction holds the
# write lock (it would wait out busy_timeout and fail), and state stays consistent with the
# rows the handler wrote (both commit or both roll back).
current_update_session: ContextVar[AsyncSession | None] = ContextVar("current_update_session", default=None)

Record = tuple[str | None, dict[str, Any]]
_RECORDS = "fsm_records"  # session.info: record key -> (state, data) as this session's transaction sees it
_CHANGED = "fsm_changed"  # session.info: record keys written since the last commit
_COMMITTING = "fsm_committing"  # session.info: record keys written by the commit under way
_PARSED = "fsm_parsed"  # session.info: (record key, parse) -> (the data parsed, what it gave)
T = TypeVar("T")


class SqlAlchemyStorage(BaseStorage):
    """FSM state and data as one FsmRecord row per StorageKey; survives restarts of the bot.

    ``database_reads`` and ``database_writes`` count the statements it issued (for tests and
    benchmarks): an update reads its record once, however often handlers ask.

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
        self.database_reads = 0
        self.database_writes = 0
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
        await self._write(key, data=deepcopy(data))

    async def get_data(self, key: StorageKey) -> dict[str, Any]:
        _, data = await self._read(key)
        return deepcopy(data)

    async def parsed(self, key: StorageKey, parse: Callable[[dict[str, Any]], T]) -> T:
        """``parse(data)`` of the key's data, parsed once per version of it within an update: the
        dialog code reads its state (`bot.dialog_state.DialogState.load`) five times or more per
        button press, and a copy and a validation each time were 5-8 % of the bot's CPU under a
        crowd. The value is shared by the update's readers: it must not be changed (DialogState is
        frozen). ``parse`` gets a copy of the data of its own. Outside an update: parsed each time."""
        session = current_update_session.get()
        if session is None:
            return parse(await self.get_data(key))
        _, data = await self._read(key)
        memo: dict[tuple[str, Any], tuple[Any, Any]] = session.info.setdefault(_PARSED, {})
        slot = (self.key_builder.build(key), parse)
        known = memo.get(slot)
        if known is not None and known[0] is data:  # the same version: written data is a new copy
            return cast(T, known[1])
        value = parse(deepcopy(data))
        memo[slot] = (data, value)
        return value

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
        self.database_reads += 1
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
        """(state, data) of the key; a key never written has (None, {}). Not to be changed in place."""
        record_key = self.key_builder.build(key)
        session = current_update_session.get()
        if session is None:
            async with self._own_session() as own:
                return await self._select(own, record_key)
        records: dict[str, Record] = session.info.setdefault(_RECORDS, {})
        if record_key not in records:
            records[record_key] = await self._select(session, record_key)
        return records[record_key]

    async def _select(self, session: AsyncSession, record_key: str) -> Record:
        if self.committed is not None and (known := self.committed.get(record_key)) is not None:
            return known
        self.database_reads += 1
        row = (
            await session.execute(select(FsmRecord.state, FsmRecord.data).where(FsmRecord.key == record_key))
        ).one_or_none()
        record = (row.state, dict(row.data)) if row else (None, {})
        if self.committed is not None:
            self.committed.put(record_key, record)
        return record

    async def _write(self, key: StorageKey, **values: Any) -> None:
        """Change one field (state or data); a record left with neither is deleted, as aiogram's are."""
        record_key = self.key_builder.build(key)
        session = current_update_session.get()
        if session is None:
            async with self._own_session() as own:
                state, data = await self._select(own, record_key)
                record = (values.get("state", state), values.get("data", data))
                self.database_writes += 1
                await own.run_sync(store_records, [(record_key, record)])
            if self.committed is not None:
                self.committed.put(record_key, record)
            return
        state, data = await self._read(key)
        record = (values.get("state", state), values.get("data", data))
        if record == (state, data):  # nothing to write (a step shown again in the same message)
            return
        session.info[_RECORDS][record_key] = record
        changed: dict[str, SqlAlchemyStorage] = session.info.setdefault(_CHANGED, {})
        changed[record_key] = self


def has_unwritten_changes(session: AsyncSession) -> bool:
    """Whether FSM changes wait for the session's next commit (which writes them)."""
    return bool(session.info.get(_CHANGED))


def must_commit(session: AsyncSession) -> bool:
    """Whether an update's session has to commit before a Telegram call (or a wait) and at its end:
    a transaction is open (a row written or read: on SQLite it holds the write lock), or FSM changes
    wait for it and the session's writes are not deferred to the group commit
    (bot.db.repository.defer_dialog_writes, bot.db.group_commit)."""
    if session.in_transaction():
        return True
    return not repository.defers_dialog_writes(session) and has_unwritten_changes(session)


def take_unwritten_changes(session: AsyncSession, writes: FinalWrites) -> None:
    """The FSM changes waiting for the session's commit go into ``writes`` instead (a group commit,
    bot.db.group_commit): stored in the group's transaction, remembered once it committed."""
    changed: dict[str, SqlAlchemyStorage] | None = session.info.pop(_CHANGED, None)
    if not changed:
        return
    records: dict[str, Record] = session.info[_RECORDS]
    batch = writes.batches.setdefault(store_records, [])
    for record_key, storage in changed.items():
        record = records[record_key]
        storage.database_writes += 1
        batch.append((record_key, record))
        if storage.committed is not None:
            writes.committed.append(partial(storage.committed.put, record_key, record))


def store_records(session: Session, records: list[tuple[str, Record]]) -> None:
    """Write these records: one DELETE for those left with neither state nor data (as aiogram
    deletes them), one executemany upsert for the others."""
    gone = [record_key for record_key, (state, data) in records if state is None and not data]
    if gone:
        session.execute(delete(FsmRecord).where(FsmRecord.key.in_(gone)))
    now = utc_now()
    rows = [
        upserts.params(FSM_COLUMNS, [{"key": key, "state": state, "data": data, "updated_at": now}])
        for key, (state, data) in records
        if state is not None or data
    ]
    if rows:
        session.execute(upserts.upsert(upserts.FSM, FSM_COLUMNS, ("key",), set_=FSM_SET), rows)


FSM_COLUMNS = ("key", "state", "data", "updated_at")
FSM_SET = {column: f"excluded.{column}" for column in FSM_COLUMNS[1:]}


class Committed:
    """Records as their last commit left them, the least recently used dropped past `MAX`."""

    MAX = 20_000
    """A finished dialog's record takes ~3.7 KB in memory: ~75 MB at most, for the users of the last
    hours; an older user's next update reads the record from the database again."""

    def __init__(self) -> None:
        self._records: OrderedDict[str, Record] = OrderedDict()

    def get(self, record_key: str) -> Record | None:
        record = self._records.get(record_key)
        if record is not None:
            self._records.move_to_end(record_key)
        return record

    def __contains__(self, record_key: object) -> bool:
        return record_key in self._records

    def put_if_absent(self, record_key: str, record: Record) -> None:
        if record_key not in self._records:
            self.put(record_key, record)

    def put(self, record_key: str, record: Record) -> None:
        """Never changed in place afterwards: writes replace the tuple, reads copy the data."""
        self._records[record_key] = record
        self._records.move_to_end(record_key)
        if len(self._records) > self.MAX:
            self._records.popitem(last=False)


@event.listens_for(Session, "before_commit")
def _write_changed_records(session: Session) -> None:
    """The FSM records an update changed go into its transaction right before it commits."""
    changed: dict[str, SqlAlchemyStorage] | None = session.info.pop(_CHANGED, None)
    for record_key, storage in (changed or {}).items():
        storage.database_writes += 1
        store_records(session, [(record_key, session.info[_RECORDS][record_key])])
    if changed:
        session.info[_COMMITTING] = changed


@event.listens_for(Session, "after_commit")
def _remember_committed(session: Session) -> None:
    """Committed: what memory keeps of the records is now what the database has."""
    committing: dict[str, SqlAlchemyStorage] | None = session.info.pop(_COMMITTING, None)
    for record_key, storage in (committing or {}).items():
        if storage.committed is not None:
            storage.committed.put(record_key, session.info[_RECORDS][record_key])


@event.listens_for(Session, "after_soft_rollback")
def _forget_records(session: Session, previous_transaction: SessionTransaction) -> None:
    """Rolled back: what the session knew of the records may no longer be true."""
    session.info.pop(_CHANGED, None)
    session.info.pop(_COMMITTING, None)
    session.info.pop(_RECORDS, None)
    session.info.pop(_PARSED, None)


class DeferredStateMiddleware(FSMContextMiddleware):
    """aiogram's FSM middleware (the context, the user's lock) without its own read of the state:
    ``raw_state`` is read by DbSessionMiddleware inside the update's session, so it is the update's
    one read of the record and needs no pool connection of its own."""

    async def __call__(
        self,
        handler: Callable[[TelegramObject, dict[str, Any]], Awaitable[Any]],
        event: TelegramObject,
        data: dict[str, Any],
    ) -> Any:
        context = self.resolve_event_context(data["bot"], data)
        data["fsm_storage"] = self.storage
        if context:
            async with self.events_isolation.lock(key=context.key):
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
