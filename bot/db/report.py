"""`python -m bot stats`: the deep-link source funnel for the sales team."""

from collections.abc import Sequence

from bot.db.engine import create_engine, create_sessionmaker
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
    engine = create_engine(url)
    try:
        async with create_sessionmaker(engine)() as session:
            rows = await source_report(session)
    finally:
        await engine.dispose()
    print(format_source_report(rows))
