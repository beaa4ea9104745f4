"""/about quotes the estimator's measured accuracy: the figures of `python bench/calibration_table.py`'s
summary line, so that a change of the estimator or of its calibration cases cannot leave it stale."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from typing import Any

import pytest

from bot.handlers.commands import ACCURACY
from tests.bot.e2e.conftest import Harness, text

CALIBRATION_TABLE = Path(__file__).parents[3] / "bench" / "calibration_table.py"


def calibration_summary() -> Any:
    spec = importlib.util.spec_from_file_location("calibration_table", CALIBRATION_TABLE)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up there
    spec.loader.exec_module(module)
    return module.summarize()


def test_about_figures_are_the_calibration_tables() -> None:
    summary = calibration_summary()
    assert (ACCURACY["cases"], ACCURACY["stated_cases"]) == (summary.cases, summary.stated_cases)
    for name in ("median", "rules", "stated_median", "stated_rules"):
        # as the table prints them: one decimal, in percent
        assert f"{ACCURACY[name]:.1f}%" == f"{getattr(summary, name):.1%}", (name, summary.line())


@pytest.mark.parametrize(("lang", "decimal"), [("ru", ","), ("en", ".")])
async def test_about_shows_them(harness: Harness, lang: str, decimal: str) -> None:
    user = harness.user(language_code=lang)
    (reply,) = await user.send("/about")
    shown = reply.text or ""
    assert text("about", lang, **ACCURACY).split("\n")[-2] in shown
    for name in ("median", "rules", "stated_median", "stated_rules"):
        assert f"{ACCURACY[name]:.1f}%".replace(".", decimal) in shown, name
    assert f"{ACCURACY['cases']} " in shown
