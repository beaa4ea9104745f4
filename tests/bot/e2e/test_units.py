"""One card count and one unit per answer, through the real bot in Russian (issue 25, third block;
issue 20, item 2): the cards named are sized as the job is launched on them and never contradicted;
every size says per card and the breakdown adds up to it; a full card does not fit; the words name
models and formats, not ids; an inverse answer names one capacity."""

from __future__ import annotations

import re

from tests.bot.e2e.conftest import Harness, assert_no_failed_calls, text

SIZE = r"([\d ]+,\d) ГБ"


def plain(message_text: str | None) -> str:
    """Russian digit grouping (a no-break space) as a plain space."""
    return (message_text or "").replace("\xa0", " ").replace("\u202f", " ")


def gb(value: str) -> float:
    return float(value.replace(" ", "").replace(",", "."))


async def test_the_cards_named_for_training_are_sized_as_launched_and_never_contradicted(
    harness: Harness,
) -> None:
    user = harness.user(language_code="ru")
    message = plain((await user.send("полное дообучение qwen2.5 7b на 4 h100"))[-1].text)
    lead = message.splitlines()[0]
    assert lead.startswith("✅ На 4× H100 SXM 80 GB влезет: ") and "на карту из 79,6 ГБ" in lead, message
    assert "не влезет" not in message and "148,3" not in message
    assert "FSDP" in message  # the settings say how it was sized
    assert_no_failed_calls(harness.sandbox)


async def test_seventy_b_on_eight_h100_offers_zero3_with_the_optimizer_on_the_cpu(harness: Harness) -> None:
    user = harness.user(language_code="ru")
    message = plain((await user.send("полное дообучение llama 3.1 70b на 8 h100"))[-1].text)
    lead = message.splitlines()[0]
    need = re.search(rf"нужно {SIZE} на карту", lead)
    assert lead.startswith("❌ На 8× H100 SXM 80 GB не влезет") and need, lead
    assert 125 < gb(need.group(1)) < 155, "sharded over 8 cards, not 1 367 GB of replicas"
    offload = next(line for line in message.splitlines() if "ZeRO-3 и состояния оптимизатора на CPU" in line)
    assert offload.startswith("✅") and "тогда влезает на 8× H100 SXM 80 GB" in offload, offload
    assert_no_failed_calls(harness.sandbox)


async def test_a_count_without_a_card_type_is_answered_for_that_count(harness: Harness) -> None:
    user = harness.user(language_code="ru")
    message = plain((await user.send("обучение с нуля 1b модели на 8 картах"))[-1].text)
    assert "8 карт не нужно" in message.splitlines()[0], message
    more = plain((await user.send("llama 3.1 70b bf16 на 2 картах"))[-1].text).splitlines()[0]
    assert "на 2 такие не влезет" in more, more
    assert_no_failed_calls(harness.sandbox)


async def test_the_breakdown_adds_up_to_the_figure_per_card_above_it(harness: Harness) -> None:
    """70B in bf16 leads with four cards: what one of them holds, not the one-card totals."""
    user = harness.user(language_code="ru")
    message = plain((await user.send("llama 3.1 70b"))[-1].text)
    need_line = message.splitlines()[1]
    need = re.match(rf"Нужно {SIZE} на карту из ", need_line)
    assert need, need_line
    parts = [
        gb(m.group(1)) if m.group(2) == "ГБ" else gb(m.group(1)) / 1024
        for m in re.finditer(r"^• [^:]+: ([\d ]+(?:,\d)?) (ГБ|МБ)$", message, re.M)
    ]
    assert parts and abs(sum(parts) - gb(need.group(1))) <= 0.05 * len(parts), (parts, need_line)
    assert_no_failed_calls(harness.sandbox)


async def test_before_and_after_are_per_card_both(harness: Harness) -> None:
    user = harness.user(language_code="ru")
    first = plain((await user.send("llama 3.1 70b"))[-1].text)
    shown = re.match(rf"Нужно {SIZE} на карту", first.splitlines()[1])
    assert shown
    changed = plain((await user.send("а в int4?"))[-1].text)
    change = next(line for line in changed.splitlines() if line.startswith("↔"))
    assert change.startswith(f"↔ Было: {shown.group(1)} ГБ на карту · "), change
    assert "стало: " in change and change.count("на карту") == 2
    assert_no_failed_calls(harness.sandbox)


async def test_a_full_card_does_not_fit_reliably(harness: Harness) -> None:
    user = harness.user(language_code="ru")
    message = plain((await user.send("mistral 7b на t4"))[-1].text)
    lead = message.splitlines()[0]
    assert lead.startswith("❌ На 1× T4 16 GB не влезет надёжно"), lead
    assert "впритык" not in message
    assert_no_failed_calls(harness.sandbox)


async def test_the_words_name_models_and_formats_not_ids(harness: Harness) -> None:
    user = harness.user(language_code="ru")
    result = (await user.send("llama 3.1 70b на 4090 48 8 пользователей"))[-1]
    details = (await user.click(text("btn-details", "ru"), message=result)).messages[-1]
    shown = plain(result.text) + plain(details.text)
    assert "модель поменьше: Llama 3.1 8B" in shown
    assert "llama-3.1-8b" not in shown and "awq-int4" not in shown and "AWQ 4 бита" in shown
    assert not re.search(r"\(\d+\.\d+–\d+\.\d+\)|\d+\.\d+B\b", shown), "numbers in the Russian format"
    gguf = (await user.send("qwen3 30b a3b q4_k_m на 4090"))[-1]
    assumptions = plain((await user.click(text("btn-details", "ru"), message=gguf)).messages[-1].text)
    assert "q4_k_m" not in assumptions and "GGUF Q4_K_M посчитан по тензорам" in assumptions
    assert_no_failed_calls(harness.sandbox)


async def test_an_inverse_answer_names_one_capacity(harness: Harness) -> None:
    """One budget throughout (the engine's: vLLM's 43,2 of 48 GB, llama.cpp's whole card), never the
    card and then the budget."""
    user = harness.user(language_code="ru")
    question = "какая самая большая модель qwen влезет в 4090 48 для 8 пользователей"
    message = plain((await user.send(question))[-1].text)
    assert len(set(re.findall(rf"на карту из {SIZE}", message))) == 1, message
    assert_no_failed_calls(harness.sandbox)


async def test_a_follow_up_to_more_named_cards_is_sized_as_launched_too(harness: Harness) -> None:
    """The last request comes back from the dialog's store: a sharding it did not name stays unnamed."""
    user = harness.user(language_code="ru")
    first = plain((await user.send("полное дообучение qwen2.5 7b на 1 h100"))[-1].text)
    assert first.startswith("❌ На 1× H100 SXM 80 GB не влезет"), first
    more = plain((await user.send("а на 4 картах?"))[-1].text)
    assert more.splitlines()[0].startswith("✅ На 4× H100 SXM 80 GB влезет: "), more
    assert "148,3" not in more
    assert_no_failed_calls(harness.sandbox)
