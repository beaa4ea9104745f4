"""GET /metrics on the webhook server, scraped over HTTP from the running bot: after a question, button
presses, a lead (delivered to the sales chat) and a crash, the series say so; METRICS_TOKEN guards
it; /healthz is as before; two apps in one process keep their own registries."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import aiohttp
import pytest
from aiohttp import web
from prometheus_client.parser import text_string_to_metric_families
from pydantic import SecretStr

from bot import dialog, hf_models, outbox, pictures
from bot.app import create_app
from bot.metrics import Timing, fold_sources
from bot.webhook import build_webhook_app, ensure_webhook, webhook_runner
from tests.bot.e2e.conftest import (
    QUIET_S,
    REPLY_TIMEOUT_S,
    Harness,
    bot_busy,
    make_settings,
    result_mark,
    text,
)
from tests.bot.updates import message_update
from tests.fake_hub import FakeHub, fixture_config
from tgsandbox import ChatMessage, Sandbox

SECRET = "webhook-secret-123"
TOKEN = "scrape-token-42"
SALES_CHAT = -1009876543210
QUESTION = "llama 3.1 8b int4 32k 4 пользователя"

Samples = dict[tuple[str, tuple[tuple[str, str], ...]], float]


@pytest.fixture(autouse=True)
def fast_backoff(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(outbox, "BACKOFF_BASE_S", 0.05)


@asynccontextmanager
async def serving(tmp_path: Path, template_db: Path, **overrides: Any) -> AsyncIterator[Harness]:
    """The bot in webhook mode with a sales chat, METRICS_TOKEN and ``overrides``; its port in
    ``sandbox.webhook_port``."""
    db_path = tmp_path / "bot.sqlite3"
    db_path.write_bytes(template_db.read_bytes())
    async with Sandbox(quiet_period=QUIET_S, reply_timeout=REPLY_TIMEOUT_S) as sandbox:
        settings = make_settings(
            db_path,
            telegram_api_url=sandbox.base_url,
            sales_chat_id=SALES_CHAT,
            metrics_token=SecretStr(TOKEN),
            **overrides,
        )
        app = await create_app(settings, bot=sandbox.make_bot())
        sandbox.busy_while(lambda: bot_busy(app))
        runner = webhook_runner(build_webhook_app(app, secret=SECRET))
        await runner.setup()
        site = web.TCPSite(runner, "127.0.0.1", 0)
        await site.start()
        port = runner.addresses[0][1]
        sandbox.webhook_port = port  # type: ignore[attr-defined]
        await ensure_webhook(
            app.bot, f"http://127.0.0.1:{port}/webhook", SECRET, app.dp.resolve_used_update_types()
        )
        sandbox.user(id=900, first_name="Manager").in_group(chat_id=SALES_CHAT, title="Sales")
        try:
            yield Harness(sandbox, settings, app=app)
        finally:
            await runner.cleanup()
            await app.close()


@pytest.fixture
async def served(tmp_path: Path, template_db: Path) -> AsyncIterator[Harness]:
    async with serving(tmp_path, template_db) as h:
        yield h


async def get(h: Harness, path: str, headers: dict[str, str] | None = None) -> tuple[int, str, str]:
    port = int(h.sandbox.webhook_port)  # type: ignore[attr-defined]
    url = f"http://127.0.0.1:{port}{path}"
    async with aiohttp.ClientSession() as session, session.get(url, headers=headers or {}) as response:
        return response.status, response.headers.get("Content-Type", ""), await response.text()


async def scrape(h: Harness) -> Samples:
    status, content_type, body = await get(h, "/metrics", {"Authorization": f"Bearer {TOKEN}"})
    assert status == 200 and content_type.startswith("text/plain"), (status, body)
    return {
        (sample.name, tuple(sorted(sample.labels.items()))): sample.value
        for family in text_string_to_metric_families(body)
        for sample in family.samples
    }


def value(samples: Samples, name: str, **labels: str) -> float:
    return samples.get((name, tuple(sorted(labels.items()))), 0.0)


def sales_cards(h: Harness) -> list[ChatMessage]:
    return [m for m in h.sandbox.chat(SALES_CHAT) if m.from_bot]


async def test_metrics_show_updates_leads_and_errors(
    served: Harness, monkeypatch: pytest.MonkeyPatch
) -> None:
    h = served
    before = await scrape(h)
    assert value(before, "gpufit_updates_total", type="message") == 0
    assert value(before, "gpufit_scrape_database_ok") == 1
    assert value(before, "gpufit_inbox_pending_updates") == 0

    user = h.user(username="ann_k")
    await user.send("/start webinar_7")
    result = (await user.send(QUESTION))[-1]
    assert result_mark() in (result.text or "")
    await user.click(text("btn-details"), message=result)  # a button press: a callback query
    await user.click(text("btn-quote"), message=result)
    await user.click(text("btn-lead-username", username="ann_k"))  # a reply keyboard: a message
    await user.send("перезвоните")
    sends = h.app.dp["lead_outbox"].sends.counts  # type: ignore[union-attr]
    await h.sandbox.wait_for(lambda: sends["delivered"] == 1, "the lead's card in the sales chat")
    assert len(sales_cards(h)) == 1

    samples = await scrape(h)
    messages = value(samples, "gpufit_updates_total", type="message")
    presses = value(samples, "gpufit_updates_total", type="callback_query")
    assert messages == 4 and presses == 2
    for kind, count in (("message", messages), ("callback_query", presses)):
        assert value(samples, "gpufit_update_handling_seconds_count", type=kind) == count
        assert value(samples, "gpufit_update_handling_seconds_bucket", type=kind, le="+Inf") == count
        assert 0 < value(samples, "gpufit_update_handling_seconds_sum", type=kind) < count * REPLY_TIMEOUT_S
    assert value(samples, "gpufit_leads", source="webinar_7", kind="quote") == 1
    assert value(samples, "gpufit_lead_outbox_sends_total", result="delivered") == 1
    assert value(samples, "gpufit_lead_outbox_sends_total", result="failed") == 0
    assert value(samples, "gpufit_inbox_pending_updates") == 0
    assert value(samples, "gpufit_updates_in_hand") == 0
    assert sum(v for (name, _), v in samples.items() if name == "gpufit_errors_total") == 0
    for result_label in ("sent", "skipped", "failed"):  # pictures are off in these tests: the series exist
        assert ("gpufit_pictures_total", (("result", result_label),)) in samples
    assert ("gpufit_picture_render_seconds_count", ()) in samples
    assert ("gpufit_hf_lookup_seconds_count", ()) in samples

    def broken(*args: object, **kwargs: object) -> None:
        raise RuntimeError("boom")

    monkeypatch.setattr(dialog, "estimate", broken)
    await h.user().send(QUESTION)
    after = await scrape(h)
    assert value(after, "gpufit_errors_total", kind="RuntimeError") == 1
    assert value(after, "gpufit_updates_total", type="message") == messages + 1


async def test_the_outbox_queue_counts_undelivered_leads(served: Harness) -> None:
    """The sales chat refuses every card: the lead waits in the queue and the failures are counted."""
    h = served
    down = h.sandbox.fail(502, "Bad Gateway", methods=["sendMessage"], chat_id=SALES_CHAT, times=None)
    user = h.user(username="bob")
    await user.send(QUESTION)
    await user.click(text("btn-quote"))
    await user.click(text("btn-lead-username", username="bob"))
    await user.send("-")
    sends = h.app.dp["lead_outbox"].sends.counts  # type: ignore[union-attr]
    await h.sandbox.wait_for(lambda: down.hits >= 2 and sends["failed"] >= 2, "two refused attempts")
    samples = await scrape(h)
    assert value(samples, "gpufit_lead_outbox_sends_total", result="failed") >= 2
    assert value(samples, "gpufit_lead_outbox_sends_total", result="delivered") == 0
    assert value(samples, "gpufit_lead_outbox_leads", status="pending") == 1
    assert value(samples, "gpufit_leads", source="none", kind="quote") == 1


async def test_pictures_and_hugging_face_look_ups(
    tmp_path: Path, template_db: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A model from the (fake) Hub, one the Hub does not have, and the answer's picture: counted and
    timed (a renderer and a look-up of this test's own, as the production ones are one per process)."""
    renderer, lookups = pictures.Pictures(timeout_s=30.0), hf_models.HfModels(budget_s=2.0)
    for module in (dialog, pictures):
        monkeypatch.setattr(module, "PICTURES", renderer)
    for module in (dialog, hf_models):
        monkeypatch.setattr(module, "HF_MODELS", lookups)
    clone = "acme/Llama-Clone-8B"
    with FakeHub({clone: (fixture_config("meta-llama/Llama-3.1-8B"), {"BF16": 8_030_261_248})}) as hub:
        settings = {"hf_lookup": True, "hf_endpoint": hub.url, "answer_pictures": True}
        try:
            async with serving(tmp_path, template_db, **settings) as h:
                user = h.user()
                found = await user.send(f"{clone} int4 32k")
                assert result_mark() in (found[0].text or "")
                # the worker (started with the bot) may take seconds on a busy machine: waited for as such
                await h.sandbox.wait_for(lambda: renderer.sent == 1, "the answer's picture", timeout=60)
                await user.send("acme/no-such-model int4")
                samples = await scrape(h)
        finally:
            await renderer.close()
    assert value(samples, "gpufit_hf_lookups_total", result="found") == 1
    assert value(samples, "gpufit_hf_lookups_total", result="not_found") == 1
    assert value(samples, "gpufit_hf_lookup_seconds_count") == 2
    assert value(samples, "gpufit_hf_lookup_seconds_bucket", le="+Inf") == 2
    assert value(samples, "gpufit_pictures_total", result="sent") == 1
    assert value(samples, "gpufit_picture_render_seconds_count") == 1
    assert 0 < value(samples, "gpufit_picture_render_seconds_sum") < 30


@pytest.mark.parametrize(
    "headers",
    [{}, {"Authorization": "Bearer wrong"}, {"Authorization": TOKEN}, {"Authorization": f"Basic {TOKEN}"}],
    ids=["none", "wrong", "no-scheme", "basic"],
)
async def test_metrics_need_the_token(served: Harness, headers: dict[str, str]) -> None:
    status, _, body = await get(served, "/metrics", headers)
    assert status == 401 and "gpufit" not in body


async def test_healthz_is_unchanged(served: Harness) -> None:
    status, _, body = await get(served, "/healthz")
    assert status == 200 and body == '{"ok": true, "database": "ok"}'


async def test_two_apps_keep_their_own_registries(tmp_path: Path, template_db: Path) -> None:
    """Each app's /metrics counts its own updates (no global registry shared, no duplicate names)."""
    db_path = tmp_path / "bot.sqlite3"
    db_path.write_bytes(template_db.read_bytes())
    async with Sandbox(quiet_period=QUIET_S, reply_timeout=REPLY_TIMEOUT_S) as sandbox:
        settings = make_settings(db_path, telegram_api_url=sandbox.base_url)
        apps = [await create_app(settings, bot=sandbox.make_bot()) for _ in range(2)]
        webs = [build_webhook_app(app, secret=None) for app in apps]
        try:
            metrics: list[Any] = [app.inbox_dp.on_handled.__self__ for app in apps]  # type: ignore[union-attr]
            assert metrics[0].registry is not metrics[1].registry
            metrics[0].handled(message_update(1), 0.01)
            counts = [
                m.registry.get_sample_value("gpufit_updates_total", {"type": "message"}) for m in metrics
            ]
            assert counts == [1.0, None]
            assert webs[0] is not webs[1]
        finally:
            for app in apps:
                await app.close()


def test_sources_are_folded() -> None:
    rows = [
        ("ref_1", "quote", 2),
        ("ref_2", "quote", 1),
        (None, "quote", 3),
        ("a", "quote", 5),
        ("b", "quote", 1),
    ]
    assert fold_sources(rows, limit=1) == {
        ("ref", "quote"): 3, ("none", "quote"): 3, ("a", "quote"): 5, ("other", "quote"): 1
    }  # fmt: skip
    assert fold_sources(rows)[("a", "quote")] == 5


def test_timing_buckets_are_cumulative() -> None:
    timing = Timing((0.1, 1.0))
    for seconds in (0.05, 0.1, 0.5, 3.0):
        timing.observe(seconds)
    assert timing.cumulative() == [("0.1", 2), ("1.0", 3), ("+Inf", 4)] and timing.count == 4
