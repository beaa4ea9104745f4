"""The README's "A sample exchange" is what the running bot shows (`bench/readme_sample.py`): a change
of an answer without `python bench/readme_sample.py --write` fails here."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

import pytest

BENCH = Path(__file__).parents[3] / "bench" / "readme_sample.py"


def _readme_sample() -> ModuleType:
    spec = importlib.util.spec_from_file_location("readme_sample", BENCH)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


async def test_the_readme_sample_exchange_is_what_the_bot_answers(monkeypatch: pytest.MonkeyPatch) -> None:
    sample = _readme_sample()
    for name in ("BOT_TOKEN", "DATABASE_URL", "REDIS_URL", "OFFERS_FILE"):
        monkeypatch.delenv(name, raising=False)
    shown = await sample.exchange()
    readme = sample.README.read_text(encoding="utf-8")
    assert sample.embed(readme, shown) == readme, (
        "README.md's sample exchange is stale: run `python bench/readme_sample.py --write` and commit it"
    )
    # the same three turns, each answered
    assert shown.count(sample.PROMPT) == len(sample.QUESTIONS) == 3
    assert shown.count("\nbot:\n") == 3
