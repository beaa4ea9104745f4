"""End-to-end harness: the real bot (bot.app.create_app) polling the tgsandbox fake Telegram over HTTP,
on a real SQLite file per test (a migrated template copied, so each test starts from an empty schema)."""

from __future__ import annotations

import asyncio
import functools
import re
import shutil
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from fluent.runtime import FluentBundle, FluentResource
from pydantic import SecretStr
from sqlalchemy import select

from bot import dialog
from bot.app import App, create_app
from bot.config import Settings
from bot.db.engine import create_engine, create_sessionmaker, migrate
from bot.db.models import DialogSession, User
from bot.i18n import LOCALES_DIR
from core.catalogue.load import DATA_DIR
from core.language import words as core_texts
from tgsandbox import ChatMessage, Sandbox, SandboxUser

QUIET_S = 0.08  # the sandbox waits this long after the bot's last call before a step returns
# The in-process harness also tells the sandbox which updates the bot has in hand (`busy_while`): a
# step returns once its reply came and they are done, so the quiet period is only a margin. A long one
# made each step wait while the bot kept calling another chat (a failing sales chat: 10 s per step).
HARNESS_QUIET_S = 0.01
REPLY_TIMEOUT_S = 10.0


def url_of(path: Path) -> str:
    return f"sqlite+aiosqlite:///{path}"


@pytest.fixture(scope="session")
def template_db(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    path = tmp_path_factory.mktemp("template") / "bot.sqlite3"
    asyncio.run(migrate(url_of(path)))
    yield path


def bot_busy(app: App) -> bool:
    """Updates in hand, or an answer's picture on its way (sent apart from its update)."""
    return bool(app.inbox_dp.handling) or dialog.PICTURES.sending > 0


@dataclass
class Harness:
    """A sandbox and our bot polling it; `restart()` swaps in a new Bot+Dispatcher on the same file."""

    sandbox: Sandbox
    settings: Settings
    app: App | None = None
    polling: asyncio.Task[Any] | None = None
    _next_user: list[int] = field(default_factory=lambda: [5000])

    @property
    def db_url(self) -> str:
        return self.settings.database_url

    async def start(self) -> None:
        self.app = await create_app(self.settings, bot=self.sandbox.make_bot())
        # The driver's waits also wait for the updates the bot has in hand (and their final commit),
        # not only for a quiet period on the wire.
        self.sandbox.busy_while(lambda: self.app is not None and bot_busy(self.app))
        self.polling = asyncio.create_task(
            self.app.dp.start_polling(
                self.app.bot,
                allowed_updates=self.app.dp.resolve_used_update_types(),
                handle_signals=False,
                polling_timeout=1,
            )
        )

    async def stop(self) -> None:
        if self.app is None or self.polling is None:
            return
        await asyncio.wait_for(self.app.dp.stop_polling(), 10)
        await asyncio.wait_for(self.polling, 10)
        await self.app.close()
        self.app = self.polling = None

    async def restart(self) -> None:
        await self.stop()
        await self.start()

    def user(self, language_code: str = "ru", **kwargs: Any) -> SandboxUser:
        self._next_user[0] += 1
        return self.sandbox.user(id=self._next_user[0], language_code=language_code, **kwargs)

    async def dialogs(self, telegram_id: int) -> list[DialogSession]:
        engine = create_engine(self.db_url)
        try:
            async with create_sessionmaker(engine)() as session:
                rows = await session.scalars(
                    select(DialogSession)
                    .join(User)
                    .where(User.telegram_id == telegram_id)
                    .order_by(DialogSession.id)
                )
                return list(rows)
        finally:
            await engine.dispose()

    async def db_user(self, telegram_id: int) -> User | None:
        engine = create_engine(self.db_url)
        try:
            async with create_sessionmaker(engine)() as session:
                return await session.scalar(select(User).where(User.telegram_id == telegram_id))
        finally:
            await engine.dispose()


def make_settings(db_path: Path, **overrides: Any) -> Settings:
    values: dict[str, Any] = {
        "database_url": url_of(db_path),
        "bot_token": SecretStr("unused"),
        "default_language": "ru",
        "contact_url": "https://example.com/contact",
        # The answer's picture is a second message after each result: tests of the text answer read
        # the result as the bot's last message, so pictures are on only where a test asks for them
        # (tests/bot/e2e/test_pictures.py); production's default is on.
        "answer_pictures": False,
        # Never the real Hugging Face: tests of the look-up point HF_ENDPOINT at a local fake Hub.
        "hf_lookup": False,
    }
    values.update(overrides)
    return Settings(_env_file=None, **values)  # type: ignore[call-arg]


@asynccontextmanager
async def running_bot(tmp_path: Path, template_db: Path, **overrides: Any) -> AsyncIterator[Harness]:
    """The real bot polling a sandbox of its own, on a copy of the migrated template database, with
    `make_settings` changed by ``overrides``; stopped afterwards."""
    db_path = tmp_path / "bot.sqlite3"
    shutil.copy(template_db, db_path)
    async with Sandbox(quiet_period=HARNESS_QUIET_S, reply_timeout=REPLY_TIMEOUT_S) as sandbox:
        h = Harness(sandbox, make_settings(db_path, telegram_api_url=sandbox.base_url, **overrides))
        await h.start()
        try:
            yield h
        finally:
            await h.stop()


@pytest.fixture
async def harness(tmp_path: Path, template_db: Path) -> AsyncIterator[Harness]:
    async with running_bot(tmp_path, template_db) as h:
        yield h


ADMIN_ID = 900  # the admin of `admin_harness`


@pytest.fixture
async def admin_harness(tmp_path: Path, template_db: Path) -> AsyncIterator[Harness]:
    """The bot with one admin (ADMIN_ID) and an OFFERS_FILE (a copy of the shipped offers) it can reload."""
    offers = tmp_path / "offers.toml"
    shutil.copy(DATA_DIR / "offers.toml", offers)
    async with running_bot(tmp_path, template_db, admin_ids=frozenset({ADMIN_ID}), offers_file=offers) as h:
        yield h


# ---------------------------------------------------------------- texts, read from the same locale files


@functools.cache
def _bundle(lang: str) -> FluentBundle:
    bundle = FluentBundle([lang], use_isolating=False)
    for path in sorted((LOCALES_DIR / lang).glob("*.ftl")):
        bundle.add_resource(FluentResource(path.read_text(encoding="utf-8")))
    return bundle


def html(key: str, lang: str = "ru", **args: Any) -> str:
    """A bot text as the bot sends it (HTML), from bot/locales."""
    bundle = _bundle(lang)
    value, errors = bundle.format_pattern(bundle.get_message(key).value, args)
    assert not errors, errors
    return str(value)


def text(key: str, lang: str = "ru", **args: Any) -> str:
    """A bot text as the user sees it (HTML tags stripped), from bot/locales."""
    return re.sub(r"<[^>]+>", "", html(key, lang, **args))


def result_mark(lang: str = "ru") -> str:
    """A piece every result message shows (its server line), to tell a result from other screens."""
    args = dict.fromkeys(("ram_min", "ram_recommended", "disk", "disk_kind"), "X")
    return core_texts.t("answer-host", lang, **args).split("X")[0]


def core(group: str, value: str, lang: str = "ru") -> str:
    """The core's label of a concept (a method, a precision), as shown on buttons."""
    return core_texts.label(group, value, lang)


def buttons(message: ChatMessage) -> list[str]:
    return [b.text for row in message.buttons for b in row]


def assert_no_failed_calls(sandbox: Sandbox) -> None:
    failed = [(r.method, r.error) for r in sandbox.requests if r.error]
    assert not failed, failed
