"""`python -m bot stats`: the deep-link source funnel for the sales team."""

from collections.abc import Sequence

from sqlalchemy.exc import SQLAlchemyError

from bot.config import problem
from bot.db.engine import create_engine, create_sessionmaker, sqlite_file
from bot.db.repository import SourceRow, source_report

NO_SOURCE = "(no link)"


def format_source_report(rows: Sequence[SourceRow]) -> str:
    header = ("source", "users", "started", "completed")
    lines = [(row.source or NO_SOURCE, row.users, row.dialogs_started, row.dialogs_completed) for row in rows]
    width = max([len(header[0]), *(len(line[0]) for line in lines)])
    table = [f"{header[0]:<{width}}  {header[1]:>7}  {header[2]:>7}  {header[3]:>9}"]
    table += [
        f"{source:<{width}}  {users:>7}  {started:>7}  {completed:>9}"
        for source, users, started, completed in lines
    ]
    return "\n".join(table)


async def print_source_report(url: str) -> None:
    """Raises ConfigError (naming DATABASE_URL) when there is no bot database at `url`.

    An SQLite file that does not exist is reported, never created (a wrong path must not leave an
    empty database behind and print an empty report).
    """
    path = sqlite_file(url)
    if path is not None and not path.is_file():
        raise problem(
            "DATABASE_URL",
            f"no database at {path} (check the path; the bot creates it on its first start)",
        )
    engine = create_engine(url)
    try:
        async with create_sessionmaker(engine)() as session:
            rows = await source_report(session)
    except (SQLAlchemyError, OSError) as e:
        cause = getattr(e, "orig", None) or e
        detail = str(cause).splitlines()[0] if str(cause) else type(cause).__name__
        message = f"cannot read the bot's tables ({detail}); run `python -m bot migrate`?"
        raise problem("DATABASE_URL", message) from None
    finally:
        await engine.dispose()
    print(format_source_report(rows))
