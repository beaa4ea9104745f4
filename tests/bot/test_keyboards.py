"""Step keyboards: built once per step, options and language, and never shared across them."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from bot import flow, keyboards
from core.catalogue.catalog import default_catalog
from tests.bot.e2e.conftest import html


def translator(lang: str) -> Callable[..., str]:
    def tr(key: str, **args: Any) -> str:
        return html(key, lang, **args)

    return tr


def texts(markup: object) -> list[str]:
    return [button.text for row in markup.inline_keyboard for button in row]  # type: ignore[attr-defined]


def test_a_step_keyboard_is_built_once_per_step_options_and_language() -> None:
    catalog, step = default_catalog(), flow.STEPS["precision"]
    llama = flow.answers_from_fields({"task": "inference", "model": "llama-3.1-8b"}, catalog, quick=False)
    ru = keyboards.step_keyboard(step, llama, catalog, translator("ru"), "ru")
    assert keyboards.step_keyboard(step, llama.model_copy(), catalog, translator("ru"), "ru") is ru
    en = keyboards.step_keyboard(step, llama, catalog, translator("en"), "en")
    assert en is not ru and texts(en) != texts(ru)  # "Typical" / "Типично", "Back" / "Назад"
    image = flow.answers_from_fields({"task": "image_generation", "model": "sdxl"}, catalog, quick=False)
    other = keyboards.step_keyboard(step, image, catalog, translator("ru"), "ru")
    assert texts(other) != texts(ru)  # an image model's precisions, not an LLM's
    assert [b.callback_data for row in ru.inline_keyboard for b in row] == [
        b.callback_data for row in keyboards._build_step_keyboard(
            step, flow.paginate(list(step.options(llama, catalog))), 0, translator("ru"), "ru"
        ).inline_keyboard for b in row
    ]  # fmt: skip
