"""DbSessionMiddleware in a real Dispatcher: one transaction per update, duplicates dropped."""

from collections.abc import AsyncIterator
from datetime import UTC, datetime
from typing import Any

import pytest
from aiogram import Bot, Dispatcher, F, Router
from aiogram.filters import Command, CommandStart
from aiogram.fsm.context import FSMContext
from aiogram.fsm.state import State, StatesGroup
from aiogram.types import Chat, Message, Update
from sqlalchemy import event, func, select
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from bot.db.dialogs import list_dialogs, save_answers, start_dialog
from bot.db.engine import create_engine, create_sessionmaker
from bot.db.middleware import DbSessionMiddleware, deep_link_source
from bot.db.models import User as DbUser
from bot.db.users import get_user, set_language
from bot.db.work import UpdateWork
from bot.storage import SqlAlchemyStorage
from tests.bot.updates import USER_ID, message_update


class Wizard(StatesGroup):
    model = State()


class Fixture:
    def __init__(
        self, sessionmaker: async_sessionmaker[AsyncSession], *, single_process: bool = False
    ) -> None:
        self.sessionmaker = sessionmaker
        self.seen: list[dict[str, Any]] = []
        self.fail_next = False
        router = Router()
        router.message(CommandStart())(self.start)
        router.message(Command("lang"))(self.language)
        router.message(Wizard.model, F.text)(self.model)
        router.channel_post()(self.channel_post)
        self.dispatcher = Dispatcher(storage=SqlAlchemyStorage(sessionmaker))
        middleware = DbSessionMiddleware(sessionmaker, single_process=single_process)
        self.dispatcher.update.outer_middleware(middleware)
        self.dispatcher.include_router(router)

    async def start(
        self, message: Message, state: FSMContext, work: UpdateWork, db_user: DbUser | None,
        deep_link_source: str | None,
    ) -> None:  # fmt: skip
        self.seen.append({"db_user": db_user, "source": deep_link_source})
        assert db_user is not None
        dialog_id = await start_dialog(work, telegram_id=db_user.telegram_id, task="inference")
        await state.set_state(Wizard.model)
        await state.update_data(dialog_id=dialog_id)
        if self.fail_next:
            self.fail_next = False
            raise RuntimeError("handler failed")

    async def language(self, message: Message, work: UpdateWork, db_user: DbUser | None) -> None:
        """`/lang ru`: as bot.i18n does it (the row in the database, the object in place)."""
        assert db_user is not None and message.text is not None
        self.seen.append({"db_user": db_user, "language": db_user.language})
        lang = message.text.split()[1]
        if self.fail_next:  # fails having changed its copy of the row, not the database's
            self.fail_next = False
            db_user.language = lang
            raise RuntimeError("handler failed")
        await work.write(set_language, db_user.telegram_id, lang)
        db_user.language = lang

    async def channel_post(self, message: Message, db_user: DbUser | None) -> None:
        self.seen.append({"db_user": db_user, "source": None})

    async def model(self, message: Message, state: FSMContext, work: UpdateWork) -> None:
        data = await state.get_data()
        await save_answers(work, data["dialog_id"], {"model": message.text})


@pytest.fixture
async def bot_fixture(migrated_sqlite_url: str) -> AsyncIterator[tuple[Fixture, Bot]]:
    engine = create_engine(migrated_sqlite_url)
    bot = Bot("42:TEST")
    try:
        yield Fixture(create_sessionmaker(engine)), bot
    finally:
        await bot.session.close()
        await engine.dispose()


async def dialogs(fixture: Fixture) -> list[tuple[str, dict[str, Any]]]:
    async with fixture.sessionmaker() as session:
        return [(dialog.status, dialog.answers) for dialog in await list_dialogs(session, USER_ID)]


async def test_the_same_update_twice_creates_one_dialog(bot_fixture: tuple[Fixture, Bot]) -> None:
    fixture, bot = bot_fixture
    await fixture.dispatcher.feed_update(bot, message_update(1, "/start"))
    await fixture.dispatcher.feed_update(bot, message_update(1, "/start"))
    assert len(fixture.seen) == 1
    assert await dialogs(fixture) == [("started", {})]


async def test_state_and_rows_written_in_one_update_are_both_kept(bot_fixture: tuple[Fixture, Bot]) -> None:
    fixture, bot = bot_fixture
    await fixture.dispatcher.feed_update(bot, message_update(1, "/start"))
    await fixture.dispatcher.feed_update(bot, message_update(2, "llama-3-8b"))
    assert await dialogs(fixture) == [("started", {"model": "llama-3-8b"})]


async def test_a_failed_update_leaves_nothing_but_its_user_and_is_handled_on_redelivery(
    migrated_sqlite_url: str, bot: Bot
) -> None:
    """The embedded mode: the dialog row and the state naming it wait for the update's commit, so a
    failed /start leaves neither. The user's row is first contact, written before the handler runs
    (at receipt in the app), and stays."""
    engine = create_engine(migrated_sqlite_url)
    try:
        fixture = Fixture(create_sessionmaker(engine), single_process=True)
        fixture.fail_next = True
        with pytest.raises(RuntimeError):
            await fixture.dispatcher.feed_update(bot, message_update(1, "/start promo"))
        assert await dialogs(fixture) == []
        async with fixture.sessionmaker() as session:
            user = await get_user(session, USER_ID)
        assert user is not None and user.source == "promo"
        await fixture.dispatcher.feed_update(bot, message_update(1, "/start promo"))
        assert await dialogs(fixture) == [("started", {})]
    finally:
        await engine.dispose()


async def test_the_user_and_the_deep_link_source_are_recorded(bot_fixture: tuple[Fixture, Bot]) -> None:
    fixture, bot = bot_fixture
    await fixture.dispatcher.feed_update(bot, message_update(1, "/start habr_2024"))
    await fixture.dispatcher.feed_update(bot, message_update(2, "/start vk"))
    assert [seen["source"] for seen in fixture.seen] == ["habr_2024", "vk"]
    async with fixture.sessionmaker() as session:
        user = await get_user(session, USER_ID)
    assert user is not None
    assert (user.source, user.username, user.language_from_telegram) == ("habr_2024", "ann", "en")
    assert fixture.seen[0]["db_user"].telegram_id == USER_ID


@pytest.mark.parametrize(
    ("text", "source"),
    [
        ("/start", None),
        ("/start abc-DEF_123", "abc-DEF_123"),
        ("/start@gpufit_bot promo", "promo"),
        ("/start two words", None),
        ("/start <script>", None),
        ("/start " + "x" * 65, None),
        ("/started promo", None),
        ("hello promo", None),
    ],
)
def test_deep_link_source_accepts_only_telegram_payloads(text: str, source: str | None) -> None:
    assert deep_link_source(message_update(1, text)) == source


async def test_an_update_without_a_user_is_handled_once_and_stores_no_user(
    bot_fixture: tuple[Fixture, Bot],
) -> None:
    fixture, bot = bot_fixture
    channel = Chat(id=-100500, type="channel")
    post = Message(message_id=1, date=datetime.now(UTC), chat=channel, text="/start promo")
    for _ in range(2):
        await fixture.dispatcher.feed_update(bot, Update(update_id=9, channel_post=post))
    assert fixture.seen == [{"db_user": None, "source": None}]
    async with fixture.sessionmaker() as session:
        assert await session.scalar(select(func.count()).select_from(DbUser)) == 0


@pytest.fixture
async def single_process(migrated_sqlite_url: str) -> AsyncIterator[tuple[Fixture, Bot, list[str]]]:
    """The embedded-database configuration (one process owns it), with the statements it runs."""
    engine = create_engine(migrated_sqlite_url)
    statements: list[str] = []
    event.listen(engine.sync_engine, "before_cursor_execute", lambda *args: statements.append(args[2]))
    bot = Bot("42:TEST")
    try:
        yield Fixture(create_sessionmaker(engine), single_process=True), bot, statements
    finally:
        await bot.session.close()
        await engine.dispose()


def reads_of_users(statements: list[str]) -> int:
    return sum(s.lstrip().startswith("SELECT") and "FROM users" in s for s in statements)


async def test_one_process_reads_a_known_user_from_memory(
    single_process: tuple[Fixture, Bot, list[str]],
) -> None:
    fixture, bot, statements = single_process
    await fixture.dispatcher.feed_update(bot, message_update(1, "/start"))
    statements.clear()
    await fixture.dispatcher.feed_update(bot, message_update(2, "/lang ru"))
    await fixture.dispatcher.feed_update(bot, message_update(3, "/lang en"))
    assert reads_of_users(statements) == 0
    assert [seen.get("language") for seen in fixture.seen[1:]] == [None, "ru"]


async def test_one_process_forgets_the_row_of_a_failed_update(
    single_process: tuple[Fixture, Bot, list[str]],
) -> None:
    fixture, bot, _ = single_process
    await fixture.dispatcher.feed_update(bot, message_update(1, "/start"))
    fixture.fail_next = True
    with pytest.raises(RuntimeError):
        await fixture.dispatcher.feed_update(bot, message_update(2, "/lang ru"))  # not written
    await fixture.dispatcher.feed_update(bot, message_update(3, "/lang en"))
    assert fixture.seen[-1]["language"] is None  # as in the database, not the failed update's "ru"
