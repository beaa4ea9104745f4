"""aiogram FSM storage in our database (the default), or aiogram's RedisStorage when REDIS_URL is set."""

from collections.abc import AsyncIterator, Mapping
from contextlib import asynccontextmanager
from contextvars import ContextVar
from typing import Any

from aiogram.exceptions import DataNotDictLikeError
from aiogram.fsm.state import State
from aiogram.fsm.storage.base import BaseStorage, DefaultKeyBuilder, KeyBuilder, StateType, StorageKey
from aiogram.fsm.storage.redis import RedisStorage
from sqlalchemy import delete, select
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from bot.config import Settings
from bot.db.models import FsmRecord, utc_now
from bot.db.repository import dialect_insert

# The session of the update being handled, set by DbSessionMiddleware. FSM writes join its
# transaction: on SQLite a second connection could not write while that transaction holds the
# write lock (it would wait out busy_timeout and fail), and state stays consistent with the
# rows the handler wrote (both commit or both roll back).
current_update_session: ContextVar[AsyncSession | None] = ContextVar("current_update_session", default=None)


class SqlAlchemyStorage(BaseStorage):
    """FSM state and data as one FsmRecord row per StorageKey; survives restarts of the bot."""

    def __init__(
        self,
        sessionmaker: async_sessionmaker[AsyncSession],
        key_builder: KeyBuilder | None = None,
    ) -> None:
        self.sessionmaker = sessionmaker
        self.key_builder = key_builder or DefaultKeyBuilder(with_destiny=True)

    async def set_state(self, key: StorageKey, state: StateType = None) -> None:
        value = state.state if isinstance(state, State) else state
        await self._write(key, state=value)

    async def get_state(self, key: StorageKey) -> str | None:
        state, _ = await self._read(key)
        return state

    async def set_data(self, key: StorageKey, data: Mapping[str, Any]) -> None:
        if not isinstance(data, dict):
            raise DataNotDictLikeError(f"Data must be a dict or dict-like object, got {type(data).__name__}")
        await self._write(key, data=dict(data))

    async def get_data(self, key: StorageKey) -> dict[str, Any]:
        _, data = await self._read(key)
        return data

    async def close(self) -> None:
        """Nothing to release: the engine belongs to whoever created the sessionmaker."""

    @asynccontextmanager
    async def _session(self) -> AsyncIterator[AsyncSession]:
        session = current_update_session.get()
        if session is not None:
            yield session
            return
        async with self.sessionmaker() as session, session.begin():
            yield session

    async def _read(self, key: StorageKey) -> tuple[str | None, dict[str, Any]]:
        """(state, data) of the key; a key never written has (None, {})."""
        async with self._session() as session:
            row = (
                await session.execute(
                    select(FsmRecord.state, FsmRecord.data).where(
                        FsmRecord.key == self.key_builder.build(key)
                    )
                )
            ).one_or_none()
        return (row.state, dict(row.data)) if row else (None, {})

    async def _write(self, key: StorageKey, **values: Any) -> None:
        """Upsert one field (state or data); a record left with neither is deleted, as aiogram's do."""
        record_key = self.key_builder.build(key)
        now = utc_now()
        async with self._session() as session:
            statement = dialect_insert(session, FsmRecord).values(
                {"key": record_key, "state": None, "data": {}, "updated_at": now, **values}
            )
            await session.execute(
                statement.on_conflict_do_update(
                    index_elements=[FsmRecord.key], set_={**values, "updated_at": now}
                )
            )
            if any(values.values()):
                return
            state, data = await _read_record(session, record_key)
            if state is None and not data:
                await session.execute(delete(FsmRecord).where(FsmRecord.key == record_key))


async def _read_record(session: AsyncSession, record_key: str) -> tuple[str | None, dict[str, Any]]:
    """(state, data) of the record; a key never written has (None, {})."""
    row = (
        await session.execute(select(FsmRecord.state, FsmRecord.data).where(FsmRecord.key == record_key))
    ).one_or_none()
    return (row.state, dict(row.data)) if row else (None, {})


def build_storage(settings: Settings, sessionmaker: async_sessionmaker[AsyncSession]) -> BaseStorage:
    """RedisStorage when REDIS_URL is set (several replicas), else the database storage."""
    if settings.redis_url:
        key_builder = DefaultKeyBuilder(prefix=settings.redis_key_prefix, with_destiny=True)
        return RedisStorage.from_url(settings.redis_url, key_builder=key_builder)
    return SqlAlchemyStorage(sessionmaker, key_builder=DefaultKeyBuilder(with_destiny=True))
