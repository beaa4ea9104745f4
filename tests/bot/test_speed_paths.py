"""The update path's database work stays small: the FSM record is read once per update, however
often handlers ask; written once, with the update's commit; a rolled-back update leaves nothing.
Statements are counted with the statement recorder (tests.bot.statements)."""

from typing import Any

import pytest
from aiogram import Bot, Router
from aiogram.fsm.context import FSMContext
from aiogram.fsm.storage.base import BaseEventIsolation, BaseStorage, DefaultKeyBuilder, StorageKey
from aiogram.types import Message
from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from bot.db.models import FsmRecord
from bot.dispatcher import BotDispatcher
from bot.redis_fsm import PipelinedRedisStorage
from bot.storage import SqlAlchemyStorage
from tests.bot.conftest import wired_dispatcher
from tests.bot.statements import reads_of, recorded, writes_of
from tests.bot.updates import USER_ID, message_update


def dispatcher(
    sessionmaker: async_sessionmaker[AsyncSession],
    storage: BaseStorage,
    isolation: BaseEventIsolation | None = None,
) -> BotDispatcher:
    router = Router()

    @router.message()
    async def chatty(message: Message, state: FSMContext) -> None:
        for n in range(5):  # what the dialog code does: many small reads and writes of one record
            await state.get_state()
            await state.update_data(n=n)
            await state.get_data()
        await state.set_state("Wizard:model")
        if message.text == "fail":
            raise RuntimeError("handler failed")

    return wired_dispatcher(sessionmaker, router, storage=storage, isolation=isolation)


async def record(
    sessionmaker: async_sessionmaker[AsyncSession],
) -> tuple[str | None, dict[str, object]] | None:
    async with sessionmaker() as session:
        row = (await session.execute(select(FsmRecord.state, FsmRecord.data))).one_or_none()
    return (row.state, dict(row.data)) if row else None


async def test_an_update_reads_its_fsm_record_once_and_writes_it_once(
    sessionmaker: async_sessionmaker[AsyncSession],
) -> None:
    storage = SqlAlchemyStorage(sessionmaker)
    bot = Bot("42:TEST")
    try:
        with recorded(sessionmaker) as statements:
            await dispatcher(sessionmaker, storage).feed_update(bot, message_update(1, "hello"))
    finally:
        await bot.session.close()
    assert (reads_of(statements, "fsm_records"), writes_of(statements, "fsm_records")) == (1, 1)
    assert await record(sessionmaker) == ("Wizard:model", {"n": 4})


async def test_a_failed_update_writes_no_fsm_change(sessionmaker: async_sessionmaker[AsyncSession]) -> None:
    storage = SqlAlchemyStorage(sessionmaker)
    bot = Bot("42:TEST")
    try:
        with recorded(sessionmaker) as statements, pytest.raises(RuntimeError):
            await dispatcher(sessionmaker, storage).feed_update(bot, message_update(1, "fail"))
    finally:
        await bot.session.close()
    assert reads_of(statements, "fsm_records") == 1
    assert writes_of(statements, "fsm_records") == 0
    assert await record(sessionmaker) is None


async def test_a_remembering_storage_reads_a_record_once_across_updates(
    sessionmaker: async_sessionmaker[AsyncSession],
) -> None:
    """The embedded database's storage keeps what it committed: later updates of the same user
    read nothing from the database, and find there what the last commit wrote."""
    storage = SqlAlchemyStorage(sessionmaker, remember=True)
    bot = Bot("42:TEST")
    try:
        dp = dispatcher(sessionmaker, storage)
        with recorded(sessionmaker) as statements:
            for update_id in (1, 2, 3):
                await dp.feed_update(bot, message_update(update_id, "hello"))
    finally:
        await bot.session.close()
    assert (reads_of(statements, "fsm_records"), writes_of(statements, "fsm_records")) == (1, 3)
    assert await record(sessionmaker) == ("Wizard:model", {"n": 4})


async def test_a_remembering_storage_forgets_nothing_of_a_rolled_back_update(
    sessionmaker: async_sessionmaker[AsyncSession],
) -> None:
    """A failed update's changes never reach memory: the next update sees the committed record."""
    storage = SqlAlchemyStorage(sessionmaker, remember=True)
    bot = Bot("42:TEST")
    seen: list[dict[str, object]] = []
    router = Router()

    @router.message()
    async def handler(message: Message, state: FSMContext) -> None:
        seen.append(await state.get_data())
        await state.update_data(text=message.text)
        if message.text == "fail":
            raise RuntimeError("handler failed")

    dp = wired_dispatcher(sessionmaker, router, storage=storage)
    try:
        await dp.feed_update(bot, message_update(1, "first"))
        with pytest.raises(RuntimeError):
            await dp.feed_update(bot, message_update(2, "fail"))
        await dp.feed_update(bot, message_update(3, "third"))
    finally:
        await bot.session.close()
    assert seen == [{}, {"text": "first"}, {"text": "first"}]
    assert await record(sessionmaker) == (None, {"text": "third"})


async def test_redis_fsm_costs_an_update_three_round_trips(
    sessionmaker: async_sessionmaker[AsyncSession], redis_url: str, redis_key_prefix: str
) -> None:
    """With REDIS_URL (several replicas) the user's lock, state and data are taken in one round trip,
    the dialog's many reads and writes work on that copy, what changed is written in one round trip
    before the update's last commit, and the lock released in a third (bot.redis_fsm). An update that
    raised writes nothing: its state rolls back with its rows."""
    storage = PipelinedRedisStorage.from_url(
        redis_url, key_builder=DefaultKeyBuilder(prefix=redis_key_prefix, with_destiny=True)
    )
    isolation = storage.create_isolation()
    round_trips: list[str] = []
    real_command, real_pipeline = storage.redis.execute_command, storage.redis.pipeline

    async def command(*args: Any, **kwargs: Any) -> Any:
        round_trips.append(str(args[0]))
        return await real_command(*args, **kwargs)

    def pipeline(*args: Any, **kwargs: Any) -> Any:
        round_trips.append("pipeline")
        return real_pipeline(*args, **kwargs)

    storage.redis.execute_command = command  # type: ignore[method-assign]
    storage.redis.pipeline = pipeline  # type: ignore[method-assign]
    bot = Bot("42:TEST")
    dp = dispatcher(sessionmaker, storage, isolation)
    key = StorageKey(bot_id=bot.id, chat_id=USER_ID, user_id=USER_ID)
    try:
        await dp.feed_update(bot, message_update(1, "hello"))
        assert round_trips == ["pipeline"] * 3
        # Outside an update every call goes to Redis: it has what the handler wrote.
        assert await storage.get_state(key) == "Wizard:model"
        assert await storage.get_data(key) == {"n": 4}
        await storage.set_data(key, {"n": 99})
        with pytest.raises(RuntimeError):
            await dp.feed_update(bot, message_update(2, "fail"))
        assert await storage.get_data(key) == {"n": 99}
        await dp.feed_update(bot, message_update(3, "hello"))  # the lock was released
        assert await storage.get_data(key) == {"n": 4}
    finally:
        await bot.session.close()
        await storage.redis.delete(*[k async for k in storage.redis.scan_iter(f"{redis_key_prefix}:*")])
        await storage.close()


async def test_setting_a_record_to_what_it_is_writes_nothing(
    sessionmaker: async_sessionmaker[AsyncSession],
) -> None:
    """A step shown again in the same message sets the same data: no FSM write, so an update that
    ends on its Telegram call has nothing left to commit but its done mark."""
    storage = SqlAlchemyStorage(sessionmaker, remember=True)
    bot = Bot("42:TEST")
    router = Router()

    @router.message()
    async def same_again(message: Message, state: FSMContext) -> None:
        await state.set_state("Wizard:model")
        await state.set_data({"n": 4})

    dp = wired_dispatcher(sessionmaker, router, storage=storage)
    try:
        with recorded(sessionmaker) as statements:
            await dp.feed_update(bot, message_update(1, "hello"))
            assert writes_of(statements, "fsm_records") == 1
            await dp.feed_update(bot, message_update(2, "hello"))
    finally:
        await bot.session.close()
    assert writes_of(statements, "fsm_records") == 1
    assert await record(sessionmaker) == ("Wizard:model", {"n": 4})


async def test_a_context_kept_past_its_update_reads_and_writes_redis_itself(
    sessionmaker: async_sessionmaker[AsyncSession], redis_url: str, redis_key_prefix: str
) -> None:
    """The update's FSMContext is bound to the record its lock yielded (bot.redis_fsm.RecordStorage);
    a task the update started that still holds the context once the lock is released (a picture sent
    apart) reads and writes Redis, not the record nobody will write any more."""
    storage = PipelinedRedisStorage.from_url(
        redis_url, key_builder=DefaultKeyBuilder(prefix=redis_key_prefix, with_destiny=True)
    )
    kept: list[FSMContext] = []
    router = Router()

    @router.message()
    async def keep(message: Message, state: FSMContext, redis_record: object) -> None:
        assert redis_record is not None  # the record is in the handler data
        await state.update_data(step="in the update")
        kept.append(state)

    dp = wired_dispatcher(sessionmaker, router, storage=storage, isolation=storage.create_isolation())
    bot = Bot("42:TEST")
    key = StorageKey(bot_id=bot.id, chat_id=USER_ID, user_id=USER_ID)
    try:
        await dp.feed_update(bot, message_update(1, "hello"))
        assert await storage.get_data(key) == {"step": "in the update"}
        await kept[0].update_data(step="after it")  # the lock is released: straight to Redis
        assert await storage.get_data(key) == {"step": "after it"}
    finally:
        await bot.session.close()
        await storage.redis.delete(*[k async for k in storage.redis.scan_iter(f"{redis_key_prefix}:*")])
        await storage.close()
