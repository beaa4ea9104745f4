"""A Hugging Face id (or link) the catalogue lacks, asked in the bot: read from a local fake Hub and
answered; cached in the database, so a later user is answered with the Hub gone; not found, offline or
unreadable: one clear sentence in the user's language, at once."""

from __future__ import annotations

import time
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest
from sqlalchemy import select

from bot import dialog, hf_models
from bot.db import hf_cache
from bot.db.engine import create_engine, create_sessionmaker
from bot.db.models import Lead
from tests.bot.e2e.conftest import (
    Harness,
    assert_no_failed_calls,
    result_mark,
    running_bot,
    text,
)
from tests.fake_hub import FakeHub, fixture_config
from tgsandbox import ChatMessage, SandboxUser

CLONE = "acme/Llama-Clone-8B"  # Llama 3.1 8B's config under a name the catalogue does not know
BUDGET_S = 0.5  # the look-up's budget in these tests (production: 3 s)


@pytest.fixture
def hub() -> Iterator[FakeHub]:
    with FakeHub({CLONE: (fixture_config("meta-llama/Llama-3.1-8B"), {"BF16": 8_030_261_248})}) as fake:
        fake.models["acme/broken"] = (fixture_config("acme/broken"), None)
        yield fake


@pytest.fixture
async def harness(
    tmp_path: Path, template_db: Path, hub: FakeHub, monkeypatch: pytest.MonkeyPatch
) -> AsyncIterator[Harness]:
    monkeypatch.setattr(dialog, "HF_MODELS", hf_models.HfModels(budget_s=BUDGET_S))
    async with running_bot(tmp_path, template_db, hf_lookup=True, hf_endpoint=hub.url) as h:
        yield h


async def cached(harness: Harness, repo_id: str) -> hf_cache.HubAnswer | None:
    engine = create_engine(harness.db_url)
    try:
        async with create_sessionmaker(engine)() as session:
            return await hf_cache.get(session, repo_id)
    finally:
        await engine.dispose()


@pytest.mark.parametrize(
    ("question", "lang"),
    [(f"{CLONE} int4 32k", "ru"), (f"https://huggingface.co/{CLONE} on 2x 4090 48", "en")],
)
async def test_a_model_from_the_hub_is_answered(
    harness: Harness, hub: FakeHub, question: str, lang: str
) -> None:
    user = harness.user(language_code=lang)
    (reply,) = await user.send(question)
    assert result_mark(lang) in (reply.text or "")
    assert CLONE in (reply.text or "")
    assert len(hub.requests) == 2  # config.json and the parameter counts, nothing more
    answer = await cached(harness, CLONE)
    assert answer is not None and answer.status == hf_cache.FOUND and answer.parameter_counts
    # details and a follow-up size it again from what was read, without the Hub
    await user.click(text("btn-details", lang))
    (changed,) = await user.send("а в fp8?" if lang == "ru" else "and in fp8?")
    assert result_mark(lang) in (changed.text or "")
    assert len(hub.requests) == 2
    assert_no_failed_calls(harness.sandbox)


async def test_a_second_user_is_answered_from_the_cache_with_the_hub_gone(
    harness: Harness, hub: FakeHub, monkeypatch: pytest.MonkeyPatch
) -> None:
    (first,) = await harness.user().send(f"{CLONE} int4")
    assert result_mark("ru") in (first.text or "")
    hub.stop()
    # another replica (or a restart): nothing in memory, only the database
    monkeypatch.setattr(dialog, "HF_MODELS", hf_models.HfModels(budget_s=BUDGET_S))
    start = time.monotonic()
    (second,) = await harness.user(language_code="en").send(CLONE.lower() + " int4")
    assert time.monotonic() - start < BUDGET_S + 1.0
    assert result_mark("en") in (second.text or "")
    assert dialog.HF_MODELS.fetches == 0


async def answered_then_restarted(
    harness: Harness, hub: FakeHub, monkeypatch: pytest.MonkeyPatch
) -> tuple[SandboxUser, ChatMessage]:
    """A user answered about a looked-up model, then a deploy: the Hub gone, nothing in memory."""
    user = harness.user(language_code="en")
    (first,) = await user.send(f"{CLONE} int4")
    assert result_mark("en") in (first.text or "")
    hub.stop()
    monkeypatch.setattr(dialog, "HF_MODELS", hf_models.HfModels(budget_s=BUDGET_S))
    await harness.restart()
    return user, first


async def test_details_after_a_restart_size_the_model_again_from_the_cache(
    harness: Harness, hub: FakeHub, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A deploy between the answer and "📋 Details": the looked-up model is gone from memory, the
    database still has it; the details are shown, not "this button is outdated"."""
    user, first = await answered_then_restarted(harness, hub, monkeypatch)
    answer = await user.click(text("btn-details", "en"), message=first)
    assert answer.text != text("stale-button", "en")
    (details,) = answer.messages
    assert details.text
    assert dialog.HF_MODELS.fetches == 0
    assert_no_failed_calls(harness.sandbox)


async def test_one_line_answers_size_a_model_looked_up_before_a_restart(
    harness: Harness, hub: FakeHub, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Inline answers and group mentions come at once, never from the network; a model the
    database knows is sized."""
    user, _ = await answered_then_restarted(harness, hub, monkeypatch)
    answer = await user.inline(f"{CLONE} int4")
    (article,) = answer.results
    assert article["id"] == "estimate"
    unknown = await user.inline("acme/never-looked-up-7b int4")
    assert [result["id"] for result in unknown.results] == ["help"]
    member = harness.user(language_code="en").in_group(chat_id=-4000)
    (reply,) = await member.send(f"@{harness.sandbox.bot_user.username} {CLONE} int4")
    assert reply.text != text("group-private-only", "en", bot=harness.sandbox.bot_user.username)
    assert dialog.HF_MODELS.fetches == 0


async def test_not_found_is_said_in_the_users_language(harness: Harness) -> None:
    (ru,) = await harness.user(language_code="ru").send("acme/no-such-model-7b на 4090")
    assert ru.text == text("hf-not-found", "ru", model="acme/no-such-model-7b")
    (en,) = await harness.user(language_code="en").send("acme/no-such-model-7b")
    assert en.text == text("hf-not-found", "en", model="acme/no-such-model-7b")
    answer = await cached(harness, "acme/no-such-model-7b")
    assert answer is not None and answer.status == hf_cache.NOT_FOUND  # not asked again for a while


async def test_a_stalled_hub_is_answered_within_the_budget(harness: Harness, hub: FakeHub) -> None:
    hub.stall = True
    start = time.monotonic()
    (reply,) = await harness.user(language_code="ru").send(f"{CLONE} int4")
    assert time.monotonic() - start < BUDGET_S + 1.5  # no 25-second retries
    assert reply.text == text("hf-unavailable", "ru", model=CLONE, seconds=3)
    assert await cached(harness, CLONE) is None  # "try later" is not remembered


async def test_a_config_we_do_not_read_is_said_so(harness: Harness) -> None:
    (reply,) = await harness.user(language_code="en").send("acme/broken")
    assert reply.text == text("hf-unsupported", "en", model="acme/broken")


async def test_catalogue_models_never_reach_the_hub(harness: Harness, hub: FakeHub) -> None:
    (reply,) = await harness.user().send("meta-llama/Llama-3.1-8B int4")
    assert result_mark("ru") in (reply.text or "")
    assert hub.requests == []


async def test_lookups_turned_off_answer_from_the_catalogue_only(
    tmp_path: Path, template_db: Path, hub: FakeHub
) -> None:
    async with running_bot(tmp_path, template_db, hf_endpoint=hub.url) as h:  # hf_lookup off by default
        (reply,) = await h.user(language_code="en").send(f"{CLONE} int4")
        assert result_mark("en") not in (reply.text or "")
        assert hub.requests == []


async def test_the_dialog_takes_a_hub_id_typed_at_the_model_step(harness: Harness, hub: FakeHub) -> None:
    user = harness.user(language_code="en")
    await user.send("/start")
    await user.click(text("task-inference", "en"))
    await user.send(CLONE)  # typed instead of picking a button
    for _ in range(6):  # the remaining steps, each answered with its first button
        last = user.last_message()
        if result_mark("en") in (last.text or ""):
            break
        first = next(b for row in last.buttons for b in row if b.callback_data)
        await user.click(first.text)
    assert result_mark("en") in (user.last_message().text or "")
    assert CLONE in (user.last_message().text or "")
    assert len(hub.requests) == 2
    assert_no_failed_calls(harness.sandbox)


@pytest.mark.parametrize(
    ("question", "lang"),
    [
        (f"сравни 4090 48 и h100 для {CLONE}", "ru"),
        (f"compare 4090 48 vs h100 for https://huggingface.co/{CLONE}", "en"),
    ],
)
async def test_a_comparison_looks_the_model_up_first(
    harness: Harness, hub: FakeHub, question: str, lang: str
) -> None:
    """A comparison is the first question about the model: it is read from the Hub, not refused."""
    (reply,) = await harness.user(language_code=lang).send(question)
    body = reply.text or ""
    assert "RTX 4090 48 GB" in body and "H100" in body, body
    assert len(hub.requests) == 2
    assert await cached(harness, CLONE) is not None
    assert_no_failed_calls(harness.sandbox)


async def test_compare_with_after_a_hub_answer_sizes_the_same_model(harness: Harness, hub: FakeHub) -> None:
    user = harness.user(language_code="en")
    (first,) = await user.send(f"{CLONE} int4 on 4090 48")
    assert result_mark("en") in (first.text or "")
    (compared,) = await user.send("compare with h100")
    assert "H100" in (compared.text or "") and "RTX 4090 48 GB" in (compared.text or ""), compared.text
    assert len(hub.requests) == 2  # sized from what was read


async def test_a_comparison_of_a_model_not_on_the_hub_says_so(harness: Harness) -> None:
    (reply,) = await harness.user(language_code="ru").send("сравни 4090 48 и h100 для acme/no-such-model-7b")
    assert reply.text == text("hf-not-found", "ru", model="acme/no-such-model-7b")


async def test_a_quote_after_a_hub_model_carries_its_configuration(harness: Harness, hub: FakeHub) -> None:
    """The quote form sizes the last request as the dialog did: from the model read from the Hub."""
    user = harness.user(language_code="en", username="ann_k")
    (reply,) = await user.send(f"{CLONE} int4 32k")
    assert result_mark("en") in (reply.text or "")
    await user.click(text("btn-quote", "en"))
    ask = user.last_message().text or ""
    assert CLONE in ask and text("lead-no-config", "en") not in ask
    await user.click(text("btn-lead-username", "en", username="ann_k"))
    await user.send("soon, please")
    engine = create_engine(harness.db_url)
    try:
        async with create_sessionmaker(engine)() as session:
            (lead,) = list(await session.scalars(select(Lead)))
    finally:
        await engine.dispose()
    assert lead.summary["model_id"] == CLONE and lead.summary["headline"]
    assert len(hub.requests) == 2  # sized again from what was read, without the Hub
    assert_no_failed_calls(harness.sandbox)
