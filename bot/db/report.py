"""`python -m bot stats`: the sales figures of /stats (`bot.db.stats`), as plain-text tables.

First the link sources, all time (users, dialogs started and completed, leads, conversion); then the
totals of the last 7 days, 30 days and all time; then all time per task and per recommended GPU; then
the leads claimed ("Беру") and the median minutes to it per link source, and the last weeks.
"""

from collections.abc import Sequence

from sqlalchemy.exc import SQLAlchemyError

from bot.config import problem
from bot.db.engine import create_engine, create_sessionmaker, sqlite_file
from bot.db.stats import Counts, Funnel, ranked, report, weekly

NO_SOURCE = "(no link)"
NO_TASK = "(no answer)"
NO_GPU = "(none fits)"
PERIOD_NAMES = {"7d": "7 days", "30d": "30 days", "all": "all time"}
COLUMNS = ("users", "started", "completed", "leads", "undelivered", "failed", "conversion")
CLAIM_COLUMNS = ("leads", "claimed", "min_to_claim")
WEEK_COLUMNS = ("completed", "leads", "claimed", "min_to_claim", "conversion")


def _conversion(c: Counts) -> str:
    return "-" if c.conversion is None else f"{round(c.conversion * 100)}%"


def _values(c: Counts, columns: Sequence[str]) -> list[str]:
    values = {
        "users": c.users, "started": c.started, "completed": c.completed, "leads": c.leads,
        "undelivered": c.pending, "failed": c.failed, "conversion": _conversion(c), "claimed": c.claimed,
        "min_to_claim": "-" if c.median_claim_s is None else round(c.median_claim_s / 60),
    }  # fmt: skip
    return [str(values[column]) for column in columns]


def format_table(title: str, rows: Sequence[tuple[str, Counts]], columns: Sequence[str] = COLUMNS) -> str:
    """A left-aligned first column named ``title``, right-aligned figures."""
    header = [title, *columns]
    lines = [header, *([name, *_values(c, columns)] for name, c in rows)]
    widths = [max(len(line[i]) for line in lines) for i in range(len(header))]
    return "\n".join(
        "  ".join(cell.ljust(widths[0]) if i == 0 else cell.rjust(widths[i]) for i, cell in enumerate(line))
        for line in lines
    )


def format_report(funnels: dict[str, Funnel], weeks: dict[str, Counts] | None = None) -> str:
    ever = funnels["all"]
    tasks = [(task or NO_TASK, c) for task, c in ranked(ever.by_task)]
    gpus = [(gpu or NO_GPU, c) for gpu, c in ranked(ever.by_gpu) if c.completed or c.leads]
    claims = [(source or NO_SOURCE, c) for source, c in ranked(ever.by_source) if c.leads]
    tables = [
        format_table("source", [(source or NO_SOURCE, c) for source, c in ranked(ever.by_source)]),
        format_table("period", [(PERIOD_NAMES[name], f.total) for name, f in funnels.items()]),
        format_table("task", tasks, ("started", "completed", "leads", "conversion")),
        format_table("gpu", gpus, ("completed", "leads", "conversion")),
        format_table("claims", claims, CLAIM_COLUMNS),
    ]
    if weeks is not None:
        tables.append(format_table("week", list(weeks.items()), WEEK_COLUMNS))
    return "\n\n".join(tables)


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
            funnels = await report(session)
            weeks = await weekly(session)
    except (SQLAlchemyError, OSError) as e:
        cause = getattr(e, "orig", None) or e
        detail = str(cause).splitlines()[0] if str(cause) else type(cause).__name__
        message = f"cannot read the bot's tables ({detail}); run `python -m bot migrate`?"
        raise problem("DATABASE_URL", message) from None
    finally:
        await engine.dispose()
    print(format_report(funnels, weeks))
