"""`/export`'s CSV: a text cell Excel would read as a formula gets a leading apostrophe (OWASP's CSV
injection rule: every cell starting with =, +, -, @, tab or CR), whatever follows; numbers the bot writes
(int and float values) stay numbers (issue 19, item 9)."""

from __future__ import annotations

import csv
import io
from datetime import UTC, datetime

import pytest

from bot.csv_export import CSV_DELIMITER, csv_document


def cells(*values: object) -> list[str]:
    data, count = csv_document(["value"] * len(values), [values])
    assert count == 1
    text = data.decode("utf-8-sig")
    _header, row = csv.reader(io.StringIO(text, newline=""), delimiter=CSV_DELIMITER)
    return row


@pytest.mark.parametrize(
    "text",
    [
        "-1-1",  # −2 to Excel: it used to pass as "a number"
        "-5",
        "+7 999 123-45-67",
        "+1",
        "=1+1",
        '=HYPERLINK("http://evil", "click")',
        "@SUM(A1:A2)",
        "\t=1+1",
        "\r=1+1",
        "-",
        "- (555) 123",
    ],
)
def test_a_text_starting_like_a_formula_is_quoted(text: str) -> None:
    assert cells(text) == ["'" + text]


@pytest.mark.parametrize("text", ["149", "Llama 3.1 8B", "от 149 ₽/ч", "a=b", "x-1", "", " -1"])
def test_other_text_is_written_as_is(text: str) -> None:
    assert cells(text) == [text]


def test_numbers_written_by_the_bot_stay_numbers() -> None:
    moment = datetime(2026, 1, 2, 3, 4, 5, tzinfo=UTC)
    assert cells(-1, -1.5, 0, 149, 2.75, True, False, None, moment) == [
        "-1", "-1.5", "0", "149", "2.75", "1", "0", "", "2026-01-02 03:04:05",
    ]  # fmt: skip
