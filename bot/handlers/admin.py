"""Admin commands, for the Telegram ids in ADMIN_IDS, in the private chat with the bot: `/stats` (the
funnel per period, link source, task and GPU), `/export` (users, dialogs and leads as CSV documents),
`/link <source>` (a deep link and the users it brought), `/leads` (the leads not delivered yet;
`/leads resend`), `/offers` (the offers in force; reload, availability) and `/measurements` (what
users stored from their logs). Each command's handler (`cmd_*`) says what it answers.

For anyone else the filter fails and the command goes on to the handlers after this router, which
answer it like any unknown command: nothing tells that these commands exist. Their menu entries are
set per admin chat (`bot.handlers.commands.set_commands`).
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from html import escape
from pathlib import Path
from typing import Any

from aiogram import BaseMiddleware, Bot, Dispatcher, Router
from aiogram.enums import ChatType
from aiogram.filters import Command, CommandObject, Filter
from aiogram.types import BufferedInputFile, Message, TelegramObject

from bot import dialog
from bot.admin_texts import MAX_OFFERS, MAX_ROWS, offers_text, render_funnel, render_weeks
from bot.config import ConfigError, Settings, check_offers_file
from bot.context import Ctx
from bot.csv_export import csv_document
from bot.db import leads as lead_db
from bot.db import measurements, stats
from bot.db.availability import LiveAvailability
from bot.db.middleware import DEEP_LINK_PAYLOAD
from bot.leads import clip
from bot.outbox import LeadOutbox
from bot.routing import FeatureRouter
from core.catalogue.catalog import Catalog, load_catalog
from core.catalogue.offers import Availability

ADMIN_COMMANDS = ("stats", "export", "link", "leads", "offers", "measurements")
"""In the admins' command menu after the everyday ones (descriptions: `cmd-<command>`)."""
AVAILABILITY_KEY = "offer_availability"
"""The dispatcher's `LiveAvailability` (bot.app), when there is a database to keep overrides in."""
OFFER_SWITCHES: dict[str, Availability] = {"off": "sold_out", "on": "available", "request": "on_request"}
"""`/offers <switch> <id>…`: the availability each sets."""
MAX_ERROR = 1000
MAX_LEADS = 15
"""Undelivered leads /leads lists (one message; the rest counted)."""
MAX_LEAD_ERROR = 120


class IsAdmin(Filter):
    """A message from one of ADMIN_IDS in the private chat with the bot."""

    async def __call__(self, message: Message, settings: Settings) -> bool:
        user = message.from_user
        return user is not None and message.chat.type == ChatType.PRIVATE and user.id in settings.admin_ids


# ---------------------------------------------------------------------------------------- /stats


def pictures_line(ctx: Ctx) -> str:
    """How the answer pictures fared in this process: sent, skipped under load (by design: the
    renderer takes a few at a time), failed. The dialogs' renderer: `bot.dialog.PICTURES`."""
    pictures = dialog.PICTURES
    return ctx.tr(
        "admin-stats-pictures", sent=pictures.sent, skipped=pictures.skipped, failed=pictures.failed
    )


async def referrers_block(ctx: Ctx) -> str:
    """Who brought whom through personal links (`ref_<id>`): the top referrers, all time."""
    top, total = await ctx.work.read(stats.top_referrers, MAX_ROWS)
    lines = [ctx.tr("currency-stats-referrers")]
    for r in top:
        name = f"@{escape(r.username)}" if r.username else f"<code>{r.telegram_id}</code>"
        lines.append(ctx.tr("currency-stats-referrer", name=name, users=r.users, leads=r.leads))
    if total > len(top):
        lines.append(ctx.tr("admin-stats-more", count=total - len(top)))
    return "\n".join(lines if top else [*lines, ctx.tr("admin-stats-nothing")])


async def cmd_stats(message: Message, ctx: Ctx) -> None:
    """Users, dialogs started / completed, leads (not yet delivered, failed), conversion, per link
    source, task and recommended GPU, leads claimed ("Беру") and the median minutes to it per source,
    for the last 7 and 30 days and all time (one message each); then the same per week
    (`stats.weekly`)."""
    report = await ctx.work.read(stats.report)
    texts = [render_funnel(ctx, period, funnel) for period, funnel in report.items()]
    texts[-1] += "\n\n" + await referrers_block(ctx)
    if ctx.settings.answer_pictures:
        texts[-1] += "\n\n" + pictures_line(ctx)
    texts.append(render_weeks(ctx, await ctx.work.read(stats.weekly)))
    for text in texts:
        await message.answer(text)


# --------------------------------------------------------------------------------------- /export


async def cmd_export(message: Message, ctx: Ctx) -> None:
    """users.csv, dialogs.csv, leads.csv as documents (columns: `bot.db.stats`)."""
    tables = (
        ("users.csv", stats.USER_COLUMNS, await ctx.work.read(stats.user_rows)),
        ("dialogs.csv", stats.DIALOG_COLUMNS, await ctx.work.read(stats.dialog_rows)),
        ("leads.csv", stats.LEAD_COLUMNS, await ctx.work.read(stats.lead_rows)),
    )
    documents = [(name, *csv_document(columns, rows)) for name, columns, rows in tables]
    for name, data, count in documents:
        await message.answer_document(
            BufferedInputFile(data, filename=name),
            caption=ctx.tr("admin-export-caption", file=name, rows=count),
        )


# ----------------------------------------------------------------------------------------- /link


async def cmd_link(message: Message, ctx: Ctx, command: CommandObject, bot: Bot) -> None:
    """`/link <source>`: the `https://t.me/<bot>?start=<source>` link and how many users came by it."""
    source = (command.args or "").strip()
    if not source:
        await message.answer(ctx.tr("admin-link-usage"))
        return
    if not DEEP_LINK_PAYLOAD.fullmatch(source):
        await message.answer(ctx.tr("admin-link-invalid", source=escape(source[:80])))
        return
    me = await bot.me()
    link = f"https://t.me/{me.username}?start={source}"
    users = await ctx.work.read(stats.users_from, source)
    await message.answer(ctx.tr("admin-link", source=source, link=link, users=users))


# ---------------------------------------------------------------------------------------- /leads


async def cmd_leads(
    message: Message, ctx: Ctx, command: CommandObject, lead_outbox: LeadOutbox | None = None
) -> None:
    """The leads not delivered to the sales chat yet (pending, a follow-up to edit in, failed), oldest
    first; `/leads resend` makes them all due now (failed ones too) and wakes the outbox."""
    argument = (command.args or "").strip().lower()
    if argument == "resend":
        if lead_outbox is None or not lead_outbox.enabled:
            await message.answer(ctx.tr("admin-leads-no-chat"))
            return
        count = await ctx.work.write(lead_db.resend)
        await message.answer(ctx.tr("admin-leads-resent", count=count))  # commits before it is sent
        lead_outbox.wake()
        return
    if argument:
        await message.answer(ctx.tr("admin-leads-usage"))
        return
    count, rows = await ctx.work.read(lead_db.undelivered, limit=MAX_LEADS)
    if not count:
        await message.answer(ctx.tr("admin-leads-none"))
        return
    lines = [ctx.tr("admin-leads-title", count=count)]
    for lead in rows:
        lines.append(
            ctx.tr(
                "admin-leads-row",
                id=lead.id,
                created=lead.created_at.strftime("%Y-%m-%d %H:%M UTC"),
                status=ctx.tr(f"admin-leads-status-{lead.delivery_status}"),
                attempts=lead.attempts,
                error=escape(clip(lead.last_error or "—", MAX_LEAD_ERROR), quote=False),
            )
        )
    if count > len(rows):
        lines.append(ctx.tr("admin-leads-more", count=count - len(rows)))
    if lead_outbox is None or not lead_outbox.enabled:
        lines.append(ctx.tr("admin-leads-no-chat"))
    else:
        lines.append(ctx.tr("admin-leads-hint"))
    await message.answer("\n".join(lines))


# --------------------------------------------------------------------------------------- /offers


def load_offers(path: Path) -> Catalog:
    """The catalogue with the offers of ``path``, checked as at start (every value within the bounds
    of `core.catalogue.offers.RentalOffer`); ConfigError naming the file, the row and the field otherwise."""
    check_offers_file(path)
    return load_catalog(offers_file=path)


def _problem(error: ConfigError) -> str:
    """What is wrong, as HTML of at most MAX_ERROR characters (a Fluent placeable's limit): escaping
    lengthens a text, so it is cut before escaping, as far as the escaped text needs."""
    raw = str(error).removeprefix("Invalid configuration: ").removeprefix("OFFERS_FILE: ")
    shown = escape(raw)
    while len(shown) > MAX_ERROR:
        raw = raw[: len(raw) * MAX_ERROR // len(shown) - 1]
        shown = escape(raw) + "…"
    return shown


async def cmd_offers(
    message: Message,
    ctx: Ctx,
    command: CommandObject,
    dispatcher: Dispatcher,
    offer_availability: LiveAvailability | None = None,
) -> None:
    """The offers in force; `/offers reload` re-reads OFFERS_FILE, validated before it replaces the
    catalogue the next updates are answered from (a bad file keeps the old one and says why);
    `/offers off|on|request <id>…` sets offers' availability, kept in the database
    (bot.db.availability)."""
    argument = (command.args or "").strip()
    switch, _, ids = argument.partition(" ")
    if switch.lower() in OFFER_SWITCHES and offer_availability is not None:
        await switch_offers(message, ctx, dispatcher, offer_availability, OFFER_SWITCHES[switch.lower()], ids)
        return
    argument = argument.lower()
    if not argument:
        await message.answer(offers_text(ctx, ctx.catalog))
        return
    if argument != "reload":
        await message.answer(ctx.tr("admin-offers-usage") + "\n" + ctx.tr("admin-offers-switch-hint"))
        return
    path = ctx.settings.offers_file
    if path is None:
        await message.answer(ctx.tr("admin-offers-no-file"))
        return
    try:
        catalog = await asyncio.to_thread(load_offers, path)
    except ConfigError as e:
        await message.answer(ctx.tr("admin-offers-bad", error=_problem(e)))
        return
    # The next updates are answered from it (LiveCatalog); this one's answer shows it.
    dispatcher["catalog"] = catalog
    ctx.catalog = await offer_availability.catalog(catalog) if offer_availability else catalog
    await message.answer(ctx.tr("admin-offers-reloaded", file=f"<code>{escape(str(path))}</code>"))
    await message.answer(offers_text(ctx, ctx.catalog))


async def switch_offers(
    message: Message,
    ctx: Ctx,
    dispatcher: Dispatcher,
    live: LiveAvailability,
    availability: Availability,
    ids: str,
) -> None:
    """`/offers off|on|request <id>…`: the offers' availability, kept in the database (every replica
    and a restart see it); this and the next answers are given with it."""
    base: Catalog = dispatcher.workflow_data.get("catalog", ctx.catalog)
    known = {o.id.lower(): o.id for o in base.offers}
    asked = [known.get(i.lower()) for i in ids.split()]
    if not asked or None in asked:
        unknown = [i for i in ids.split() if i.lower() not in known]
        await message.answer(
            ctx.tr(
                "admin-offers-unknown",
                ids=escape(", ".join(unknown)) or "—",
                known=", ".join(f"<code>{escape(o.id)}</code>" for o in base.offers[:MAX_OFFERS]),
            )
        )
        return
    for offer_id in dict.fromkeys(i for i in asked if i is not None):
        await live.set(offer_id, availability, ctx.telegram_id)
    ctx.catalog = await live.catalog(base)
    done = ", ".join(f"<code>{escape(i)}</code>" for i in dict.fromkeys(i for i in asked if i))
    await message.answer(ctx.tr("admin-offers-switched", ids=done, availability=availability))
    await message.answer(offers_text(ctx, ctx.catalog))


# ---------------------------------------------------------------------------------- /measurements


async def cmd_measurements(message: Message, ctx: Ctx, command: CommandObject) -> None:
    """The newest measurements users stored from their logs; `export`: all of them as a CSV."""
    argument = (command.args or "").strip().lower()
    if argument == "export":
        data, count = csv_document(measurements.COLUMNS, await ctx.work.read(measurements.rows))
        caption = ctx.tr("admin-export-caption", file="measurements.csv", rows=count)
        await message.answer_document(BufferedInputFile(data, filename="measurements.csv"), caption=caption)
        return
    if argument:
        await message.answer(ctx.tr("admin-measurements-usage"))
        return
    count, rows = await ctx.work.read(measurements.recent, MAX_LEADS)
    if not count:
        await message.answer(ctx.tr("admin-measurements-none"))
        return
    lines = [ctx.tr("admin-measurements-title", count=count)]
    for m in rows:
        need = f"{m.need_bytes / 2**30:.1f} GiB" if m.need_bytes else "—"
        lines.append(
            ctx.tr(
                "admin-measurements-row",
                id=m.id,
                created=m.created_at.strftime("%Y-%m-%d %H:%M UTC"),
                kind=m.kind,
                gpu=escape(m.gpu or m.gpu_name or "—"),
                model=escape(clip(m.model_id or m.model or "—", MAX_LEAD_ERROR)),
                need=need,
            )
        )
    lines.append(ctx.tr("admin-measurements-usage"))
    await message.answer("\n".join(lines))


class LiveCatalog(BaseMiddleware):
    """Outer middleware: the update is answered from the catalogue in force, ``dispatcher["catalog"]``
    (what `/offers reload` replaces), not from the copy of the dispatcher's data that long polling took
    when it started."""

    async def __call__(
        self,
        handler: Callable[[TelegramObject, dict[str, Any]], Awaitable[Any]],
        event: TelegramObject,
        data: dict[str, Any],
    ) -> Any:
        dispatcher = data.get("dispatcher")
        if isinstance(dispatcher, Dispatcher) and "catalog" in dispatcher.workflow_data:
            data["catalog"] = dispatcher.workflow_data["catalog"]
        live = data.get(AVAILABILITY_KEY)
        if isinstance(live, LiveAvailability) and "catalog" in data:
            data["catalog"] = await live.catalog(data["catalog"])  # /offers off|on|request
        return await handler(event, data)


def make_router() -> Router:
    """A fresh router per Dispatcher (a router attaches to one parent only)."""
    router = FeatureRouter(name="admin")
    router.message.filter(IsAdmin())
    router.message.register(cmd_stats, Command("stats"))
    router.message.register(cmd_export, Command("export"))
    router.message.register(cmd_link, Command("link"))
    router.message.register(cmd_leads, Command("leads"))
    router.message.register(cmd_offers, Command("offers"))
    router.message.register(cmd_measurements, Command("measurements"))
    return router
