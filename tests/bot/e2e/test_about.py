"""/about quotes the estimator's measured accuracy: the figures of the generated core/data/accuracy.toml
(`python bench/calibration_table.py --write`), so that a change of the estimator or of its calibration
cases cannot leave it stale."""

from __future__ import annotations

import tomllib
from pathlib import Path

import pytest

from bot.handlers.commands import ACCURACY, MULTIMODAL_ACCURACY, OFFLOAD_SPEED_ERROR
from bot.presenter import utf16_length
from core.logs.files import MAX_LOG_FILE_BYTES
from tests.bot.e2e.conftest import Harness, assert_no_failed_calls, text

TELEGRAM_LIMIT = 4096  # a message's text, in UTF-16 code units after the HTML is parsed

ACCURACY_FILE = Path(__file__).parents[3] / "core" / "data" / "accuracy.toml"


def test_about_figures_are_the_generated_accuracy_file() -> None:
    """The figures come from core/data/accuracy.toml (which tests/core/test_calibration.py checks
    against the estimator), in percent with one decimal."""
    overall = tomllib.loads(ACCURACY_FILE.read_text())["overall"]
    assert (ACCURACY["cases"], ACCURACY["stated_cases"]) == (overall["cases"], overall["stated_cases"])
    for name, key in (
        ("median", "median_abs_error"),
        ("p90", "p90_abs_error"),
        ("rules", "rules_median_abs_error"),
        ("stated_median", "stated_median_abs_error"),
        ("stated_rules", "stated_rules_median_abs_error"),
    ):
        assert ACCURACY[name] == round(100 * overall[key], 1), name
    assert 0 < ACCURACY["range_low"] <= ACCURACY["range_high"]


@pytest.mark.parametrize(("lang", "decimal"), [("ru", ","), ("en", ".")])
async def test_about_shows_them(harness: Harness, lang: str, decimal: str) -> None:
    user = harness.user(language_code=lang)
    shown = "\n".join(r.text or "" for r in await user.send("/about"))
    assert text("about", lang, **ACCURACY).split("\n")[-2] in shown
    for name in ("median", "p90", "rules", "stated_median", "stated_rules", "range_low", "range_high"):
        assert f"{ACCURACY[name]:.1f}%".replace(".", decimal) in shown, name
    assert f"{ACCURACY['cases']} " in shown


@pytest.mark.parametrize("lang", ["ru", "en"])
async def test_about_fits_telegram_and_says_everything(harness: Harness, lang: str) -> None:
    """/about says how the estimate is made and every issue 22 answer (offload, speech and vision,
    speculative and hybrid models, the launch command and first token, pasted logs), in two messages
    each with room under Telegram's limit (a third of it left for figures and words to grow)."""
    user = harness.user(language_code=lang)
    replies = await user.send("/about")
    assert len(replies) == 2
    for reply in replies:
        assert utf16_length(reply.text or "") <= TELEGRAM_LIMIT * 3 // 4, utf16_length(reply.text or "")
    shown = "\n".join(r.text or "" for r in replies)
    for key, args in (
        ("about", ACCURACY),
        ("about-offload", OFFLOAD_SPEED_ERROR),
        ("about-multimodal", MULTIMODAL_ACCURACY),
        ("about-spec", {}),
        ("about-launch", {}),
        ("about-logs", {"limit_mb": MAX_LOG_FILE_BYTES >> 20}),
    ):
        assert text(key, lang, **args).split("\n")[0] in shown, key
    assert_no_failed_calls(harness.sandbox)


def test_about_logs_says_how_exact() -> None:
    """The logs paragraph states its accuracy class: the log's own numbers; an OOM's need bounded below."""
    ru, en = text("about-logs", "ru", limit_mb=2), text("about-logs", "en", limit_mb=2)
    assert "точно как напечатаны" in ru and "не меньше" in ru and "файлом" in ru
    assert "exact as printed" in en and "lower bound" in en and "file" in en
