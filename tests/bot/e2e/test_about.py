"""/about quotes the estimator's measured accuracy: the figures of the generated core/data/accuracy.toml
(`python bench/calibration_table.py --write`), so that a change of the estimator or of its calibration
cases cannot leave it stale."""

from __future__ import annotations

import tomllib
from pathlib import Path

import pytest

from bot.handlers.commands import ACCURACY
from tests.bot.e2e.conftest import Harness, text

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
    (reply,) = await user.send("/about")
    shown = reply.text or ""
    assert text("about", lang, **ACCURACY).split("\n")[-2] in shown
    for name in ("median", "p90", "rules", "stated_median", "stated_rules", "range_low", "range_high"):
        assert f"{ACCURACY[name]:.1f}%".replace(".", decimal) in shown, name
    assert f"{ACCURACY['cases']} " in shown
