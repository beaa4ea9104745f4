"""A slow or hostile Hugging Face mirror (tests.fake_hub modes) against the real bot: look-ups end
within their deadline and never hold the bot (the admin's `/offers reload`, other users); a Hub that
keeps failing is not asked for a while; ids the Hub cannot have and configs no model has get one
clear sentence in the user's language, and are not cached."""

from __future__ import annotations

import asyncio
import shutil
import time
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import pytest

from bot import dialog, hf_models
from bot.db import hf_cache
from bot.db.engine import create_engine, create_sessionmaker
from core.catalogue.load import DATA_DIR
from tests.bot.e2e.conftest import ADMIN_ID, Harness, assert_no_failed_calls, result_mark, running_bot, text
from tests.bot.e2e.test_hf_lookup import cached
from tests.fake_hub import FakeHub, fixture_config

CLONE = "acme/Llama-Clone-8B"
COUNTS = {"BF16": 8_030_261_248}
LLAMA = fixture_config("meta-llama/Llama-3.1-8B")
BUDGET_S = 0.5  # the look-up's deadline in these tests (production: 3 s)


class Clock:
    """The breaker's clock, moved by the test (no waiting for it to close)."""

    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def hub() -> Iterator[FakeHub]:
    with FakeHub({CLONE: (LLAMA, COUNTS)}) as fake:
        yield fake


@pytest.fixture
def clock(monkeypatch: pytest.MonkeyPatch) -> Clock:
    clock = Clock()
    breaker = hf_models.Breaker(clock=clock)
    monkeypatch.setattr(dialog, "HF_MODELS", hf_models.HfModels(budget_s=BUDGET_S, breaker=breaker))
    return clock


@pytest.fixture
async def harness(tmp_path: Path, template_db: Path, hub: FakeHub, clock: Clock) -> AsyncIterator[Harness]:
    offers = tmp_path / "offers.toml"
    shutil.copy(DATA_DIR / "offers.toml", offers)
    async with running_bot(
        tmp_path, template_db, hf_lookup=True, hf_endpoint=hub.url,
        admin_ids=frozenset({ADMIN_ID}), offers_file=offers,
    ) as h:  # fmt: skip
        yield h


@pytest.mark.parametrize(
    ("question", "model", "lang"),
    [
        ("https://huggingface.co/org/модель", "org/модель", "ru"),
        ("https://huggingface.co/org/модель int4", "org/модель", "en"),
        ("https://hf.co/acme/Модель-7B на 4090", "acme/Модель-7B", "ru"),
    ],
)
async def test_an_id_the_hub_cannot_have_is_said_so(
    harness: Harness, hub: FakeHub, question: str, model: str, lang: str
) -> None:
    (reply,) = await harness.user(language_code=lang).send(question)
    assert reply.text == text("hf-not-a-hub-id", lang, model=model)
    assert hub.requests == []
    assert_no_failed_calls(harness.sandbox)


def llama(**changes: Any) -> dict[str, Any]:
    return {**LLAMA, **changes}


@pytest.mark.parametrize(
    ("config", "counts", "key", "args"),
    [
        (llama(num_attention_heads=0), COUNTS, "hf-refused-range",
         {"field": "num_attention_heads", "value": "0", "least": "1", "most": "1024"}),
        (llama(num_hidden_layers=10**9), None, "hf-refused-range",
         {"field": "num_hidden_layers", "value": "1000000000", "least": "1", "most": "1000"}),
        (llama(vocab_size=10**30), None, "hf-refused-range",
         {"field": "vocab_size", "value": str(10**30), "least": "1", "most": "4194304"}),
        (llama(hidden_size=1e308), COUNTS, "hf-refused-range",
         {"field": "hidden_size", "value": "1e+308", "least": "1", "most": "65536"}),
        (LLAMA, {"BF16": 1000}, "hf-refused-inconsistent",
         {"field": "num_hidden_layers, hidden_size", "params": "1e-06B"}),
        (llama(num_attention_heads=[32]), COUNTS, "hf-refused-malformed", {"field": "num_attention_heads"}),
    ],
)  # fmt: skip
@pytest.mark.parametrize("lang", ["ru", "en"])
async def test_a_config_no_model_has_is_refused_and_not_cached(
    harness: Harness,
    hub: FakeHub,
    config: dict[str, Any],
    counts: Any,
    key: str,
    args: dict[str, str],
    lang: str,
) -> None:
    hub.models["acme/hostile-8b"] = (config, counts)
    user = harness.user(language_code=lang)
    (reply,) = await user.send("acme/hostile-8b int4")
    assert reply.text == text(key, lang, model="acme/hostile-8b", **args)
    assert await cached(harness, "acme/hostile-8b") is None  # not kept for 30 days (nor at all)
    hub.models["acme/hostile-8b"] = (LLAMA, COUNTS)  # fixed upstream: the next question is answered
    (fixed,) = await user.send("acme/hostile-8b int4")
    assert result_mark(lang) in (fixed.text or "")
    assert_no_failed_calls(harness.sandbox)


async def test_an_absurd_config_cached_before_the_checks_is_refused(harness: Harness, hub: FakeHub) -> None:
    """A row an older version kept for 30 days (10^9 layers) is checked when read: refused, not
    sized, and the Hub is not asked."""
    engine = create_engine(harness.db_url)
    try:
        async with create_sessionmaker(engine)() as session, session.begin():
            absurd = hf_cache.HubAnswer("acme/old-8b", hf_cache.FOUND, llama(num_hidden_layers=10**9))
            await hf_cache.put(session, absurd)
    finally:
        await engine.dispose()
    (reply,) = await harness.user(language_code="en").send("acme/old-8b int4")
    args = {"field": "num_hidden_layers", "value": "1000000000", "least": "1", "most": "1000"}
    assert reply.text == text("hf-refused-range", "en", model="acme/old-8b", **args)
    assert hub.requests == []


async def test_a_nested_config_is_refused(harness: Harness, hub: FakeHub) -> None:
    hub.raw_configs["acme/nested"] = b'{"model_type": "llama", "x": ' + b"[" * 100_000 + b"]" * 100_000 + b"}"
    (reply,) = await harness.user(language_code="en").send("acme/nested")
    assert reply.text == text("hf-refused-malformed", "en", model="acme/nested", field="config.json")


async def test_a_dripping_mirror_is_answered_within_the_deadline(harness: Harness, hub: FakeHub) -> None:
    hub.drip_s = 0.05  # a byte every 50 ms: the answer would take minutes
    start = time.monotonic()
    (reply,) = await harness.user(language_code="en").send(f"{CLONE} int4")
    assert time.monotonic() - start < 2 * BUDGET_S + 1.0
    assert reply.text == text("hf-unavailable", "en", model=CLONE, seconds=3)


async def test_slow_look_ups_hold_neither_other_users_nor_the_admin(harness: Harness, hub: FakeHub) -> None:
    """Eight users name eight models while the mirror drips. Before, each look-up held a thread of
    the loop's default executor for as long as the server dripped, and `/offers reload` (a thread
    of that executor too) got no reply for seconds. Now at most MAX_LOOKUPS reach the Hub, each ends
    at its deadline, and the admin and a catalogue question are answered at once."""
    hub.drip_s = 0.05
    users = [harness.user(language_code="en") for _ in range(8)]
    start = time.monotonic()
    replies = await asyncio.gather(*(u.send(f"acme/slow-{i}-8b int4") for i, u in enumerate(users)))
    assert time.monotonic() - start < 2 * BUDGET_S + 2.0
    for i, (reply,) in enumerate(replies):
        assert reply.text == text("hf-unavailable", "en", model=f"acme/slow-{i}-8b", seconds=3)
    admin = harness.sandbox.user(id=ADMIN_ID, language_code="en")
    start = time.monotonic()
    reloaded = await admin.send("/offers reload")
    assert time.monotonic() - start < 2.0
    assert reloaded[0].text is not None and reloaded[0].text.startswith("✅")
    assert len(hub.requests) <= hf_models.MAX_LOOKUPS
    (answer,) = await harness.user(language_code="en").send("llama 3.1 8b int4")
    assert result_mark("en") in (answer.text or "")
    assert_no_failed_calls(harness.sandbox)


async def test_a_failing_hub_is_not_asked_for_a_while(harness: Harness, hub: FakeHub, clock: Clock) -> None:
    hub.fail_with = 503
    user = harness.user(language_code="ru")
    for i in range(hf_models.BREAKER_FAILURES):
        (reply,) = await user.send(f"acme/down-{i}-8b")
        assert reply.text == text("hf-unavailable", "ru", model=f"acme/down-{i}-8b", seconds=3)
    asked = len(hub.requests)
    assert asked == hf_models.BREAKER_FAILURES  # config.json each time, nothing more
    hub.fail_with = None
    (fast,) = await user.send(f"{CLONE} int4")  # the breaker is open: not asked, answered at once
    assert fast.text == text("hf-unavailable", "ru", model=CLONE, seconds=3)
    assert len(hub.requests) == asked
    clock.now += hf_models.BREAKER_OPEN_S  # time passes: one look-up is let through, and it works
    (found,) = await user.send(f"{CLONE} int4")
    assert result_mark("ru") in (found.text or "")
    assert len(hub.requests) == asked + 2
    assert_no_failed_calls(harness.sandbox)
