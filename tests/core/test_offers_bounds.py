"""Every value of an offers file is checked at load against the bounds `core.catalogue.offers` states: an
absurd one (a price of 1e300, a URL with a space, a file saved as cp1251) is refused with the file, the row
and the field, never loaded to break every answer later (issue 19, item 4)."""

from __future__ import annotations

from pathlib import Path

import pytest

from core.catalogue.catalog import load_catalog
from core.catalogue.offers import MAX_OFFER_CARDS, MAX_OFFER_ID, MAX_PRICE_PER_HOUR, MAX_PRICE_PER_MONTH
from core.errors import CatalogError
from core.language.cards import hourly_price

GOOD = '[[offer]]\nid = "good"\ngpu = "t4"\ncount = 1\nurl = "https://example.com/good"\n'


def offer(**fields: str) -> str:
    """A second [[offer]] row: a valid one with `fields` (TOML values, as written) replaced."""
    row = {"id": '"bad"', "gpu": '"h100-sxm"', "count": "1", "url": '"https://example.com/x"', **fields}
    return "[[offer]]\n" + "".join(f"{key} = {value}\n" for key, value in row.items())


def load(tmp_path: Path, body: str | bytes) -> None:
    path = tmp_path / "offers.toml"
    if isinstance(body, bytes):
        path.write_bytes(body)
    else:
        path.write_text(body, encoding="utf-8")
    load_catalog(offers_file=path)


@pytest.mark.parametrize(
    ("fields", "field", "message"),
    [
        ({"price_per_hour": "1e300", "currency": '"RUB"'}, "price_per_hour", "less than or equal to 1000"),
        ({"price_per_hour": "inf", "currency": '"RUB"'}, "price_per_hour", "finite"),
        ({"price_per_hour": "nan", "currency": '"RUB"'}, "price_per_hour", "finite"),
        ({"price_per_hour": "0", "currency": '"RUB"'}, "price_per_hour", "greater than 0"),
        ({"price_per_hour": "-149", "currency": '"RUB"'}, "price_per_hour", "greater than 0"),
        ({"price_per_month": "1e300", "currency": '"RUB"'}, "price_per_month", "less than or equal"),
        ({"count": "0"}, "count", "greater than 0"),
        ({"count": str(MAX_OFFER_CARDS + 1)}, "count", "less than or equal to 64"),
        ({"count": "1.5"}, "count", "valid integer"),
        ({"priority": "-1"}, "priority", "greater than or equal to 0"),
        ({"id": '"' + "x" * (MAX_OFFER_ID + 1) + '"'}, "id", "at most 40 characters"),
        ({"id": '"has space"'}, "id", "should match pattern"),
        ({"url": '"example.com/x"'}, "url", "http:// or https://"),
        ({"url": '"ftp://example.com/x"'}, "url", "http:// or https://"),
        ({"url": '"https://"'}, "url", "must name a host"),
        ({"url": '"https://example.com/a b"'}, "url", "spaces or control characters"),
        ({"url": '"https://example.com:99999/x"'}, "url", "well-formed"),
        ({"url": '"http://[::1/x"'}, "url", "well-formed"),
        ({"url": '"https://example.com/' + "x" * 2048 + '"'}, "url", "at most 2048 characters"),
        ({"currency": '"rub"', "price_per_hour": "149"}, "currency", "should match pattern"),
        ({"price_per_hour": "149"}, "(row)", "a price needs a currency"),
        ({"note": '"' + "n" * 501 + '"'}, "note", "at most 500 characters"),
        ({"gpu": '"rtx9999"'}, "gpu", "unknown gpu 'rtx9999'"),
        ({"id": '"good"'}, "id", "duplicate of row 1"),
        ({"discount": "5"}, "discount", "Extra inputs are not permitted"),
    ],
)
def test_a_bad_value_is_refused_naming_the_row_and_the_field(
    tmp_path: Path, fields: dict[str, str], field: str, message: str
) -> None:
    with pytest.raises(CatalogError) as error:
        load(tmp_path, GOOD + "\n" + offer(**fields))
    assert error.value.field == field
    assert "offers.toml: [[offer]] row 2 (id=" in error.value.message
    assert f": {field}: " in error.value.message or field == "(row)"
    assert message in error.value.message
    assert "\n" not in error.value.message and len(error.value.message) < 400  # one readable line


def test_values_at_the_bounds_load_and_are_shown(tmp_path: Path) -> None:
    """The ceilings are sane: a price at the ceiling still formats, in either language."""
    at_bounds = offer(
        id='"' + "x" * MAX_OFFER_ID + '"',
        count=str(MAX_OFFER_CARDS),
        price_per_hour=str(MAX_PRICE_PER_HOUR),
        price_per_month=str(MAX_PRICE_PER_MONTH),
        currency='"RUB"',
        url='"http://127.0.0.1:8080/rent?gpu=h100&n=64"',
    )
    path = tmp_path / "offers.toml"
    path.write_text(at_bounds, encoding="utf-8")
    (row,) = load_catalog(offers_file=path).offers
    for lang in ("ru", "en"):
        shown = hourly_price(row.price_per_hour, row.currency, lang, monthly=row.price_per_month)
        assert "10" in shown and "000" in shown


def test_an_offers_file_that_is_not_utf8_is_one_clear_error(tmp_path: Path) -> None:
    cp1251 = (GOOD + 'note = "от 149 руб/час"\n').encode("cp1251")
    with pytest.raises(CatalogError, match=r"offers\.toml: not UTF-8 text \(byte \d+ is 0x[0-9a-f]{2}\)"):
        load(tmp_path, cp1251)


def test_the_shipped_offers_are_within_the_bounds() -> None:
    assert load_catalog().offers  # loads: the shipped file passes its own checks
