"""The database FSM storage behaves like aiogram's own storages and survives a restart.

TestStorages reproduces aiogram's storage test cases (aiogram/aiogram, tests/test_fsm/storage/
test_storages.py, with the `storage_key` fixture of its tests/conftest.py: chat -42, user 42),
parametrised here over our SqlAlchemyStorage on SQLite and PostgreSQL and aiogram's RedisStorage on
the real Redis, the storage used when REDIS_URL is set.
"""

from collections.abc import AsyncIterator
from typing import TypedDict

import pytest
from aiogram.exceptions import DataNotDictLikeError
from aiogram.fsm.state import State, StatesGroup
from aiogram.fsm.storage.base import BaseStorage, DefaultKeyBuilder, StorageKey
from aiogram.fsm.storage.redis import RedisStorage
from sqlalchemy import func, select

from bot.config import Settings
from bot.db.engine import create_engine, create_sessionmaker
from bot.db.group_commit import write_works
from bot.db.models import FsmRecord
from bot.db.work import UpdateWork
from bot.redis_fsm import PipelinedRedisStorage
from bot.redis_state import UserRecord
from bot.storage import SqlAlchemyStorage, build_storage

BOT_ID, CHAT_ID, USER_ID = 42, -42, 42


@pytest.fixture
def storage_key() -> StorageKey:
    return StorageKey(bot_id=BOT_ID, chat_id=CHAT_ID, user_id=USER_ID)


async def sql_storage(url: str) -> AsyncIterator[SqlAlchemyStorage]:
    engine = create_engine(url)
    storage = SqlAlchemyStorage(create_sessionmaker(engine))
    try:
        yield storage
    finally:
        await storage.close()
        await engine.dispose()


@pytest.fixture
async def sqlite_storage(migrated_sqlite_url: str) -> AsyncIterator[SqlAlchemyStorage]:
    async for storage in sql_storage(migrated_sqlite_url):
        yield storage


@pytest.fixture
async def postgres_storage(migrated_postgres_url: str) -> AsyncIterator[SqlAlchemyStorage]:
    async for storage in sql_storage(migrated_postgres_url):
        yield storage


@pytest.fixture
async def redis_storage(redis_url: str, redis_key_prefix: str) -> AsyncIterator[RedisStorage]:
    key_builder = DefaultKeyBuilder(prefix=redis_key_prefix, with_destiny=True)
    # The bot's RedisStorage (reads remembered within an update): outside one, aiogram's own.
    storage = PipelinedRedisStorage.from_url(redis_url, key_builder=key_builder)
    assert isinstance(storage, RedisStorage)
    try:
        yield storage
    finally:
        await storage.close()


@pytest.fixture(params=["sqlite_storage", "postgres_storage", "redis_storage"])
def storage(request: pytest.FixtureRequest) -> BaseStorage:
    return request.getfixturevalue(request.param)


@pytest.fixture(params=["sqlite_storage", "postgres_storage"])
def database_storage(request: pytest.FixtureRequest) -> SqlAlchemyStorage:
    return request.getfixturevalue(request.param)


class TestStorages:
    """aiogram's cases, unchanged in substance."""

    async def test_set_state(self, storage: BaseStorage, storage_key: StorageKey) -> None:
        assert await storage.get_state(key=storage_key) is None

        await storage.set_state(key=storage_key, state="state")
        assert await storage.get_state(key=storage_key) == "state"
        await storage.set_state(key=storage_key, state=None)
        assert await storage.get_state(key=storage_key) is None

    async def test_set_data(self, storage: BaseStorage, storage_key: StorageKey) -> None:
        assert await storage.get_data(key=storage_key) == {}
        assert await storage.get_value(storage_key=storage_key, dict_key="foo") is None
        assert await storage.get_value(storage_key=storage_key, dict_key="foo", default="baz") == "baz"

        await storage.set_data(key=storage_key, data={"foo": "bar"})
        assert await storage.get_data(key=storage_key) == {"foo": "bar"}
        assert await storage.get_value(storage_key=storage_key, dict_key="foo") == "bar"
        assert await storage.get_value(storage_key=storage_key, dict_key="foo", default="baz") == "bar"

        await storage.set_data(key=storage_key, data={})
        assert await storage.get_data(key=storage_key) == {}
        assert await storage.get_value(storage_key=storage_key, dict_key="foo") is None
        assert await storage.get_value(storage_key=storage_key, dict_key="foo", default="baz") == "baz"

        class CustomTypedDict(TypedDict, total=False):
            foo: str
            bar: str

        await storage.set_data(key=storage_key, data=CustomTypedDict(foo="bar", bar="baz"))
        assert await storage.get_data(key=storage_key) == {"foo": "bar", "bar": "baz"}
        assert await storage.get_value(storage_key=storage_key, dict_key="foo") == "bar"
        assert await storage.get_value(storage_key=storage_key, dict_key="foo", default="baz") == "bar"

        with pytest.raises(DataNotDictLikeError):
            await storage.set_data(key=storage_key, data=())  # type: ignore[arg-type]

    async def test_update_data(self, storage: BaseStorage, storage_key: StorageKey) -> None:
        assert await storage.get_data(key=storage_key) == {}
        assert await storage.update_data(key=storage_key, data={"foo": "bar"}) == {"foo": "bar"}
        assert await storage.update_data(key=storage_key, data={}) == {"foo": "bar"}
        assert await storage.get_data(key=storage_key) == {"foo": "bar"}
        assert await storage.update_data(key=storage_key, data={"baz": "spam"}) == {
            "foo": "bar",
            "baz": "spam",
        }
        assert await storage.get_data(key=storage_key) == {"foo": "bar", "baz": "spam"}
        assert await storage.update_data(key=storage_key, data={"baz": "test"}) == {
            "foo": "bar",
            "baz": "test",
        }
        assert await storage.get_data(key=storage_key) == {"foo": "bar", "baz": "test"}


class Wizard(StatesGroup):
    model = State()


async def test_state_and_data_are_independent(storage: BaseStorage, storage_key: StorageKey) -> None:
    await storage.set_state(storage_key, Wizard.model)
    await storage.set_data(storage_key, {"task": "inference", "nested": {"context": 32768}})
    await storage.set_state(storage_key, None)
    assert await storage.get_data(storage_key) == {"task": "inference", "nested": {"context": 32768}}
    await storage.set_state(storage_key, Wizard.model)
    await storage.set_data(storage_key, {})
    assert await storage.get_state(storage_key) == "Wizard:model"


async def test_data_read_or_written_is_the_callers_own(storage: BaseStorage, storage_key: StorageKey) -> None:
    """Changing what was written, or what was read, in place changes nothing stored: in the storage,
    and as one update sees it (its record kept in memory while it runs)."""
    if isinstance(storage, SqlAlchemyStorage):
        views = [storage, storage.bound(UpdateWork(1, 1, storage.sessionmaker))]
    else:
        assert isinstance(storage, PipelinedRedisStorage)
        record = UserRecord(
            storage, storage.key_builder.build(storage_key, "state"),
            storage.key_builder.build(storage_key, "data"), state=None, data={},
        )  # fmt: skip
        views = [storage, storage.bound(record)]
    for view in views:
        written = {"answers": {"task": "inference", "steps": ["model", {"context": 32768}]}, "n": 1.5}
        await view.set_data(storage_key, written)
        written["answers"]["steps"][1]["context"] = 0  # type: ignore[index]
        read = await view.get_data(storage_key)
        assert read == {"answers": {"task": "inference", "steps": ["model", {"context": 32768}]}, "n": 1.5}
        read["answers"]["steps"].append("precision")
        assert (await view.get_data(storage_key))["answers"]["steps"] == ["model", {"context": 32768}]


async def test_keys_do_not_share_records(storage: BaseStorage, storage_key: StorageKey) -> None:
    other_user = StorageKey(bot_id=BOT_ID, chat_id=CHAT_ID, user_id=USER_ID + 1)
    other_destiny = StorageKey(bot_id=BOT_ID, chat_id=CHAT_ID, user_id=USER_ID, destiny="language")
    await storage.set_state(storage_key, "mine")
    await storage.set_data(other_destiny, {"lang": "en"})
    assert await storage.get_state(other_user) is None
    assert await storage.get_state(other_destiny) is None
    assert await storage.get_data(storage_key) == {}
    assert await storage.get_data(other_destiny) == {"lang": "en"}


async def count_records(storage: SqlAlchemyStorage) -> int:
    async with storage.sessionmaker() as session:
        return int(await session.scalar(select(func.count()).select_from(FsmRecord)) or 0)


async def test_finished_dialog_leaves_no_record(
    database_storage: SqlAlchemyStorage, storage_key: StorageKey
) -> None:
    await database_storage.set_state(storage_key, "state")
    await database_storage.set_data(storage_key, {"foo": "bar"})
    await database_storage.set_state(storage_key, None)
    assert await count_records(database_storage) == 1
    await database_storage.set_data(storage_key, {})
    assert await count_records(database_storage) == 0


async def test_restart_mid_dialog_loses_nothing(migrated_sqlite_url: str, storage_key: StorageKey) -> None:
    before_restart = create_engine(migrated_sqlite_url)
    storage = SqlAlchemyStorage(create_sessionmaker(before_restart))
    await storage.set_state(storage_key, Wizard.model)
    await storage.update_data(storage_key, {"task": "finetune", "method": "lora"})
    await storage.close()
    await before_restart.dispose()

    after_restart = create_engine(migrated_sqlite_url)
    try:
        restored = SqlAlchemyStorage(create_sessionmaker(after_restart))
        assert await restored.get_state(storage_key) == "Wizard:model"
        assert await restored.get_data(storage_key) == {"task": "finetune", "method": "lora"}
    finally:
        await after_restart.dispose()


async def test_an_updates_writes_wait_in_its_work(migrated_sqlite_url: str, storage_key: StorageKey) -> None:
    """Inside an update the storage is bound to the update's work: what it writes is seen by the
    update and written by nobody until the work commits (bot.db.group_commit), so a failed update,
    whose work is dropped, leaves nothing."""
    engine = create_engine(migrated_sqlite_url)
    sessionmaker = create_sessionmaker(engine)
    storage = SqlAlchemyStorage(sessionmaker)
    try:
        failed = storage.bound(UpdateWork(1, 1, sessionmaker))
        await failed.set_data(storage_key, {"step": "model"})
        await failed.set_state(storage_key, Wizard.model)
        assert await failed.get_state(storage_key) == "Wizard:model"
        assert await storage.get_state(storage_key) is None
        assert await storage.get_data(storage_key) == {}
        work = UpdateWork(1, 2, sessionmaker)
        await storage.bound(work).set_state(storage_key, Wizard.model)
        assert await storage.get_state(storage_key) is None
        async with sessionmaker() as session, session.begin():
            await write_works(session, [work])
        assert await storage.get_state(storage_key) == "Wizard:model"
    finally:
        await engine.dispose()


async def test_build_storage_picks_redis_only_when_configured(sqlite_url: str) -> None:
    engine = create_engine(sqlite_url)
    sessionmaker = create_sessionmaker(engine)
    try:
        in_database = build_storage(Settings(_env_file=None, redis_url=None), sessionmaker)
        in_redis = build_storage(
            Settings(_env_file=None, redis_url="redis://redis.invalid:6379/0"), sessionmaker
        )
        assert isinstance(in_database, SqlAlchemyStorage)
        assert isinstance(in_redis, RedisStorage)
        for storage in (in_database, in_redis):
            key_builder = storage.key_builder
            assert isinstance(key_builder, DefaultKeyBuilder) and key_builder.with_destiny
        await in_redis.close()
    finally:
        await engine.dispose()
