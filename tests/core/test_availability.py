"""Offer availability (`availability` in the offers file): a sold-out offer is never recommended, the
answer says which one is taken, an offer "on request" is ranked and priced as such, and the price
list marks the taken ones — through `estimate()`, `build_answer()` and `price_list()`."""

from __future__ import annotations

from pathlib import Path

import pytest

from core.catalogue.catalog import Catalog, default_catalog, load_catalog
from core.catalogue.offers import Availability
from core.errors import CatalogError
from core.language.answer import build_answer
from core.language.prices import price_list, render_price_list
from core.language.words import t
from core.sizing.estimate import estimate

SHIPPED = default_catalog()
SEVENTY_B = {"task": "inference", "model": "llama-3.1-70b", "precision": "bf16"}  # 4× RTX 4090 48 GB
EIGHT_B = {"task": "inference", "model": "llama-3.1-8b", "precision": "bf16"}  # 1× RTX 4090 48 GB


def marked(**availability: Availability) -> Catalog:
    """The shipped catalogue with offers (by id) marked as given."""
    offers = [
        o.model_copy(update={"availability": availability.get(o.id, "available")}) for o in SHIPPED.offers
    ]
    gpus, models = list(SHIPPED.gpus.values()), list(SHIPPED.models.values())
    return Catalog(gpus, models, offers, ranking=SHIPPED.ranking)


@pytest.mark.parametrize("request_, taken", [(SEVENTY_B, "rtx4090-48gb-x4"), (EIGHT_B, "rtx4090-48gb-x1")])
def test_sold_out_offer_is_never_recommended(request_: dict[str, str], taken: str) -> None:
    assert estimate(request_, SHIPPED).recommendation.offer_id == taken  # type: ignore[union-attr]
    result = estimate(request_, marked(**{taken: "sold_out"}))
    assert result.recommendation is not None and result.recommendation.in_offers
    offered = [result.recommendation.offer_id, *(a.offer_id for a in result.alternatives)]
    assert taken not in offered
    notes = [a for a in result.assumptions if a.code == "offer_sold_out"]
    assert [n.params["offer"] for n in notes] == [taken]


def test_sold_out_note_only_where_the_taken_offer_would_have_led() -> None:
    catalog = marked(**{"rtx4090-48gb-x4": "sold_out"})
    result = estimate(EIGHT_B, catalog)
    assert result.recommendation is not None and result.recommendation.offer_id == "rtx4090-48gb-x1"
    assert all(a.code != "offer_sold_out" for a in result.assumptions)
    assert any(a.code == "offer_sold_out" for a in estimate(SEVENTY_B, catalog).assumptions)


@pytest.mark.parametrize("lang, words", [("ru", "сейчас занято"), ("en", "taken right now")])
def test_answer_says_the_best_configuration_is_taken(lang: str, words: str) -> None:
    result = estimate(SEVENTY_B, marked(**{"rtx4090-48gb-x4": "sold_out"}))
    text = build_answer(result, lang).taken or ""
    assert words in text and "4× RTX 4090 48 GB" in text


def test_on_request_offer_is_ranked_and_shown_without_its_price() -> None:
    result = estimate(EIGHT_B, marked(**{"rtx4090-48gb-x1": "on_request"}))
    rec = result.recommendation
    assert rec is not None
    assert rec.price_per_hour is None or rec.offer_id != "rtx4090-48gb-x1"


@pytest.mark.parametrize("lang", ["ru", "en"])
def test_price_list_marks_sold_out_offers(lang: str) -> None:
    prices = price_list(None, marked(**{"rtx4090-48gb-x1": "sold_out"}), lang)
    text = render_price_list(prices)
    rtx = next(line for line in prices.lines if "4090" in line)
    assert t("prices-sold-out", lang) in rtx and "149" not in rtx
    assert t("prices-sold-out-note", lang) in text
    assert prices.rent is None or prices.rent.availability != "sold_out"
    assert t("prices-sold-out", lang) not in render_price_list(price_list(None, SHIPPED, lang))


def test_offers_file_availability_is_validated(tmp_path: Path) -> None:
    path = tmp_path / "offers.toml"
    row = '[[offer]]\nid = "x"\ngpu = "h100-sxm"\ncount = 1\nurl = "https://rent.test/x"\n'
    path.write_text(row + 'availability = "sold_out"\n', encoding="utf-8")
    assert load_catalog(offers_file=path).offers[0].availability == "sold_out"
    path.write_text(row + 'availability = "busy"\n', encoding="utf-8")
    with pytest.raises(CatalogError, match="availability"):
        load_catalog(offers_file=path)
