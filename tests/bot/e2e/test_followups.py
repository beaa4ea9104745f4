"""The answer as a lead reads it, through the real bot: the flagship card read right, the user's own card
answered first, follow-ups that change the last answer and say how, cards compared side by side."""

from __future__ import annotations

import pytest

from core.language import words as core_texts
from tests.bot.e2e.conftest import Harness, assert_no_failed_calls, result_mark, text


def lines(message_text: str | None) -> list[str]:
    return plain(message_text).splitlines()


def plain(message_text: str | None) -> str:
    """The text with Russian digit grouping (a no-break space: '32\xa0768') as a plain space."""
    return (message_text or "").replace("\xa0", " ")


@pytest.mark.parametrize(
    ("question", "lang"),
    [
        ("llama 3.1 8b на 4090 48гб", "ru"),
        ("llama 3.1 8b 4090 48 гб", "ru"),
        ("llama 3.1 8b на 4090 на 48", "ru"),
        ("llama 3.1 8b on a 4090 48g", "en"),
    ],
)
async def test_the_flagship_card_is_read_and_rented(harness: Harness, question: str, lang: str) -> None:
    user = harness.user(language_code=lang)
    result = (await user.send(question))[-1]
    lead = lines(result.text)[0]
    assert lead.startswith("✅") and "1× RTX 4090 48 GB" in lead
    assert "149 ₽" in lead  # the priced offer, not "contact us"
    assert [(b.url or "").split("?")[0] for row in result.buttons for b in row if b.url] == [
        "https://example.com/gpu-rent/rtx4090-48gb-x1"  # UTM-tagged (test_leads.py checks the tags)
    ]
    assert_no_failed_calls(harness.sandbox)


async def test_the_users_own_card_comes_first_then_what_to_rent(harness: Harness) -> None:
    user = harness.user(language_code="ru")
    result = (await user.send("квен 2.5 14б на 3090"))[-1]
    first, second = lines(result.text)[:2]
    assert first.startswith("❌") and "1× RTX 3090 24 GB" in first  # my card: does not fit
    assert "1× RTX 4090 48 GB" in second and "149 ₽/ч" in second and "ток/с" in second
    how = core_texts.t("answer-mitigations-own", "ru", config="1× RTX 3090 24 GB")
    assert how in (result.text or "")  # and how to make it fit on my card
    assert core_texts.t("price-not-offered", "ru") not in (result.text or "")


async def test_a_follow_up_changes_the_last_answer_and_says_what_changed(harness: Harness) -> None:
    user = harness.user(language_code="ru")
    first = (await user.send("llama 3.1 70b bf16"))[-1]
    assert result_mark("ru") in (first.text or "")
    changed = (await user.send("а в int4?"))[-1]
    assert changed.message_id != first.message_id
    change = next(line for line in lines(changed.text) if line.startswith("↔"))
    assert "Было:" in change and "стало:" in change
    assert "int4" in (changed.text or "")
    more = (await user.send("а на 8 картах h100?"))[-1]
    assert "8× H100" in (more.text or "") or "H100" in lines(more.text)[0]
    context = (await user.send("а с контекстом 32k?"))[-1]
    assert "32 768 токенов" in plain(context.text)
    assert "Не знаю модель" not in (context.text or "")
    assert_no_failed_calls(harness.sandbox)


async def test_another_precision_from_the_buttons_compares_with_the_previous_answer(harness: Harness) -> None:
    user = harness.user(language_code="en")
    await user.send("llama 3.1 8b bf16 8k")
    await user.click(text("btn-change-precision", "en"))
    answer = await user.click("int4")
    result = answer.messages[-1]
    assert any(line.startswith("↔ Before:") for line in lines(result.text)), result.text


async def test_two_cards_side_by_side(harness: Harness) -> None:
    user = harness.user(language_code="ru")
    reply = (await user.send("сравни 4090 48 и h100 для llama 3.1 70b int4"))[-1]
    rows = [line for line in lines(reply.text) if "RTX 4090 48 GB" in line or "H100" in line]
    assert len(rows) >= 2 and rows[0].startswith(("✅", "⚠️", "❌"))
    after = (await user.send("сравни с b200"))[-1]  # against the card of the last question
    assert "B200" in (after.text or "")
    assert_no_failed_calls(harness.sandbox)


async def test_details_show_every_verdict_and_the_assumptions(harness: Harness) -> None:
    user = harness.user(language_code="ru")
    result = (await user.send("llama 3.1 8b int4 32k 4 пользователя"))[-1]
    assert len(result.text or "") < 1500
    assert "4 пользователя" in plain(result.text) and "ГиБ" not in (result.text or "")
    details = (await user.click(text("btn-details", "ru"), message=result)).messages[-1]
    assert core_texts.t("answer-assumptions", "ru") in (details.text or "")
    assert details.message_id != result.message_id  # the short answer stays above
