"""CSV documents as the admin commands send them (/export, `/measurements export`): files Excel opens
right by a double click, and no cell that Excel would run as a formula."""

from __future__ import annotations

import csv
import io
from collections.abc import Iterable
from datetime import datetime
from typing import Any

CSV_DELIMITER = ";"
"""Excel with a Russian (or any comma-decimal) locale splits CSV columns on ';' only."""
# A text cell starting with one of these is a formula to Excel (CSV injection, OWASP's rule): written
# with a leading apostrophe, whatever follows ("-1-1" is −2 to Excel, "+7 999 …" a sum). Only numbers
# we write (int and float values: counts, prices, ids) are left as they are.
_FORMULA_START = ("=", "+", "-", "@", "\t", "\r")


def _cell(value: Any) -> Any:
    if value is None:
        return ""
    if isinstance(value, bool):
        return int(value)
    if isinstance(value, datetime):
        return value.strftime("%Y-%m-%d %H:%M:%S")  # UTC (the database keeps UTC)
    if isinstance(value, str) and value.startswith(_FORMULA_START):
        return "'" + value
    return value


def csv_document(columns: Iterable[str], rows: Iterable[tuple[Any, ...]]) -> tuple[bytes, int]:
    """A CSV file Excel opens right by a double click: UTF-8 with a BOM, ';' between columns, CRLF
    line ends; empty cells for None, 0/1 for booleans, times as `YYYY-MM-DD HH:MM:SS` (UTC).
    Returns the bytes and the number of data rows."""
    out = io.StringIO()
    writer = csv.writer(out, delimiter=CSV_DELIMITER, lineterminator="\r\n")
    writer.writerow(columns)
    count = 0
    for row in rows:
        writer.writerow([_cell(value) for value in row])
        count += 1
    return out.getvalue().encode("utf-8-sig"), count
