"""A monthly price, where the operator's offers file gives one, is shown beside the hourly price."""

from __future__ import annotations

from pathlib import Path

import pytest

from core.catalogue.catalog import load_catalog
from core.errors import CatalogError
from core.language.answer import build_answer
from core.sizing.estimate import estimate

OFFER = """
[[offer]]
id = "rtx4090-48gb-x1"
gpu = "rtx4090-48gb"
count = 1
price_per_hour = 149
currency = "RUB"
price_is_from = true
price_per_month = 80000
url = "https://example.com/rent/x1"
"""


def test_a_monthly_price_is_shown_with_the_hourly_one(tmp_path: Path) -> None:
    offers = tmp_path / "offers.toml"
    offers.write_text(OFFER)
    catalog = load_catalog(offers_file=offers)
    result = estimate({"task": "inference", "model": "llama-3.1-8b"}, catalog)
    assert result.recommendation is not None and result.recommendation.price_per_month == 80000
    lead = build_answer(result, "ru").lead.replace("\xa0", " ")
    assert "от 149 ₽/ч · 80 000 ₽/мес" in lead
    assert "from 149 ₽/h · 80,000 ₽/month" in build_answer(result, "en").lead


@pytest.mark.parametrize("bad", ["price_per_month = -5", "price_per_month = inf", 'price_per_month = "x"'])
def test_a_bad_monthly_price_names_the_row(tmp_path: Path, bad: str) -> None:
    offers = tmp_path / "offers.toml"
    offers.write_text(OFFER.replace("price_per_month = 80000", bad))
    with pytest.raises(CatalogError, match=r"rtx4090-48gb-x1.*price_per_month"):
        load_catalog(offers_file=offers)
