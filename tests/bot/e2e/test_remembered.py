"""The dialog's remembered estimates (`bot.dialog.ESTIMATES`) through the real bot: "📋 Details" and
follow-ups reuse the last estimate, never one sized from a catalogue no longer in force, and nothing
the bot does with a remembered result changes it."""

from __future__ import annotations

from typing import Any

import pytest

from bot import dialog
from core.inverse.solve import run
from core.sizing.memo import Estimates
from tests.bot.e2e.conftest import (
    ADMIN_ID,
    Harness,
    assert_no_failed_calls,
    result_mark,
    text,
)

QUESTION = "llama 3.1 8b int8 8k"
H100_ONLY = (
    '[[offer]]\nid = "h100-x1"\ngpu = "h100-sxm"\ncount = 1\nprice_per_hour = 300\ncurrency = "RUB"\n'
    'url = "https://example.com/h100"\n'
)


@pytest.fixture
def estimates(monkeypatch: pytest.MonkeyPatch) -> Estimates:
    """A memory of this test's own (the bot's is one per process)."""
    fresh = Estimates()
    monkeypatch.setattr(dialog, "ESTIMATES", fresh)
    return fresh


def headline(message: Any) -> str:
    return str(message.text).splitlines()[0]


async def test_details_after_an_offers_reload_are_sized_from_the_new_offers(
    admin_harness: Harness, estimates: Estimates
) -> None:
    h = admin_harness
    assert h.settings.offers_file is not None
    user = h.user(language_code="en")
    (answer,) = await user.send(QUESTION)
    before = (await user.click(text("btn-details", "en"), message=answer)).messages[-1]
    assert "RTX 4090" in headline(answer) and headline(before) == headline(answer)
    assert estimates.hits == 1  # the details reused the answer's estimate

    h.settings.offers_file.write_text(H100_ONLY)
    admin = h.sandbox.user(id=ADMIN_ID, first_name="Boss", username="boss", language_code="en")
    replies = await admin.send("/offers reload")
    assert replies[0].text == text("admin-offers-reloaded", "en", file=str(h.settings.offers_file))

    after = (await user.click(text("btn-details", "en"), message=answer)).messages[-1]
    assert "H100" in headline(after) and "RTX 4090" not in headline(after)
    assert_no_failed_calls(h.sandbox)


async def test_what_the_bot_does_with_a_remembered_result_leaves_it_as_sized(
    harness: Harness, estimates: Estimates
) -> None:
    ru, en = harness.user(language_code="ru"), harness.user(language_code="en")
    first = (await ru.send("llama 3.1 70b bf16"))[-1]
    await ru.click(text("btn-details", "ru"), message=first)
    changed = (await ru.send("а в int4?"))[-1]  # the previous answer sized again, to say what changed
    assert any(line.startswith("↔") for line in (changed.text or "").splitlines())
    await ru.click(text("btn-details", "ru"), message=changed)
    await ru.send("а на h100?")
    await ru.send("сравни 4090 48 и h100")  # sized card by card (`core.inverse.comparison`), not remembered
    (same,) = await en.send("llama 3.1 70b bf16")  # another user, another language
    assert result_mark("en") in (same.text or "")
    await en.click(text("btn-details", "en"), message=same)
    assert estimates.hits >= 5  # two details, two previous answers, the second user's question
    remembered = estimates.remembered()
    assert len(remembered) == 3  # bf16, int4, int4 on an H100
    hub = dialog.HF_MODELS.hub()
    for catalog, request, result in remembered:
        assert result.model_dump_json() == run(request, catalog, hub=hub).model_dump_json()
    assert_no_failed_calls(harness.sandbox)
