"""The result message: the decision in its first two lines, the same answer as the CLI, and always one
valid message; its details (the "More" button) name the same configurations as the CLI."""

from __future__ import annotations

import re
from typing import Any

import pytest

from bot.presenter import (
    BUDGET,
    KEEP_MITIGATIONS,
    MAX_MESSAGE,
    render_comparison,
    render_details,
    render_result,
)
from core.catalogue.catalog import default_catalog
from core.contract import Assumption, Mitigation, Result
from core.inverse.comparison import compare
from core.language import words as core_texts
from core.language.answer import LEAD_MITIGATIONS, build_answer
from core.language.phrases import verdicts_to_show
from core.layouts.plain import render_answer
from core.parse import understand
from core.sizing.estimate import estimate
from tests.bot.e2e.conftest import Harness, assert_no_failed_calls, html, result_mark, text
from tgsandbox.formatting import parse_html, utf16_length

QUESTION = "llama 3.1 8b int4 32k 4 пользователя"
QUESTIONS = (
    "llama 3.1 8b int4 8k",  # fits one card comfortably
    "llama 3.1 70b bf16 32k 8 users",  # several cards
    "deepseek r1 bf16 128k 64 users",  # nothing fits on one card
    "train 70b from scratch batch 32 seq 16k",
    "sdxl 1024x1024 4 images",
)
OWN_CARD = {"task": "inference", "model": "qwen2.5-14b", "precision": "bf16", "gpus": ["rtx3090"]}


def tr_for(lang: str) -> Any:
    def tr(key: str, **args: Any) -> str:
        return html(key, lang, **args)

    return tr


def _understood(question: str) -> tuple[Result, list[Assumption]]:
    catalog = default_catalog()
    understood = understand(question, catalog)
    return estimate(understood.request, catalog), list(understood.notes)


def _bot(question: str, lang: str, result: Result | None = None) -> tuple[Result, str, str]:
    """The bot's result message and its details for a quick question (HTML), as the handlers make them."""
    real, notes = _understood(question)
    result = result or real
    tr = tr_for(lang)
    return (
        result,
        render_result(result, tr, lang, notes=notes),
        render_details(result, tr, lang, notes=notes),
    )


def shown(message: str) -> str:
    """What the user reads: parsed as Telegram parses it (raises on broken HTML), digits grouped by
    a plain space."""
    return parse_html(message).text.replace("\xa0", " ").replace("\u202f", " ")


def _configurations(plain: str, lang: str) -> list[tuple[int, str]]:
    """Every `N× GPU: <verdict>` the text names, in order (other mentions of cards, such as the lead,
    the offers or where a mitigation would fit, carry no verdict after a colon and are not counted)."""
    verdicts = sorted(
        (core_texts.label("verdict", v, lang) for v in ("fits", "tight", "does_not_fit")),
        key=len,
        reverse=True,
    )
    pattern = rf"(\d+)× ([^:\n]+?): (?:{'|'.join(map(re.escape, verdicts))})"
    return [(int(count), gpu) for count, gpu in re.findall(pattern, plain)]


def _short(gpu_name: str) -> str:
    for prefix in ("NVIDIA ", "GeForce ", "AMD Instinct ", "AMD "):
        gpu_name = gpu_name.removeprefix(prefix)
    return gpu_name.split(" (")[0]


# --- the decision first ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("lang", "lead", "need"),
    [
        # 4 users: a vLLM server, compared with vLLM's 90% of the card (43.2 of 48 GB)
        ("ru", "✅ Влезет на 1× RTX 4090 48 GB · от 149 ₽/ч · ~32 ток/с", "Нужно 24,0 ГБ на карту из 43,2"),
        ("en", "✅ Fits on 1× RTX 4090 48 GB · from 149 ₽/h · ~32 tok/s", "Needs 24.0 GB per card of 43.2"),
    ],
)
def test_the_first_two_lines_carry_verdict_card_price_and_speed(lang: str, lead: str, need: str) -> None:
    result, message, _ = _bot(QUESTION, lang)
    assert message.startswith(f"<b>{lead}</b>\n"), "the decision leads, in bold"
    first, second = shown(message).splitlines()[:2]
    assert first == lead
    assert second.startswith(need)
    cli = render_answer(result, lang, notes=understand(QUESTION).notes).splitlines()
    assert [first, second] == cli[:2], "the CLI and the bot lead with the same two lines"


@pytest.mark.parametrize("lang", ["ru", "en"])
def test_the_message_shows_the_breakdown_offers_and_server(lang: str) -> None:
    _, message, _ = _bot(QUESTION, lang)
    plain = shown(message)
    lines = plain.splitlines()
    parts = {
        "ru": ["• KV-кэш: 16,0 ГБ", "• веса: 5,4 ГБ", "• активации: 802 МБ"],
        "en": ["• KV cache: 16.0 GB", "• weights: 5.4 GB", "• activations: 802 MB"],
    }[lang]
    for part in parts:
        assert part in lines, part
    offers = {
        "ru": "Дешевле всего: 1× RTX 4090 48 GB, от 149 ₽/ч · быстрее всего: 1× B200 180 GB, цена по запросу",
        "en": "Cheapest: 1× RTX 4090 48 GB, from 149 ₽/h · fastest: 1× B200 180 GB, price on request",
    }[lang]
    assert offers in lines
    assert "https://" not in plain, "the offer's page is a button, not a line"
    assert result_mark(lang) in plain
    assert core_texts.t("answer-assumptions", lang) not in plain, "the assumptions are in the details"


@pytest.mark.parametrize("lang", ["ru", "en"])
@pytest.mark.parametrize("question", QUESTIONS)
def test_every_part_shows_up_in_one_unit_without_fluent_leftovers(question: str, lang: str) -> None:
    result, message, details = _bot(question, lang)
    for plain in (shown(message), shown(details)):
        assert not re.search(r"\{\$?|\}|\bNone\b|\u2068", plain), plain
        assert "GiB" not in plain and "ГиБ" not in plain and "MiB" not in plain and "МиБ" not in plain
        assert result.model.name in plain
    plain = shown(message)
    for name in result.breakdown:
        if result.breakdown[name] > 0:
            assert core_texts.label("component", name, lang) in plain, name
    assert utf16_length(message) <= BUDGET and utf16_length(details) <= BUDGET


@pytest.mark.parametrize("lang", ["ru", "en"])
@pytest.mark.parametrize("question", QUESTIONS)
def test_cli_and_bot_name_the_same_configurations(question: str, lang: str) -> None:
    result, _, details = _bot(question, lang)
    cli = render_answer(result, lang, notes=understand(question).notes)
    expected = [(v.count, _short(v.gpu_name)) for v in verdicts_to_show(result)]
    assert expected and expected[0][0] >= 1
    assert _configurations(shown(details), lang) == expected
    assert _configurations(cli.replace("\xa0", " "), lang) == expected


def test_when_nothing_fits_anywhere_the_closest_configurations_are_named() -> None:
    request = {"task": "inference", "model": "deepseek-r1", "precision": "fp32", "context_length": 131072}
    result = estimate(request | {"concurrency": 64})
    assert result.recommendation is None
    _, message, details = _bot("deepseek r1 fp32 128k 64 users", "en", result)
    assert shown(message).splitlines()[0].startswith("❌ Needs ")
    expected = [(v.count, _short(v.gpu_name)) for v in verdicts_to_show(result)]
    assert _configurations(shown(details), "en") == expected


# --- the user's own card, the change, the comparison ------------------------------------------------


@pytest.mark.parametrize(
    ("lang", "first", "second", "title"),
    [
        (
            "ru",
            "❌ На 1× RTX 3090 24 GB не влезет: нужно 29,3 ГБ на карту из 24,0 ГБ",
            "🚀 В аренду: 1× RTX 4090 48 GB · от 149 ₽/ч · ~17 ток/с",
            "Как уместить на 1× RTX 3090 24 GB (память на карту):",
        ),
        (
            "en",
            "❌ Does not fit on 1× RTX 3090 24 GB: needs 29.3 GB per card of 24.0 GB",
            "🚀 To rent: 1× RTX 4090 48 GB · from 149 ₽/h · ~17 tok/s",
            "To fit on 1× RTX 3090 24 GB (memory per card):",
        ),
    ],
)
def test_the_own_card_answer(lang: str, first: str, second: str, title: str) -> None:
    result = estimate(OWN_CARD)
    message = render_result(result, tr_for(lang), lang)
    lines = shown(message).splitlines()
    assert lines[:2] == [first, second]
    assert title in lines
    after = lines[lines.index(title) + 1 :]
    assert after[0].startswith("✅ ") and "RTX 3090 24 GB" in after[0]


@pytest.mark.parametrize(
    ("lang", "change"),
    [
        (
            "ru",
            "↔ Было: 33,6 ГБ на карту · 1× RTX 4090 48 GB · от 149 ₽/ч → "
            "стало: 24,0 ГБ на карту · 1× RTX 4090 48 GB · от 149 ₽/ч",
        ),
        (
            "en",
            "↔ Before: 33.6 GB per card · 1× RTX 4090 48 GB · from 149 ₽/h → "
            "now: 24.0 GB per card · 1× RTX 4090 48 GB · from 149 ₽/h",
        ),
    ],
)
def test_the_change_line_under_the_decision(lang: str, change: str) -> None:
    result, notes = _understood(QUESTION)
    previous = estimate(
        {
            "task": "inference",
            "model": "llama-3.1-8b",
            "precision": "bf16",
            "context_length": 32768,
            "concurrency": 4,
        }
    )
    message = render_result(result, tr_for(lang), lang, notes=notes, previous=previous)
    assert shown(message).splitlines()[2] == change
    assert "↔" not in shown(render_result(result, tr_for(lang), lang, notes=notes))


async def test_a_follow_up_says_what_changed(harness: Harness) -> None:
    user = harness.user(language_code="ru")
    first = (await user.send("llama 3.1 8b bf16 32k 4 пользователя"))[-1]
    assert "Было" not in (first.text or "")
    changed = (await user.send("а в int4?"))[-1]
    lines = (changed.text or "").replace("\xa0", " ").splitlines()
    assert lines[0] == "✅ Влезет на 1× RTX 4090 48 GB · от 149 ₽/ч · ~32 ток/с"
    assert lines[2].startswith("↔ Было: ") and lines[2].endswith(
        "→ стало: 24,0 ГБ на карту · 1× RTX 4090 48 GB · от 149 ₽/ч"
    )
    before = lines[2].removeprefix("↔ Было: ").split(" ·")[0]
    assert before != "24,0 ГБ" and before in (first.text or "").replace("\xa0", " ")
    assert_no_failed_calls(harness.sandbox)


@pytest.mark.parametrize("lang", ["ru", "en"])
def test_a_comparison_is_a_row_per_card(lang: str) -> None:
    # under vLLM (CUDA graphs) the H100 decodes faster; eager transformers is launch-bound alike
    wanted = understand("llama 3.1 8b int4 vllm").request
    message = render_comparison(compare(wanted, [("rtx4090-48gb", 1), ("h100-sxm", 1)]), lang)
    lines = shown(message).splitlines()
    assert lines[0].startswith("Llama 3.1 8B: ")
    assert (
        lines[2].startswith("✅ 1× RTX 4090 48 GB: ")
        and ("149 ₽/ч" if lang == "ru" else "149 ₽/h") in lines[2]
    )
    assert lines[3].startswith("✅ 1× H100 SXM 80 GB: ")
    verdict = {
        "ru": "Дешевле: 1× RTX 4090 48 GB · Быстрее: 1× H100 SXM 80 GB",
        "en": "Cheaper: 1× RTX 4090 48 GB · Faster: 1× H100 SXM 80 GB",
    }[lang]
    assert lines[-1] == verdict
    assert f"<b>{verdict}</b>" in message


async def test_compare_in_the_chat(harness: Harness) -> None:
    user = harness.user(language_code="en")
    # at 32K the KV cache (10 GB) keeps 70B int4 off one 48 GB card
    reply = (await user.send("compare rtx 4090 48gb vs h100 sxm for llama 3.1 70b int4 32k"))[-1]
    plain = (reply.text or "").replace("\xa0", " ")
    assert "❌ 1× RTX 4090 48 GB: does not fit, 60" in plain
    assert "✅ 1× H100 SXM 80 GB: fits, 60" in plain and "tok/s" in plain
    assert_no_failed_calls(harness.sandbox)


# --- always one message ----------------------------------------------------------------------------


def _swollen(result: Result, n: int = 40, repeat: int = 50) -> Result:
    """A result far longer than a message: many long assumptions and mitigations, full of HTML's
    special characters (escaped, they grow), one emoji in each (two UTF-16 units)."""
    filler = "<b>&amp; 🚀 " * repeat  # escaped ~1,150 characters: three such mitigations overflow
    assumptions = [Assumption(code=f"made_up_{i}", text=f"{i}: {filler}") for i in range(n)]
    mitigations = [
        Mitigation(
            action=f"made_up_action_{i}",
            saves_bytes=10**9,
            total_bytes=10**10,
            fits=False,
            params={"how": filler},
        )
        for i in range(n)
    ]
    return result.model_copy(update={"assumptions": assumptions, "mitigations": mitigations})


LONG = "llama 3.1 70b bf16 32k 8 users"  # does not fit one card: mitigations are shown


@pytest.mark.parametrize("lang", ["ru", "en"])
def test_a_long_result_drops_whole_lines_and_stays_valid_html(lang: str) -> None:
    swollen = _swollen(estimate(understand(LONG).request))
    assert len(build_answer(swollen, lang).mitigations) == LEAD_MITIGATIONS
    _, message, details = _bot(LONG, lang, swollen)
    for html_text in (message, details):
        parsed = parse_html(html_text)  # raises as Telegram would on a split tag or a bare '<'
        assert utf16_length(html_text) <= BUDGET and utf16_length(parsed.text) <= MAX_MESSAGE
    plain = shown(message)
    kept_count = plain.count("made up action")
    assert 1 <= kept_count < LEAD_MITIGATIONS, "savings dropped from the end; the cheapest stays"
    kept = next(line for line in plain.splitlines() if "made up action" in line)
    assert kept.startswith("❌ made up action 0 (how=<b>&amp; 🚀")
    assert kept.endswith(core_texts.t("mitigation-still-short", lang, count=1)), "not cut mid-line"
    assert result_mark(lang) in plain, "the server line after the cut section stays"
    plain_result = render_result(estimate(understand(LONG).request), tr_for(lang), lang)
    assert plain.splitlines()[:2] == shown(plain_result).splitlines()[:2], "the decision stays"

    plain = shown(details)
    assert core_texts.t("answer-assumptions", lang) not in plain, "dropped first, with its heading"
    assert "made_up" not in plain and "0: <b>" not in plain
    assert plain.count("made up action") == KEEP_MITIGATIONS, "the first few savings stay"
    assert core_texts.t("answer-verdicts", lang) in plain


async def test_a_long_result_and_its_details_are_messages_the_sandbox_accepts(
    harness: Harness, monkeypatch: pytest.MonkeyPatch
) -> None:
    from bot import dialog

    real = dialog.estimate
    monkeypatch.setattr(dialog, "estimate", lambda *args, **kwargs: _swollen(real(*args, **kwargs)))
    user = harness.user(language_code="en")
    result = (await user.send(LONG))[-1]
    assert result.parse_mode == "HTML" and result.source_text is not None
    assert utf16_length(result.text or "") <= MAX_MESSAGE
    assert (result.text or "").startswith("✅ Fits on ")
    assert "made up action 0" in (result.text or "")
    details = (await user.click(text("btn-details", "en"), message=result)).messages[-1]
    assert details.source_text is not None and utf16_length(details.source_text) <= BUDGET
    assert core_texts.t("answer-verdicts", "en") in (details.text or "")
    assert_no_failed_calls(harness.sandbox)  # the sandbox parsed the HTML as Telegram does
