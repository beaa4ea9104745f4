"""A card named without its memory ("4090") where the catalogue has the same chip with other memory:
read as typed (the 24 GB retail card), said in a note naming the other card; what an error says it
understood uses the user's words (issue 25)."""

from __future__ import annotations

import pytest

from core.contract import Request
from core.language.answer import build_answer
from core.language.words import concept_key, translate
from core.layouts.plain import layout
from core.parse import understand
from core.sizing.estimate import estimate


@pytest.mark.parametrize(
    "question", ["llama 3.1 70b на две 4090", "llama 3.1 8b on two 4090s", "qwen2.5 7b rtx 4090 2x"]
)
def test_a_bare_4090_is_read_as_typed_and_said(question: str) -> None:
    understood = understand(question)
    assert understood.request.gpus == ["rtx4090"]
    (read,) = [n for n in understood.notes if n.code == "parse_card_memory"]
    assert read.params["other_id"] == "rtx4090-48gb" and read.params["card_id"] == "rtx4090"
    answer = build_answer(estimate(understood.request), "ru", understood.notes)
    assert answer.card_switch == ("rtx4090-48gb", "RTX 4090 48 GB")
    head = layout(answer).split("\n\n")[0]
    assert "понял как RTX 4090 24 GB" in head and "RTX 4090 48 GB" in head


@pytest.mark.parametrize(
    "question",
    [
        "llama 3.1 8b на 4090 48",
        "llama 3.1 8b rtx 4090 24gb",
        "llama 3.1 8b на 4090 24",
        "llama 3.1 8b на h100",
    ],
)
def test_a_card_named_with_its_memory_or_without_another_is_not_said(question: str) -> None:
    understood = understand(question)
    assert not [n for n in understood.notes if n.code == "parse_card_memory"]
    assert build_answer(estimate(understood.request), "ru", understood.notes).card_switch is None


@pytest.mark.parametrize("lang", ["ru", "en"])
def test_every_request_field_has_a_name_in_each_language(lang: str) -> None:
    """An error names the field at fault in the user's words ('число эпох'), never its key ('epochs')."""
    missing = [f for f in Request.model_fields if not translate(concept_key("field", f), lang)]
    assert not missing
