"""Every text the bot can show exists in both languages (a missing key would crash a handler)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from bot import flow, keyboards
from bot.handlers.commands import COMMANDS
from bot.i18n import LANGUAGES, LOCALES_DIR
from core.language import words as core_texts

SOURCES = Path(__file__).parents[3] / "bot"


def keys(lang: str) -> set[str]:
    text = "\n".join(p.read_text(encoding="utf-8") for p in (LOCALES_DIR / lang).glob("*.ftl"))
    return set(re.findall(r"^([a-z][a-z0-9_-]*) =", text, flags=re.M))


def test_languages_have_the_same_keys() -> None:
    assert keys("ru") == keys("en")


def test_every_key_the_code_names_exists() -> None:
    literal: set[str] = set()
    call = re.compile(r'(?:\btr|i18n\.get)\(\s*"([a-z][a-z0-9_-]*)"')
    for path in SOURCES.rglob("*.py"):
        literal |= set(call.findall(path.read_text(encoding="utf-8")))
    assert len(literal) > 20
    dynamic = {f"ask-{s}" for s in flow.STEPS} | {f"hint-{s}" for s in flow.STEPS if s != "task"}
    dynamic |= {f"task-{t}" for t in flow.TASKS} | {f"field-{s}" for s in flow.REQUEST_FIELDS}
    dynamic |= {f"btn-change-{s}" for s in keyboards.WORKLOAD_STEP.values()}
    dynamic |= {f"lang-{lang}" for lang in LANGUAGES} | {f"cmd-{c}" for c in COMMANDS}
    for lang in LANGUAGES:
        missing = (literal | dynamic) - keys(lang)
        assert not missing, (lang, sorted(missing))


@pytest.mark.parametrize("lang", LANGUAGES)
def test_core_labels_the_bot_shows_exist(lang: str) -> None:
    answers_by_method = [
        flow.Answers(task="inference"),
        flow.Answers(task="image"),
        flow.Answers(task="finetune", request={"method": "lora"}),
        flow.Answers(task="finetune", request={"method": "full"}),
    ]
    precisions = {p.value for a in answers_by_method for p in flow.precision_choices(a)}
    wanted = {f"precision-{p}" for p in precisions} | {f"precision-note-{p}" for p in precisions}
    wanted |= {f"method-{m}" for m in flow.METHODS} | {f"method-note-{m}" for m in flow.METHODS}
    wanted |= {f"verdict-{v}" for v in ("fits", "tight", "does_not_fit")}
    missing = {k for k in wanted if core_texts.translate(k, lang) is None}
    assert not missing
