"""The users' rows: first contact (the deep-link source, the referrer), what Telegram says of a user,
their language and currency, and the link sources' funnel. Functions never commit: the caller's
transaction commits."""

from collections.abc import Sequence
from dataclasses import dataclass

from sqlalchemy import case, func, select, update
from sqlalchemy.ext.asyncio import AsyncSession

from bot.db import upserts
from bot.db.models import DIALOG_COMPLETED, DialogSession, User, utc_now
from core.language.words import LANGUAGES


@dataclass(frozen=True)
class SourceRow:
    """Deep-link source funnel: how many users came, started and completed a dialog."""

    source: str | None
    users: int
    dialogs_started: int
    dialogs_completed: int


async def get_user(session: AsyncSession, telegram_id: int) -> User | None:
    return await session.scalar(select(User).where(User.telegram_id == telegram_id))


async def upsert_user(
    session: AsyncSession,
    *,
    telegram_id: int,
    username: str | None,
    first_name: str | None,
    telegram_language: str | None,
    source: str | None,
) -> User:
    """Create the user on first contact (recording the deep-link source), else refresh what Telegram says.

    One statement (INSERT … ON CONFLICT DO UPDATE … RETURNING): two first updates of one user racing
    each other create one row, with the source of whichever came first (a conflict keeps the source).
    """
    seen = SeenUser(telegram_id, username, first_name, telegram_language, source)
    return (await upsert_users(session, [seen]))[0]


@dataclass(frozen=True)
class SeenUser:
    """What an update says of its sender, and the deep-link source it came with (`upsert_users`)."""

    telegram_id: int
    username: str | None
    first_name: str | None
    telegram_language: str | None
    source: str | None


async def upsert_users(session: AsyncSession, users: Sequence[SeenUser]) -> list[User]:
    """`upsert_user` for several users in one statement (each telegram id once), their rows in order."""
    now = utc_now()
    rows = [
        {"telegram_id": user.telegram_id, "source": user.source, "created_at": now,
         "username": user.username, "first_name": user.first_name,
         "language_from_telegram": user.telegram_language, "last_seen_at": now,
         "referred_by": referrer_of(user.source, user.telegram_id)}
        for user in users
    ]  # fmt: skip
    # The statement is SQL text built once (bot.db.upserts): an ORM ``insert(User)…returning(User)``
    # is compiled again on every call, 1-3 ms of CPU, and every user of a crowd is new.
    statement = upserts.upsert(
        upserts.USERS, USER_INSERTED, ("telegram_id",), set_=USER_REFRESHED, rows=len(rows),
        returning=USER_COLUMNS,
    )  # fmt: skip
    result = await session.execute(statement, upserts.params(USER_INSERTED, rows))
    written = {row.telegram_id: row for row in result}
    # Not attached to the session: the update path reads its user (id, language), never changes it
    # through the ORM (bot.i18n sets the language with an UPDATE and in this copy).
    return [User(**written[user.telegram_id]._mapping) for user in users]


USER_INSERTED = ("telegram_id", "source", "created_at", "username", "first_name", "language_from_telegram",
                 "last_seen_at", "referred_by")  # fmt: skip
REFERRAL_PREFIX = "ref_"
"""A personal link's source: `ref_<telegram id>` of the user who shared it (/ref)."""
MAX_TELEGRAM_ID = 2**63 - 1  # BIGINT


def referral_source(telegram_id: int) -> str:
    return f"{REFERRAL_PREFIX}{telegram_id}"


def referrer_of(source: str | None, telegram_id: int) -> int | None:
    """Who brought a user whose first contact came with `source`: the id of `ref_<id>`; None for
    another source, a malformed id, or the user's own link."""
    if not source or not source.startswith(REFERRAL_PREFIX):
        return None
    digits = source.removeprefix(REFERRAL_PREFIX)
    if not digits.isascii() or not digits.isdigit() or len(digits) > 19:
        return None
    referrer = int(digits)
    return referrer if 0 < referrer <= MAX_TELEGRAM_ID and referrer != telegram_id else None


async def referred_count(session: AsyncSession, telegram_id: int) -> int:
    """How many users this user's personal link brought."""
    brought = select(func.count()).select_from(User).where(User.referred_by == telegram_id)
    count = await session.scalar(brought)
    return int(count or 0)


async def set_currency(session: AsyncSession, telegram_id: int, currency: str) -> None:
    await session.execute(update(User).where(User.telegram_id == telegram_id).values(currency=currency))


USER_REFRESHED = {
    column: f"excluded.{column}"
    for column in ("username", "first_name", "language_from_telegram", "last_seen_at")
}
USER_COLUMNS = tuple(column.name for column in upserts.USERS.columns)


async def set_language(session: AsyncSession, telegram_id: int, lang: str) -> None:
    if lang not in LANGUAGES:
        raise ValueError(f"unsupported language {lang!r}; expected one of {LANGUAGES}")
    await session.execute(update(User).where(User.telegram_id == telegram_id).values(language=lang))


async def source_report(session: AsyncSession) -> list[SourceRow]:
    """Per first-seen source (None: came without a link): users, their dialogs started and completed.

    Dialogs count towards the source that brought the user, which is what a sales link is credited with.
    """
    dialogs = (
        select(
            DialogSession.user_id,
            func.count().label("started"),
            func.sum(case((DialogSession.status == DIALOG_COMPLETED, 1), else_=0)).label("completed"),
        )
        .group_by(DialogSession.user_id)
        .subquery()
    )
    users = func.count(User.id)
    rows = await session.execute(
        select(
            User.source,
            users,
            func.coalesce(func.sum(dialogs.c.started), 0),
            func.coalesce(func.sum(dialogs.c.completed), 0),
        )
        .outerjoin(dialogs, dialogs.c.user_id == User.id)
        .group_by(User.source)
        .order_by(users.desc(), User.source.asc().nulls_last())
    )
    return [
        SourceRow(source, int(n_users), int(started), int(completed))
        for source, n_users, started, completed in rows
    ]
