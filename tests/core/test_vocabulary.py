"""The parser's vocabulary is data (core/data/vocabulary.toml): it loads, extends and is validated."""

from __future__ import annotations

from pathlib import Path

import pytest

from core.contract import Precision
from core.errors import CatalogError
from core.parse import parse
from core.parse.vocabulary import VOCABULARY_ENV, VOCABULARY_FILE, load_vocabulary, vocabulary

SHIPPED = VOCABULARY_FILE.read_text(encoding="utf-8")
INT4_ROW = 'value = "int4"\nwords = ["int4", "w4a16"]\npattern = ["4[\\\\s_-]?(?:bit|бит)\\\\w*"]'


def _write(tmp_path: Path, text: str, name: str = "vocabulary.toml") -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def test_the_shipped_vocabulary_loads() -> None:
    words = load_vocabulary()
    assert words is vocabulary()  # loaded once
    assert {value for _, value in words.precisions} >= {Precision.INT4, Precision.FP16, Precision.Q4_K_M}
    assert words.number_values["четырех"] == "4"  # "четырёх" in the file: read with "ё" as "е"
    assert dict(words.counted).keys() == {"num_gpus", "frames", "images", "concurrency", "batch_size"}


def test_a_synonym_added_to_a_vocabulary_file_is_understood(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert SHIPPED.count(INT4_ROW) == 1
    text = SHIPPED.replace(INT4_ROW, 'value = "int4"\nwords = ["int4", "w4a16", "Ужат*"]')
    text += '\n[[number]]\nvalue = 5\nwords = ["пяти", "пятью"]\n'
    assert parse("llama 3.1 8b ужатая на пяти").precision is None  # not in the shipped words
    monkeypatch.setenv(VOCABULARY_ENV, str(_write(tmp_path, text)))
    request = parse("llama 3.1 8b ужатая на пяти")
    assert request.precision == Precision.INT4 and request.num_gpus == 5
    assert parse("llama 3.1 8b ужатой").precision == Precision.INT4  # "*": any ending, any case


@pytest.mark.parametrize(
    ("old", "new", "table", "row", "field"),
    [
        (INT4_ROW, 'value = "int3"\nwords = ["int4"]', "precision", 17, "value"),
        (INT4_ROW, 'value = "int4"\nwords = ["int4", " "]', "precision", 17, "words"),
        (INT4_ROW, 'value = "int4"\nwords = ["in*t4"]', "precision", 17, "words"),
        (INT4_ROW, 'value = "int4"\npattern = ["int(4"]', "precision", 17, "pattern"),
        (INT4_ROW, 'value = "int4"\nwords = ["int4"]\nspelling = ["инт4"]', "precision", 17, "spelling"),
        (INT4_ROW, 'value = "int4"', "precision", 17, "(row)"),
        ('value = 2\nwords = ["два"', 'value = 2\nwords = ["три"', "number", 3, "words"),
        ('value = "num_gpus"\nbetween = "x\\\\s*"', 'value = "gpus"', "count", 1, "value"),
    ],
)
def test_a_bad_row_is_reported_with_its_file_table_row_and_field(
    tmp_path: Path, old: str, new: str, table: str, row: int, field: str
) -> None:
    assert SHIPPED.count(old) == 1, old
    path = _write(tmp_path, SHIPPED.replace(old, new))
    with pytest.raises(CatalogError) as error:
        load_vocabulary(path)
    message = error.value.message
    assert str(path) in message and f"[[{table}]] row {row} " in message, message
    assert error.value.field is not None and error.value.field.split(".")[0] == field, message


def test_an_unknown_or_missing_table_is_reported(tmp_path: Path) -> None:
    with pytest.raises(CatalogError, match=r"unknown table \[\[synonyms\]\]"):
        load_vocabulary(_write(tmp_path, SHIPPED + '\n[[synonyms]]\nwords = ["x"]\n'))
    without_compare = SHIPPED.replace("[[compare]]", "[[filler]]")
    with pytest.raises(CatalogError, match=r"expected a non-empty \[\[compare\]\] array"):
        load_vocabulary(_write(tmp_path, without_compare, "without_compare.toml"))


@pytest.mark.parametrize(
    ("old", "new", "table", "field"),
    [
        ('value = "render"', 'value = "sculpting"', "off_topic", "value"),
        ('value = "speech"', 'value = "music"', "unsized", "value"),
        ('value = "t4"\npattern = ["т4(?!\\\\d)"]', 'value = "t 4"\npattern = ["т4"]', "card_name", "value"),
    ],
)
def test_a_bad_row_of_the_new_tables_is_reported(
    tmp_path: Path, old: str, new: str, table: str, field: str
) -> None:
    assert SHIPPED.count(old) == 1, old
    with pytest.raises(CatalogError) as error:
        load_vocabulary(_write(tmp_path, SHIPPED.replace(old, new)))
    assert f"[[{table}]] row " in error.value.message and error.value.field == field, error.value.message


def test_a_spelling_added_to_the_file_is_read(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    assert parse("ламочка 3.1 8b").model == "8B"  # not a shipped spelling: a typical 8B
    text = SHIPPED + '\n[[model_name]]\nvalue = "llama"\nwords = ["ламочка"]\n'
    monkeypatch.setenv(VOCABULARY_ENV, str(_write(tmp_path, text)))
    assert parse("ламочка 3.1 8b").model == "llama-3.1-8b"
