"""What /stats and /offers answer, as text (bot.handlers.admin sends it): the funnel per period, link
source, task and GPU, the leads claimed per source with the median minutes to "Беру", the last weeks;
the offers in force with their prices and availability."""

from __future__ import annotations

from html import escape

from bot.context import Ctx
from bot.db import stats
from bot.flow import TASKS
from core.catalogue.catalog import Catalog
from core.language.cards import config_text, hourly_price, short_gpu_name

MAX_ROWS = 8
"""Rows per table in a /stats message (the busiest; the rest are counted, and in /export)."""
MAX_OFFERS = 40
"""Offers listed by /offers (one message)."""


# ---------------------------------------------------------------------------------------- /stats


def percent(value: float | None) -> str:
    return "—" if value is None else f"{round(value * 100)}%"


def _rows(ctx: Ctx, table: dict[str | None, stats.Counts], key: str, none_key: str) -> list[str]:
    ranked = stats.ranked(table)
    lines = []
    for name, c in ranked[:MAX_ROWS]:
        if name is None:
            label = ctx.tr(none_key)
        elif key == "admin-stats-row-task" and name in TASKS:
            label = ctx.tr(f"task-{name}")
        elif key == "admin-stats-row-gpu" and name in ctx.catalog.gpus:
            label = escape(short_gpu_name(ctx.catalog.gpus[name].name))
        elif key == "admin-stats-row-source":
            label = f"<code>{escape(name)}</code>"
        else:
            label = escape(name)
        args = {
            "name": label,
            "users": c.users,
            "started": c.started,
            "completed": c.completed,
            "leads": c.leads,
            "conversion": percent(c.conversion),
        }
        lines.append(ctx.tr(key, **args))
    if len(ranked) > MAX_ROWS:
        lines.append(ctx.tr("admin-stats-more", count=len(ranked) - MAX_ROWS))
    return lines or [ctx.tr("admin-stats-nothing")]


def render_funnel(ctx: Ctx, period: str, funnel: stats.Funnel) -> str:
    titles = {
        "7d": ctx.tr("admin-stats-7d"),
        "30d": ctx.tr("admin-stats-30d"),
        "all": ctx.tr("admin-stats-all"),
    }
    t = funnel.total
    by_task = {task: c for task, c in funnel.by_task.items() if c.started or c.completed or c.leads}
    by_gpu = {gpu: c for gpu, c in funnel.by_gpu.items() if c.completed or c.leads}
    parts = [
        titles[period],
        ctx.tr(
            "admin-stats-total",
            users=t.users,
            started=t.started,
            completed=t.completed,
            leads=t.leads,
            pending=t.pending,
            failed=t.failed,
            conversion=percent(t.conversion),
        ),
        "",
        ctx.tr("admin-stats-by-source"),
        *_rows(ctx, funnel.by_source, "admin-stats-row-source", "admin-stats-no-link"),
        "",
        ctx.tr("admin-stats-by-task"),
        *_rows(ctx, by_task, "admin-stats-row-task", "admin-stats-no-task"),
        "",
        ctx.tr("admin-stats-by-gpu"),
        *_rows(ctx, by_gpu, "admin-stats-row-gpu", "admin-stats-no-gpu"),
        "",
        ctx.tr("admin-stats-claims-by-source"),
        *_claim_rows(ctx, funnel.by_source),
    ]
    return "\n".join(parts)


def minutes(seconds: float | None) -> str:
    return "—" if seconds is None else str(round(seconds / 60))


def _claim_args(c: stats.Counts) -> dict[str, object]:
    return {
        "completed": c.completed,
        "leads": c.leads,
        "claimed": c.claimed,
        "median": minutes(c.median_claim_s),
        "conversion": percent(c.conversion),
    }


def _claim_rows(ctx: Ctx, by_source: dict[str | None, stats.Counts]) -> list[str]:
    """Per link source: leads, claimed, the median minutes to "Беру", conversion."""
    rows = [(name, c) for name, c in stats.ranked(by_source) if c.leads]
    lines = [
        ctx.tr(
            "admin-stats-claims-row",
            name=ctx.tr("admin-stats-no-link") if name is None else f"<code>{escape(name)}</code>",
            **_claim_args(c),
        )
        for name, c in rows[:MAX_ROWS]
    ]
    if len(rows) > MAX_ROWS:
        lines.append(ctx.tr("admin-stats-more", count=len(rows) - MAX_ROWS))
    return lines or [ctx.tr("admin-stats-nothing")]


def render_weeks(ctx: Ctx, weeks: dict[str, stats.Counts]) -> str:
    """The last weeks, newest first: completed dialogs, leads, claimed, median minutes, conversion."""
    lines = [ctx.tr("admin-stats-weeks", weeks=len(weeks))]
    lines += [ctx.tr("admin-stats-week-row", week=week, **_claim_args(c)) for week, c in weeks.items()]
    return "\n".join(lines)


# --------------------------------------------------------------------------------------- /offers


def offers_text(ctx: Ctx, catalog: Catalog) -> str:
    file = ctx.settings.offers_file
    lines = [
        ctx.tr(
            "admin-offers-title",
            count=len(catalog.offers),
            file=f"<code>{escape(str(file))}</code>" if file else ctx.tr("admin-offers-builtin"),
        )
    ]
    for offer in catalog.offers[:MAX_OFFERS]:
        gpu = catalog.gpus[offer.gpu]
        price = hourly_price(
            offer.price_per_hour,
            offer.currency,
            ctx.lang,
            is_from=offer.price_is_from,
            monthly=offer.price_per_month,
        )
        config = config_text(offer.count, gpu.name, ctx.lang)
        row = ctx.tr("admin-offers-row", id=escape(offer.id), config=escape(config), price=escape(price))
        if offer.availability != "available":
            row += " · " + ctx.tr(f"admin-offers-{offer.availability}")
        lines.append(row)
    if len(catalog.offers) > MAX_OFFERS:
        lines.append(ctx.tr("admin-offers-more", count=len(catalog.offers) - MAX_OFFERS))
    if file:
        lines.append(ctx.tr("admin-offers-hint"))
    lines.append(ctx.tr("admin-offers-switch-hint"))
    return "\n".join(lines)
