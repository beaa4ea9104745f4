"""The sales figures: the funnel per link source, task and recommended GPU; the rows for /export.

Read-only queries (the admin commands in ``bot.handlers.admin`` and ``python -m bot stats`` share them):
the funnel and its weeks in ``sales_funnel``, who came by which link in ``links``, the /export rows
in ``export``; this package re-exports what the rest of the bot uses.
"""

from bot.db.stats.export import DIALOG_COLUMNS, LEAD_COLUMNS, USER_COLUMNS, dialog_rows, lead_rows, user_rows
from bot.db.stats.links import Referrer, top_referrers, users_from
from bot.db.stats.sales_funnel import (
    PERIODS,
    WEEKS_SHOWN,
    Counts,
    Funnel,
    funnel,
    gpu_of,
    ranked,
    report,
    week_of,
    weekly,
)

__all__ = [
    "DIALOG_COLUMNS",
    "LEAD_COLUMNS",
    "PERIODS",
    "USER_COLUMNS",
    "WEEKS_SHOWN",
    "Counts",
    "Funnel",
    "Referrer",
    "dialog_rows",
    "funnel",
    "gpu_of",
    "lead_rows",
    "ranked",
    "report",
    "top_referrers",
    "user_rows",
    "users_from",
    "week_of",
    "weekly",
]
