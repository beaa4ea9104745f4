"""The result message: the same GPU configurations as the CLI answer, and always one valid message."""

from __future__ import annotations

import re
from typing import Any

import pytest

from bot import flow
from bot.presenter import BUDGET, KEEP_MITIGATIONS, MAX_MESSAGE, render_result
from core import texts as core_texts
from core.catalog import default_catalog
from core.contract import Assumption, Mitigation, Result
from core.estimate import estimate
from core.parse import understand
from core.render import render_answer, verdicts_to_show
from tests.bot.e2e.conftest import Harness, assert_no_failed_calls, html, text
from tgsandbox.formatting import parse_html, utf16_length

QUESTIONS = (
    "llama 3.1 8b int4 8k",  # fits one card comfortably
    "llama 3.1 70b bf16 32k 8 users",  # several cards
    "deepseek r1 bf16 128k 64 users",  # nothing fits on one card
    "train 70b from scratch batch 32 seq 16k",
    "sdxl 1024x1024 4 images",
)


def _bot_result(question: str, lang: str, result: Result | None = None) -> tuple[Result, str]:
    """The bot's result message for a quick question (HTML), as the quick-answer handler makes it."""
    catalog = default_catalog()
    understood = understand(question, catalog)
    result = result or estimate(understood.request, catalog)
    answers = flow.answers_from_request(understood.request, catalog)

    def tr(key: str, **args: Any) -> str:
        return html(key, lang, **args)

    return result, render_result(result, answers, tr, lang, catalog, notes=understood.notes)


def _configurations(plain: str, lang: str) -> list[tuple[int, str]]:
    """Every `N × GPU: <verdict>` the text names, in order (other mentions of cards, such as where a
    mitigation would fit or the rental offer, carry no verdict and are not counted)."""
    verdicts = sorted(
        (core_texts.label("verdict", v, lang) for v in ("fits", "tight", "does_not_fit")),
        key=len,
        reverse=True,
    )
    pattern = rf"(\d+) ?× ?([^:\n]+?): (?:{'|'.join(map(re.escape, verdicts))})"
    return [(int(count), gpu) for count, gpu in re.findall(pattern, plain)]


@pytest.mark.parametrize("lang", ["ru", "en"])
@pytest.mark.parametrize("question", QUESTIONS)
def test_cli_and_bot_name_the_same_configurations(question: str, lang: str) -> None:
    result, message = _bot_result(question, lang)
    cli = render_answer(result, lang, notes=understand(question).notes)
    expected = [(v.count, v.gpu_name) for v in verdicts_to_show(result)]
    assert expected and expected[0][0] >= 1
    assert _configurations(parse_html(message).text, lang) == expected
    assert _configurations(cli, lang) == expected


def test_when_nothing_fits_anywhere_the_closest_configurations_are_named() -> None:
    request = {"task": "inference", "model": "deepseek-r1", "precision": "fp32", "context_length": 131072}
    result = estimate(request | {"concurrency": 64})
    assert result.recommendation is None and all(v.verdict == "does_not_fit" for v in result.verdicts)
    shown = verdicts_to_show(result)
    biggest_card = max((v for v in result.verdicts if v.count == 1), key=lambda v: v.usable_bytes)
    closest = max(result.verdicts, key=lambda v: v.headroom)
    assert shown[0] == biggest_card and closest in shown
    _, message = _bot_result("deepseek r1 fp32 128k 64 users", "en", result)
    assert _configurations(parse_html(message).text, "en") == [(v.count, v.gpu_name) for v in shown]


def _swollen(result: Result, n: int = 40) -> Result:
    """A result far longer than a message: many long assumptions and mitigations, full of HTML's
    special characters (escaped, they grow), one emoji in each (two UTF-16 units)."""
    filler = "<b>&amp; 🚀 " * 40  # escaped ~900 characters: with the rest, three mitigations do not fit
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


@pytest.mark.parametrize("lang", ["ru", "en"])
def test_a_long_result_drops_whole_sections_and_stays_valid_html(lang: str) -> None:
    question = "llama 3.1 70b bf16 32k 8 users"  # does not fit one card: mitigations are shown
    swollen = _swollen(estimate(understand(question).request))
    _, message = _bot_result(question, lang, swollen)
    parsed = parse_html(message)  # raises as Telegram would on a split tag or a bare '<'
    assert utf16_length(message) <= BUDGET and utf16_length(parsed.text) <= MAX_MESSAGE
    assert text("result-assumptions", lang) not in parsed.text  # dropped first, with its heading
    assert parsed.text.count("made up action") == KEEP_MITIGATIONS  # the first few savings stay
    for section in ("result-verdicts", "result-mitigations"):
        assert text(section, lang) in parsed.text
    assert (
        text("result-host", lang, ram="X", ram_better="X", disk="X", disk_kind="X").split("X")[0]
        in parsed.text
    )


async def test_a_long_result_is_one_message_the_sandbox_accepts(
    harness: Harness, monkeypatch: pytest.MonkeyPatch
) -> None:
    from bot.handlers import wizard

    real = wizard.estimate
    monkeypatch.setattr(wizard, "estimate", lambda *args, **kwargs: _swollen(real(*args, **kwargs)))
    user = harness.user(language_code="en")
    replies = await user.send("llama 3.1 70b bf16 32k 8 users")
    result = replies[-1]
    assert result.parse_mode == "HTML" and result.source_text is not None
    assert utf16_length(result.text or "") <= MAX_MESSAGE
    assert text("result-verdicts", "en") in (result.text or "")
    assert_no_failed_calls(harness.sandbox)  # the sandbox parsed the HTML as Telegram does
