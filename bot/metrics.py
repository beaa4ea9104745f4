"""The operator's view of a running bot: Prometheus metrics, served as ``GET /metrics`` by the webhook
server (bot.webhook.build_webhook_app; README, "Metrics").

- **Per app.** Each served app has its own ``CollectorRegistry`` (never prometheus_client's global
  one): two apps in one process (tests, an embedding program) never share or clash on a series.
- **Cheap on the update path.** An update costs one counter and one histogram observation, their
  children looked up once per update type (`Metrics.handled`); an error one counter (`count_error`).
- **Counted where it happens, read at scrape time.** The outbox, the CRM push, the picture renderer
  and the Hugging Face look-ups keep plain `Tally`s and `Timing`s (prometheus_client is imported only
  when metrics are served); the database's figures are read by `refresh` before each scrape, bounded
  by SCRAPE_DB_TIMEOUT_S; when that fails the scrape still answers (``gpufit_scrape_database_ok 0``).
"""

from __future__ import annotations

import asyncio
import collections
import logging
from bisect import bisect_left
from collections.abc import Awaitable, Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from aiogram.types import ErrorEvent, TelegramObject, Update
    from prometheus_client.metrics_core import Metric
    from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

    from bot.hf_models import HfModels
    from bot.outbox import LeadOutbox
    from bot.pictures import Pictures

log = logging.getLogger(__name__)

UPDATE_BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0)
"""Seconds from an update's start to its end (bench/bot_load.py: 20-50 ms uncrowded, ~1 s loaded)."""
RENDER_BUCKETS = (0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0)
"""Seconds of one answer picture (bot.pictures: ≤ 150 ms each, RENDER_TIMEOUT_S 5 s at most)."""
HF_BUCKETS = (0.1, 0.25, 0.5, 1.0, 2.0, 3.0, 4.0)
"""Seconds of one Hugging Face look-up (core.model.hub.LOOKUP_BUDGET_S: 3 s, plus
bot.hf_models.WAIT_SLACK_S)."""
SCRAPE_DB_TIMEOUT_S = 2.0
MAX_SOURCES = 50
"""Link sources shown one by one in ``gpufit_leads``; the rest are summed as ``other``, personal links
(``ref_<id>``) as ``ref``: a series per user would grow without bound."""
ALWAYS_SHOWN = frozenset({"ref", "none"})


class Timing:
    """A histogram kept in plain Python (no lock: the event loop's thread observes): bucket counts,
    the sum and the count, exposed by `Metrics` as a Prometheus histogram."""

    def __init__(self, buckets: Sequence[float]) -> None:
        self.buckets = tuple(buckets)
        self.counts = [0] * (len(self.buckets) + 1)  # the last: above every bound (+Inf)
        self.sum = 0.0

    def observe(self, seconds: float) -> None:
        self.counts[bisect_left(self.buckets, seconds)] += 1
        self.sum += seconds

    @property
    def count(self) -> int:
        return sum(self.counts)

    def cumulative(self) -> list[tuple[str, int]]:
        """(upper bound, observations at or below it), ending with +Inf: the exposition's buckets."""
        total, out = 0, []
        for bound, count in zip((*self.buckets, float("inf")), self.counts, strict=True):
            total += count
            out.append(("+Inf" if bound == float("inf") else repr(float(bound)), total))
        return out


@dataclass
class Tally:
    """Plain counters by label value (a send's result, a look-up's outcome)."""

    counts: collections.Counter[str] = field(default_factory=collections.Counter)

    def add(self, label: str) -> None:
        self.counts[label] += 1


@dataclass
class Snapshot:
    """What the database said at the last scrape."""

    ok: bool = False
    inbox_pending: int = 0
    leads_by_status: dict[str, int] = field(default_factory=dict)
    leads_by_source: dict[tuple[str, str], int] = field(default_factory=dict)
    crm_by_status: dict[tuple[str, str], int] = field(default_factory=dict)


def source_label(source: str | None) -> str:
    if not source:
        return "none"
    return "ref" if source.startswith("ref_") else source


def fold_sources(
    rows: Iterable[tuple[str | None, str, int]], limit: int = MAX_SOURCES
) -> dict[tuple[str, str], int]:
    """(source, kind, leads) rows → counts by (label, kind): personal links as ``ref``, no source as
    ``none``, the sources past the ``limit`` busiest as ``other``."""
    by_label: collections.Counter[tuple[str, str]] = collections.Counter()
    for source, kind, count in rows:
        by_label[(source_label(source), kind)] += int(count)
    per_source: collections.Counter[str] = collections.Counter()
    for (label, _), count in by_label.items():
        if label not in ALWAYS_SHOWN:
            per_source[label] += count
    kept = ALWAYS_SHOWN | {label for label, _ in per_source.most_common(limit)}
    folded: collections.Counter[tuple[str, str]] = collections.Counter()
    for (label, kind), count in by_label.items():
        folded[(label if label in kept else "other", kind)] += count
    return dict(folded)


async def read_snapshot(sessionmaker: async_sessionmaker[AsyncSession], bot_id: int) -> Snapshot:
    """The database's figures (four small queries in one read session): the inbox backlog, the
    outbox queue, the CRM deliveries and the leads by source."""
    from sqlalchemy import func, select

    from bot.db.models import CrmDelivery, Lead, ProcessedUpdate

    async with sessionmaker() as session:
        pending = await session.scalar(
            select(func.count())
            .select_from(ProcessedUpdate)
            .where(ProcessedUpdate.bot_id == bot_id, ProcessedUpdate.payload.is_not(None))
        )
        statuses = await session.execute(
            select(Lead.delivery_status, func.count()).group_by(Lead.delivery_status)
        )
        sources = await session.execute(
            select(Lead.source, Lead.kind, func.count()).group_by(Lead.source, Lead.kind)
        )
        crm = await session.execute(
            select(CrmDelivery.destination, CrmDelivery.status, func.count()).group_by(
                CrmDelivery.destination, CrmDelivery.status
            )
        )
        return Snapshot(
            ok=True,
            inbox_pending=int(pending or 0),
            leads_by_status={str(status): int(count) for status, count in statuses},
            leads_by_source=fold_sources((source, str(kind), int(count)) for source, kind, count in sources),
            crm_by_status={(str(d), str(s)): int(count) for d, s, count in crm},
        )


@dataclass
class Sources:
    """What `Metrics` reads at scrape time besides its own series (all optional)."""

    sessionmaker: async_sessionmaker[AsyncSession] | None = None
    bot_id: int = 0
    in_hand: Callable[[], int] = lambda: 0  # updates being handled now
    outbox: LeadOutbox | None = None  # .sends, and .crm (bot.crm.push.CrmPush) .pushes
    pictures: Pictures | None = None  # .render_time, .sent, .skipped, .failed
    hf: HfModels | None = None  # .lookup_time, .lookups


class Metrics:
    """One app's registry: the update path's series, and a collector of everything read at scrape."""

    def __init__(self, sources: Sources | None = None) -> None:
        from prometheus_client import CollectorRegistry, Counter, Histogram

        self.sources = sources or Sources()
        self.snapshot = Snapshot()
        self.registry = CollectorRegistry(auto_describe=True)
        self.updates = Counter(
            "gpufit_updates", "Updates handled, by type.", ["type"], registry=self.registry
        )
        self.update_seconds = Histogram(
            "gpufit_update_handling_seconds",
            "Seconds from an update's start to the end of its handling, by type.",
            ["type"],
            buckets=UPDATE_BUCKETS,
            registry=self.registry,
        )
        self.errors = Counter(
            "gpufit_errors",
            "Updates whose handling raised, by exception class.",
            ["kind"],
            registry=self.registry,
        )
        self._by_type: dict[str, tuple[Any, Any]] = {}
        self.registry.register(_Scraped(self))

    def handled(self, update: Update, seconds: float) -> None:
        """One update handled (bot.dispatcher.BotDispatcher.feed_update): counted and timed."""
        try:
            kind = update.event_type
        except Exception:  # an update of a type this aiogram does not know
            kind = "unknown"
        children = self._by_type.get(kind)
        if children is None:
            children = self._by_type[kind] = (self.updates.labels(kind), self.update_seconds.labels(kind))
        children[0].inc()
        children[1].observe(seconds)

    async def count_error(
        self,
        handler: Callable[[TelegramObject, dict[str, Any]], Awaitable[Any]],
        event: TelegramObject,
        data: dict[str, Any],
    ) -> Any:
        """An outer middleware of the dispatcher's errors observer: every error the errors router sees."""
        error: ErrorEvent = event  # type: ignore[assignment]
        self.errors.labels(type(error.exception).__name__).inc()
        return await handler(event, data)

    async def refresh(self) -> None:
        """Read the database's figures for the next exposition (failing: marked, not raised).

        The picture renderer and the Hugging Face look-ups are one per process (bot.pictures.PICTURES,
        bot.hf_models.HF_MODELS) and record into plain `Timing`s that the exposition reads: they import
        this module without importing prometheus_client."""
        source = self.sources
        if source.sessionmaker is None:
            return
        try:
            self.snapshot = await asyncio.wait_for(
                read_snapshot(source.sessionmaker, source.bot_id), SCRAPE_DB_TIMEOUT_S
            )
        except Exception as e:
            log.warning("metrics: the database figures could not be read (%s)", type(e).__name__)
            self.snapshot = Snapshot(ok=False)

    def exposition(self) -> tuple[bytes, str]:
        """The text format and its content type."""
        from prometheus_client import CONTENT_TYPE_LATEST, generate_latest

        return generate_latest(self.registry), CONTENT_TYPE_LATEST


class _Scraped:
    """A custom collector: the figures kept elsewhere, read at each scrape."""

    def __init__(self, metrics: Metrics) -> None:
        self.metrics = metrics

    def describe(self) -> list[Metric]:
        return []  # names are known only at collection; no clash check needed within this registry

    def collect(self) -> Iterator[Metric]:
        from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily

        source, snap = self.metrics.sources, self.metrics.snapshot
        yield GaugeMetricFamily(
            "gpufit_updates_in_hand", "Updates being handled now.", value=source.in_hand()
        )
        yield GaugeMetricFamily(
            "gpufit_scrape_database_ok", "1 when the database figures below were read.", value=int(snap.ok)
        )
        yield from _database_families(snap)
        if source.outbox is not None:
            sends = CounterMetricFamily(
                "gpufit_lead_outbox_sends",
                "Lead cards sent (or edited) to the sales chat by this process: delivered or failed.",
                labels=["result"],
            )
            for result in ("delivered", "failed"):
                sends.add_metric([result], source.outbox.sends.counts[result])
            yield sends
            crm = source.outbox.crm
            if crm is not None:
                pushes = CounterMetricFamily(
                    "gpufit_crm_pushes",
                    "Lead events pushed to a CRM by this process, by destination and result.",
                    labels=["destination", "result"],
                )
                for name in crm.names:
                    for result in ("delivered", "failed"):
                        pushes.add_metric([name, result], crm.pushes.counts[f"{name}:{result}"])
                yield pushes
        if source.pictures is not None:
            yield from _picture_families(source.pictures)
        if source.hf is not None:
            yield from _hf_families(source.hf)


def _database_families(snap: Snapshot) -> Iterator[Metric]:
    from prometheus_client.core import GaugeMetricFamily

    if not snap.ok:
        return
    yield GaugeMetricFamily(
        "gpufit_inbox_pending_updates",
        "Updates received and not yet handled (the inbox backlog, this bot, every replica).",
        value=snap.inbox_pending,
    )
    from bot.db.models import LEAD_FAILED, LEAD_PENDING, LEAD_UPDATED

    queue = GaugeMetricFamily(
        "gpufit_lead_outbox_leads",
        "Leads whose card is not in the sales chat: pending, updated (a card to edit), failed (given up).",
        labels=["status"],
    )
    for status in (LEAD_PENDING, LEAD_UPDATED, LEAD_FAILED):
        queue.add_metric([status], snap.leads_by_status.get(status, 0))
    yield queue
    leads = GaugeMetricFamily(
        "gpufit_leads", "Leads stored, by the user's first link source and kind.", labels=["source", "kind"]
    )
    for (label, kind), count in sorted(snap.leads_by_source.items()):
        leads.add_metric([label, kind], count)
    yield leads
    crm = GaugeMetricFamily(
        "gpufit_crm_deliveries", "CRM deliveries by destination and status.", labels=["destination", "status"]
    )
    for (destination, status), count in sorted(snap.crm_by_status.items()):
        crm.add_metric([destination, status], count)
    yield crm


def _histogram(name: str, documentation: str, timing: Timing) -> Metric:
    from prometheus_client.core import HistogramMetricFamily

    return HistogramMetricFamily(name, documentation, buckets=timing.cumulative(), sum_value=timing.sum)


def _picture_families(pictures: Pictures) -> Iterator[Metric]:
    from prometheus_client.core import CounterMetricFamily

    yield _histogram(
        "gpufit_picture_render_seconds",
        "Seconds to draw one answer picture (this process).",
        pictures.render_time,
    )
    sent = CounterMetricFamily(
        "gpufit_pictures",
        "Answer pictures asked for in a chat (this process): sent, skipped (renderer busy) or failed.",
        labels=["result"],
    )
    for result in ("sent", "skipped", "failed"):
        sent.add_metric([result], getattr(pictures, result))
    yield sent


def _hf_families(hf: HfModels) -> Iterator[Metric]:
    from prometheus_client.core import CounterMetricFamily

    yield _histogram(
        "gpufit_hf_lookup_seconds", "Seconds of one Hugging Face look-up on the network (this process).",
        hf.lookup_time,
    )  # fmt: skip
    lookups = CounterMetricFamily(
        "gpufit_hf_lookups",
        "Hugging Face look-ups (this process) by outcome: found, not_found, unsupported, refused, "
        "unavailable (failed or timed out), breaker_open and busy (not tried).",
        labels=["result"],
    )
    for result, count in sorted(hf.lookups.counts.items()):
        lookups.add_metric([result], count)
    yield lookups


def serve(web_app: Any, dp: Any, bot_id: int, *, token: str | None = None) -> Metrics:
    """Add ``GET /metrics`` to the aiohttp app serving the bot's dispatcher ``dp`` (a
    bot.dispatcher.BotDispatcher): its updates timed, its errors counted, its outbox, the pictures and the
    Hugging Face look-ups read at each scrape. With ``token``, a scrape must send
    ``Authorization: Bearer <token>`` (else 401)."""
    import secrets

    from aiohttp import web

    from bot.hf_models import HF_MODELS
    from bot.pictures import PICTURES

    metrics = Metrics(
        Sources(
            sessionmaker=dp.inbox.sessionmaker, bot_id=bot_id, in_hand=lambda: len(dp.handling),
            outbox=dp.workflow_data.get("lead_outbox"), pictures=PICTURES, hf=HF_MODELS,
        )
    )  # fmt: skip
    dp.on_handled = metrics.handled
    dp.errors.outer_middleware(metrics.count_error)
    expected = f"Bearer {token}".encode() if token else None

    async def scrape(request: web.Request) -> web.Response:
        given = request.headers.get("Authorization", "").encode()
        if expected is not None and not secrets.compare_digest(given, expected):
            return web.Response(text="Unauthorized", status=401, headers={"WWW-Authenticate": "Bearer"})
        await metrics.refresh()
        body, content_type = metrics.exposition()
        response = web.Response(body=body)
        response.headers["Content-Type"] = content_type
        return response

    web_app.router.add_get("/metrics", scrape)
    return metrics
