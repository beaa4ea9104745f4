"""One unit of work per Telegram update (bot.db.work), with de-duplication and the user row.

An update already handled is dropped before any handler runs. The update's work (its FSM record,
its dialog rows' writes) commits with its done mark after the handler returned, after its last
Telegram call; a handler that raised leaves nothing of its work. No transaction is open while the
handler runs, so none while Telegram answers. The contract: docs/persistence.md."""

import logging
import re
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from aiogram import BaseMiddleware
from aiogram.fsm.context import FSMContext
from aiogram.types import TelegramObject, Update
from aiogram.types import User as TelegramUser
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from bot.db import dialogs, processed_updates, users
from bot.db.engine import statements_commit_alone
from bot.db.group_commit import GroupCommit
from bot.db.models import User, UtcDateTime, utc_now
from bot.db.work import UpdateWork
from bot.redis_state import RECORD_KEY, UserRecord, flush_state, keep_user_row, keeps_user_row, kept_user_row
from bot.storage import SqlAlchemyStorage

logger = logging.getLogger(__name__)

# Telegram's own limit for t.me/<bot>?start=<payload> links.
DEEP_LINK_PAYLOAD = re.compile(r"[A-Za-z0-9_-]{1,64}")

INLINE_SOURCE = "inline"
"""The source of a user first seen through inline mode (`@bot question` in another chat); also the
deep-link payload of the inline answers' "full answer in the bot" links."""
# Telegram gives up redelivering an update after a day; de-duplication records older than this go.
PROCESSED_UPDATES_KEPT = timedelta(days=2)

Handler = Callable[[TelegramObject, dict[str, Any]], Awaitable[Any]]


def deep_link_source(update: Update) -> str | None:
    """The payload of a ``/start <payload>`` message, if it is a valid deep-link payload."""
    text = update.message.text if update.message else None
    if not text:
        return None
    command, _, payload = text.partition(" ")
    if command != "/start" and not command.startswith("/start@"):
        return None
    payload = payload.strip()
    return payload if DEEP_LINK_PAYLOAD.fullmatch(payload) else None


RECEIPT_KEY = "update_receipt"
"""Handler data key of the `Receipt` the inbox passes along with an update it hands to the dispatcher."""


@dataclass
class Receipt:
    """Set by DbSessionMiddleware once the update is finished (marked handled, or found handled).

    ``fresh``: the inbox has just recorded the update as new (its insert decided that), so it cannot
    have been handled yet and the de-duplication read is skipped."""

    finished: bool = False
    fresh: bool = False
    failure: BaseException | None = None
    """Set by the errors handler when the database, Redis or the disk failed (bot.db.outage): the
    update stays pending and is retried."""
    noticed: bool = False
    """The user has been told "one moment, retrying" for this update (at most once)."""


class DbSessionMiddleware(BaseMiddleware):
    """Outer middleware for ``dp.update``.

    Puts ``work`` (the update's `UpdateWork`), ``db_user`` (our User row, or None for updates
    without a user) and ``deep_link_source`` into the handler data, and binds the handlers'
    FSMContext to the work (bot.storage.UpdateStorage). An update that was already handled (Telegram
    redelivers after timeouts and restarts) is dropped before any handler runs. A new user's row is
    written before the handler runs (first contact; on SQLite usually at receipt, bot.db.arrivals).

    When the handler returned, the writer (bot.db.group_commit) commits the work and the done mark,
    with the works of the updates finishing meanwhile. With the FSM in Redis (bot.redis_fsm) the
    state is written right before (`flush_state`). The update is finished once that commit is done;
    if the handler or the commit fails, nothing of the work is written or remembered.

    New dialog rows take their ids from `dialogs.DialogIds` (``single_process``: the embedded
    SQLite, one process owns the database) or the table's sequence (PostgreSQL), so they wait for the
    commit too; with the FSM in Redis on PostgreSQL a new row is inserted at once instead (its id is
    in Redis before the commit). ``single_process`` also keeps the user rows it committed in memory
    (`KnownUsers`).
    """

    def __init__(
        self, sessionmaker: async_sessionmaker[AsyncSession], *, single_process: bool = False
    ) -> None:
        self.sessionmaker = sessionmaker
        self.group_commit = GroupCommit(sessionmaker)
        # One process owns the database (the embedded SQLite): the user rows it committed are the truth.
        self.known_users = KnownUsers(keep_rows=single_process)
        # New dialog rows' ids: this process's own where it is the only one inserting dialogs, else
        # the table's sequence (PostgreSQL).
        self.single_process = single_process
        bind = sessionmaker.kw.get("bind")
        on_postgresql = bind is not None and bind.dialect.name == "postgresql"
        self.dialog_ids: dialogs.DialogIds | None = (
            dialogs.SequenceIds() if on_postgresql else dialogs.DialogIds() if single_process else None
        )

    async def __call__(self, handler: Handler, event: TelegramObject, data: dict[str, Any]) -> Any:
        if not isinstance(event, Update):
            raise TypeError("DbSessionMiddleware belongs on dp.update.outer_middleware")
        bot_id = data["bot"].id
        receipt: Receipt | None = data.get(RECEIPT_KEY)
        state = data.get("state")
        fsm_in_database = isinstance(state, FSMContext) and isinstance(state.storage, SqlAlchemyStorage)
        source = deep_link_source(event)
        first_seen = INLINE_SOURCE if event.inline_query is not None else source
        fresh = receipt is not None and receipt.fresh
        record: UserRecord | None = data.get(RECORD_KEY)  # the FSM in Redis (bot.redis_state)
        handled, db_user = await self._before_handler(
            bot_id, event.update_id, fresh, data.get("event_from_user"), first_seen, record
        )
        if handled:
            logger.info("Dropping update %s: already processed", event.update_id)
            if receipt is not None:
                receipt.finished = True
            return None
        # A new dialog row waits for the commit where its id cannot be lost: it commits with the
        # state that names it, or (one process) nobody else hands out ids.
        ids = self.dialog_ids if fsm_in_database or self.single_process else None
        work = UpdateWork(bot_id, event.update_id, self.sessionmaker, dialog_ids=ids)
        data["work"] = work
        data["db_user"] = db_user
        data["deep_link_source"] = source
        if fsm_in_database:
            assert isinstance(state, FSMContext) and isinstance(state.storage, SqlAlchemyStorage)
            data["state"] = state = FSMContext(storage=state.storage.bound(work), key=state.key)
        try:
            if state is not None and "raw_state" not in data:
                # bot.storage.DeferredStateMiddleware left it to us: the update's one read.
                data["raw_state"] = await state.get_state()
            try:
                result = await handler(event, data)
            except Exception:
                await _undo(work)
                raise
            # The state in Redis (bot.redis_fsm) first: a crash before the commit below then
            # replays the update from its new state, never from an old one with its rows written.
            await flush_state(record)
            await self.group_commit.finish(work)
        except BaseException:
            if db_user is not None:  # what the update changed of it in memory is not on disk
                self.known_users.forget(db_user.telegram_id)
            raise
        if db_user is not None:
            self._keep(db_user, record)
        if receipt is not None:
            receipt.finished = True
        for start in work.then:  # finished: what goes apart from it (bot.db.work)
            start()
        return result

    def _keep(self, user: User, record: UserRecord | None) -> None:
        """The user's row as the update committed it: in memory (``single_process``), else (replicas)
        with the user's Redis lock, written at its release (bot.redis_state)."""
        if self.known_users.keep_rows:
            self.known_users.keep(user)
        else:
            keep_user_row(record, user.telegram_id, row_values(user))

    async def _before_handler(
        self,
        bot_id: int,
        update_id: int,
        fresh: bool,
        telegram_user: TelegramUser | None,
        source: str | None,
        record: UserRecord | None,
    ) -> tuple[bool, User | None]:
        """Whether the update was handled already, and the sender's row. A fresh update of a user
        kept in memory needs neither read: no session is opened."""
        db_user = self._kept_user(telegram_user, record)
        if fresh and (db_user is not None or not is_person(telegram_user)):
            return False, db_user
        async with self.sessionmaker() as session:  # ended before the handler runs
            # Reads and one idempotent upsert, none undone by another's failure: on PostgreSQL each
            # commits alone, in one round trip (a crowd of new users holds connections a third as long).
            await statements_commit_alone(session)
            if not fresh and await processed_updates.update_is_handled(
                session, bot_id=bot_id, update_id=update_id
            ):
                return True, None
            # A new user's row (or what Telegram says of them, changed): first contact, committed
            # before the handler runs, as at receipt (bot.db.arrivals).
            if db_user is None:
                # Where Redis keeps the row, one found stale there is refreshed (`last_seen_at` too).
                db_user = await self._user(session, telegram_user, source, refresh=keeps_user_row(record))
            await session.commit()
        return False, db_user

    def _kept_user(self, telegram_user: TelegramUser | None, record: UserRecord | None) -> User | None:
        """The sender's row from memory (``single_process``) or from the user's record in Redis
        (bot.redis_state) when nothing Telegram says of them changed and ``last_seen_at`` is recent:
        a known user's fresh update then needs no session before its handler."""
        if not is_person(telegram_user):
            return None
        assert telegram_user is not None
        seen = said_of(telegram_user)
        if not self.known_users.keep_rows:
            return user_of_row(kept_user_row(record, telegram_user.id), seen)
        if not self.known_users.fresh(telegram_user.id, seen):
            return None
        return self.known_users.row(telegram_user.id)

    async def _user(
        self,
        session: AsyncSession,
        telegram_user: TelegramUser | None,
        source: str | None,
        *,
        refresh: bool = False,
    ) -> User | None:
        """Our row of the sender: written when new or when what Telegram says of them changed (or
        ``last_seen_at`` is older than `LAST_SEEN_RESOLUTION`), else only read. A read takes no write
        lock: the update's first write, and with it SQLite's one writer, comes later and shorter.
        ``refresh``: written even if this process wrote it lately (the copy Redis keeps was stale)."""
        if not is_person(telegram_user):
            return None
        assert telegram_user is not None
        seen = said_of(telegram_user)
        if not refresh and self.known_users.fresh(telegram_user.id, seen):
            user = self.known_users.row(telegram_user.id) or await users.get_user(session, telegram_user.id)
            if user is not None:
                return user
        user = await users.upsert_user(
            session,
            telegram_id=telegram_user.id,
            username=telegram_user.username,
            first_name=telegram_user.first_name,
            telegram_language=telegram_user.language_code,
            source=source,
        )
        self.known_users.written(telegram_user.id, seen)
        return user

    async def first_contact(
        self, session: AsyncSession, senders: Sequence[tuple[TelegramUser, str | None]]
    ) -> Callable[[], None] | None:
        """The rows of the senders this process has not seen yet (with the source each came with),
        written in one statement of ``session`` (the inbox's receipt, bot.db.arrivals); returns what
        keeps them in memory, to call once that session committed (None: nothing to). Their updates
        then find their row in memory (`_user`), and a new user's first update writes no row of its
        own. Only with ``single_process``: elsewhere the row is read on every update (`KnownUsers`)."""
        if not self.known_users.keep_rows:
            return None
        new: dict[int, TelegramUser] = {}
        seen: list[users.SeenUser] = []
        for user, source in senders:
            if user.is_bot or user.id in new or self.known_users.seen(user.id):
                continue
            new[user.id] = user
            seen.append(users.SeenUser(user.id, user.username, user.first_name, user.language_code, source))
        if not seen:
            return None
        rows = await users.upsert_users(session, seen)

        def remember() -> None:
            for row in rows:
                self.known_users.written(row.telegram_id, said_of(new[row.telegram_id]))
                self.known_users.keep(row)

        return remember


async def _undo(work: UpdateWork) -> None:
    """Take back the rows a failed handler had to write at once (`UpdateWork.undo`; its state never
    named them). A failure to is logged; a crash would leave them as well: a dialog row left started
    is abandoned by the user's next one."""
    for undo in work.undo:
        try:
            await work.write(undo)
        except Exception:
            logger.exception("update %s failed; a row it wrote could not be taken back", work.update_id)


def is_person(user: TelegramUser | None) -> bool:
    """Whether the update has a sender who gets a row in the users table (not a bot)."""
    return user is not None and not user.is_bot


SAID_COLUMNS = ("username", "first_name", "language_from_telegram")
"""The users table's columns that keep what Telegram says of a user (`said_of`, in that order)."""


def said_of(user: TelegramUser) -> tuple[str | None, ...]:
    """What Telegram says of a user that the users table keeps (`KnownUsers.fresh` compares it)."""
    return (user.username, user.first_name, user.language_code)


LAST_SEEN_RESOLUTION = timedelta(minutes=5)
"""How stale ``users.last_seen_at`` may be: a user writing all the time has it refreshed this often."""


class KnownUsers:
    """What this process last wrote of each recent user (bounded, least recently written dropped).

    Only a shortcut: a user missing here is upserted as before. A row written meanwhile by another
    replica differs at most in ``last_seen_at`` (by `LAST_SEEN_RESOLUTION`); what Telegram says of
    the user is compared on every update. A rolled-back upsert is remembered too, which is harmless:
    the row is then missing and written again (`get_user` finds nothing).

    ``keep_rows`` (one process owns the database: the embedded SQLite) also keeps each user's row as
    its last update committed it (its values: each update gets a copy of its own), so a known user
    costs no SELECT. Safe only there: every change of
    the row is made by this process's updates (the user's own, in order: one update per user at a
    time), and an update that fails forgets the row (`forget`). With PostgreSQL several replicas
    change rows (a /language handled by another one), so the row is read on every update."""

    MAX = 100_000
    """Users remembered at most: ~0.5 KB each with their row's values (``keep_rows``), ~50 MB."""

    def __init__(self, *, keep_rows: bool = False) -> None:
        # telegram id -> (what Telegram said, when written, the row's values or None), oldest first
        self._known: dict[int, tuple[tuple[str | None, ...], float, tuple[Any, ...] | None]] = {}
        self.keep_rows = keep_rows

    def row(self, telegram_id: int) -> User | None:
        """A detached copy of the kept row (the update may change it; `keep` takes it back)."""
        known = self._known.get(telegram_id)
        if known is None or known[2] is None:
            return None
        return User(**dict(zip(USER_FIELDS, known[2], strict=True)))

    def keep(self, user: User) -> None:
        """The row as the update that just committed left it (detached: attributes stay loaded)."""
        known = self._known.get(user.telegram_id)
        if self.keep_rows and known is not None:
            self._known[user.telegram_id] = (known[0], known[1], tuple(row_values(user).values()))

    def forget(self, telegram_id: int) -> None:
        self._known.pop(telegram_id, None)

    def seen(self, telegram_id: int) -> bool:
        """Whether this process has written (or found written) the user's row."""
        return telegram_id in self._known

    def fresh(self, telegram_id: int, seen: tuple[str | None, ...]) -> bool:
        known = self._known.get(telegram_id)
        return (
            known is not None
            and known[0] == seen
            and time.monotonic() - known[1] < LAST_SEEN_RESOLUTION.total_seconds()
        )

    def written(self, telegram_id: int, seen: tuple[str | None, ...]) -> None:
        known = self._known.pop(telegram_id, None)
        self._known[telegram_id] = (seen, time.monotonic(), known[2] if known is not None else None)
        if len(self._known) > self.MAX:
            del self._known[next(iter(self._known))]


USER_FIELDS = tuple(column.key for column in User.__table__.columns)
"""The columns of a user's row, as `KnownUsers` keeps their values."""
USER_TIMES = tuple(column.key for column in User.__table__.columns if isinstance(column.type, UtcDateTime))
"""Its columns holding a time (ISO text in Redis)."""


def row_values(user: User) -> dict[str, Any]:
    """A user's row as its values by column (what Redis keeps of it, bot.redis_state)."""
    return {name: getattr(user, name) for name in USER_FIELDS}


def user_of_row(row: dict[str, Any] | None, seen: tuple[str | None, ...]) -> User | None:
    """A detached User of a row kept in Redis, if it is complete, says what Telegram says of the
    user now, and was seen within `LAST_SEEN_RESOLUTION`; else None (the row is read or refreshed)."""
    if row is None or set(row) != set(USER_FIELDS) or tuple(row[name] for name in SAID_COLUMNS) != seen:
        return None
    try:
        values = {**row, **{name: datetime.fromisoformat(row[name]) for name in USER_TIMES}}
        if utc_now() - values["last_seen_at"] >= LAST_SEEN_RESOLUTION:
            return None
    except (TypeError, ValueError):  # not a row this code wrote: read or refreshed instead
        return None
    return User(**values)


async def forget_old_updates(
    sessionmaker: async_sessionmaker[AsyncSession], keep: timedelta = PROCESSED_UPDATES_KEPT
) -> int:
    """Drop the de-duplication records Telegram can no longer redeliver (at startup and then
    periodically, so the table does not grow forever); returns how many."""
    async with sessionmaker() as session, session.begin():
        forgotten = await processed_updates.forget_processed_updates(session, before=utc_now() - keep)
    if forgotten:
        logger.info("Forgot %d processed update(s) older than %s", forgotten, keep)
    return forgotten
