"""The offer ranking policy (`[ranking]` and `priority` in the offers file), the cheapest and the
fastest offer, and the user's own card (`gpus`): through `estimate()` on the shipped GPUs and models,
with operators' offers files written to `tmp_path` and loaded by `load_catalog(offers_file=...)`."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from core.catalogue.catalog import Catalog, default_catalog, load_catalog
from core.catalogue.offers import DEFAULT_RANK_ORDER, RankingPolicy
from core.contract import Recommendation, Result
from core.sizing.estimate import estimate

SHIPPED = default_catalog()
SEVENTY_B = {"task": "inference", "model": "llama-3.1-70b", "precision": "bf16"}
QWEN_MOE = {"task": "inference", "model": "qwen3-30b-a3b", "precision": "bf16"}  # ~62 GB
EIGHT_B = {"task": "inference", "model": "llama-3.1-8b", "precision": "bf16"}  # ~18 GB


def offers_file(tmp_path: Path, offers: list[dict[str, Any]], ranking: str = "") -> Catalog:
    """An operator's offers file: `offers` rows (url and id filled in), an optional [ranking] table."""
    lines = [ranking, ""] if ranking else []
    for row in offers:
        row = {"id": f"{row['gpu']}-x{row['count']}", "url": "https://rent.test/x"} | row
        if "price_per_hour" in row:
            row.setdefault("currency", "RUB")
        lines.append("[[offer]]")
        lines += [f"{k} = {v!r}".replace("'", '"') for k, v in row.items()]
        lines.append("")
    path = tmp_path / "offers.toml"
    path.write_text("\n".join(lines), encoding="utf-8")
    return load_catalog(offers_file=path)


def pick(request: dict[str, Any], catalog: Catalog = SHIPPED) -> Recommendation:
    rec = estimate(request, catalog).recommendation
    assert rec is not None
    return rec


def config(rec: Recommendation | None) -> tuple[str, int] | None:
    return (rec.gpu, rec.count) if rec else None


# --- the rules, one at a time --------------------------------------------------------------------


def test_price_beats_priority(tmp_path: Path) -> None:
    catalog = offers_file(
        tmp_path,
        [
            {"gpu": "rtx4090-48gb", "count": 1, "price_per_hour": 200, "priority": 1},
            {"gpu": "a100-80gb", "count": 1, "price_per_hour": 100, "priority": 5},
            {"gpu": "h100-sxm", "count": 1, "priority": 0},  # on request: after every priced offer
        ],
    )
    rec = pick(EIGHT_B, catalog)
    assert (rec.offer_id, rec.price_per_hour, rec.reason) == ("a100-80gb-x1", 100, "cheapest")


def test_priority_beats_card_count(tmp_path: Path) -> None:
    catalog = offers_file(
        tmp_path,
        [{"gpu": "h100-sxm", "count": 1, "priority": 5}, {"gpu": "rtx4090-48gb", "count": 2, "priority": 1}],
    )
    assert config(pick(QWEN_MOE, catalog)) == ("rtx4090-48gb", 2)


def test_fewer_cards_beat_less_memory_and_memory_breaks_the_last_tie(tmp_path: Path) -> None:
    catalog = offers_file(
        tmp_path,
        [
            {"gpu": "rtx4090-48gb", "count": 2},  # 96 GB rented on two cards
            {"gpu": "b200", "count": 1},  # 180 GB on one
            {"gpu": "h200", "count": 1},  # 141 GB on one
        ],
    )
    assert config(pick(QWEN_MOE, catalog)) == ("h200", 1)


def test_comfortable_headroom_beats_a_cheaper_tight_fit(tmp_path: Path) -> None:
    tight = next(v for v in estimate(QWEN_MOE).verdicts if (v.gpu, v.count) == ("v100-16gb", 4))
    assert tight.verdict == "tight"  # 3% free
    offers = [
        {"gpu": "v100-16gb", "count": 4, "price_per_hour": 10, "priority": 1},
        {"gpu": "h100-sxm", "count": 1, "price_per_hour": 1000, "priority": 9},
    ]
    assert config(pick(QWEN_MOE, offers_file(tmp_path, offers))) == ("h100-sxm", 1)
    # the tight one when nothing fits comfortably
    only_tight = pick(QWEN_MOE, offers_file(tmp_path, offers[:1]))
    assert (config(only_tight), only_tight.verdict, only_tight.in_offers) == (("v100-16gb", 4), "tight", True)


def test_comfortable_headroom_is_read_from_the_file(tmp_path: Path) -> None:
    offers = [{"gpu": "rtx4090-48gb", "count": 1, "price_per_hour": 149}, {"gpu": "h100-sxm", "count": 1}]
    assert config(pick(EIGHT_B, offers_file(tmp_path, offers))) == ("rtx4090-48gb", 1)  # 66% free
    policy = "[ranking]\ncomfortable_headroom = 0.7\ncheapest_priced_leads = false"
    strict = offers_file(tmp_path, offers, policy)
    assert strict.ranking.comfortable_headroom == 0.7
    assert config(pick(EIGHT_B, strict)) == ("h100-sxm", 1)  # 79% free


# --- a tight priced offer before a comfortable one on request (`cheapest_priced_leads`) ------------

SEVENTY_B_INT4 = {"task": "inference", "model": "llama-3.1-70b", "precision": "int4"}  # 45.2 of 48 GB


def test_shipped_tight_priced_offer_leads_and_the_comfortable_one_is_second() -> None:
    result = estimate(SEVENTY_B_INT4)
    rec = result.recommendation
    assert rec is not None
    assert (config(rec), rec.verdict, rec.price_per_hour) == (("rtx4090-48gb", 1), "tight", 149)
    roomy = [a for a in result.alternatives if a.reason == "most_headroom"]
    assert [(config(a), a.verdict, a.price_per_hour) for a in roomy] == [(("rtx4090-48gb", 2), "fits", None)]
    said = next(a for a in result.assumptions if a.code == "tight_offer")
    assert said.params["percent"] == 10


def test_tight_priced_leads_is_the_file_s_policy(tmp_path: Path) -> None:
    offers = [{"gpu": "rtx4090-48gb", "count": 1, "price_per_hour": 149}, {"gpu": "rtx4090-48gb", "count": 2}]
    assert config(pick(SEVENTY_B_INT4, offers_file(tmp_path, offers))) == ("rtx4090-48gb", 1)
    off = offers_file(tmp_path, offers, "[ranking]\ncheapest_priced_leads = false")
    assert off.ranking.cheapest_priced_leads is False
    result = estimate(SEVENTY_B_INT4, off)
    assert config(result.recommendation) == ("rtx4090-48gb", 2)
    assert not [a for a in result.alternatives if a.reason == "most_headroom"]
    assert all(a.code != "tight_offer" for a in result.assumptions)


def test_safe_context_keeps_the_policy_headroom_on_the_tight_offer() -> None:
    # 120K tokens: 93 % of one 4090 48 GB, inside the tight band (128K is past it: no margin).
    request = {"task": "inference", "model": "llama-3.1-8b", "precision": "bf16", "context_length": 122880}
    result = estimate(request)
    assert config(result.recommendation) == ("rtx4090-48gb", 1)
    said = next(a for a in result.assumptions if a.code == "tight_offer")
    safe = said.params["context_length"]
    assert safe in (61440, 30720, 15360)
    at_safe = estimate({**request, "context_length": safe, "gpus": ["rtx4090-48gb"]})
    assert at_safe.target is not None and at_safe.target.headroom >= SHIPPED.ranking.comfortable_headroom
    at_double = estimate({**request, "context_length": safe * 2, "gpus": ["rtx4090-48gb"]})
    assert at_double.target is not None and at_double.target.headroom < SHIPPED.ranking.comfortable_headroom


def test_policy_order_is_read_from_the_file(tmp_path: Path) -> None:
    offers = [
        {"gpu": "rtx4090-48gb", "count": 2, "price_per_hour": 100, "priority": 5},
        {"gpu": "h100-sxm", "count": 1, "price_per_hour": 500, "priority": 1},
    ]
    assert config(pick(QWEN_MOE, offers_file(tmp_path, offers))) == ("rtx4090-48gb", 2)
    by_priority = offers_file(tmp_path, offers, '[ranking]\norder = ["priority", "price"]')
    assert by_priority.ranking.order == ["priority", "price"]
    assert config(pick(QWEN_MOE, by_priority)) == ("h100-sxm", 1)
    by_cards = offers_file(tmp_path, offers, '[ranking]\norder = ["cards"]')
    assert by_cards.ranking.keys == ["cards", "price", "priority", "memory"]  # the rest break ties
    assert config(pick(QWEN_MOE, by_cards)) == ("h100-sxm", 1)


def test_without_a_ranking_table_the_documented_default_applies(tmp_path: Path) -> None:
    catalog = offers_file(tmp_path, [{"gpu": "h100-sxm", "count": 1}])
    assert catalog.ranking == RankingPolicy()
    assert (catalog.ranking.comfortable_headroom, tuple(catalog.ranking.order)) == (0.10, DEFAULT_RANK_ORDER)
    assert catalog.offers[0].priority == 100


def test_an_operators_offers_change_the_recommendation(tmp_path: Path) -> None:
    shipped = pick(SEVENTY_B)
    assert shipped.offer_id == "rtx4090-48gb-x4"
    theirs = offers_file(
        tmp_path,
        [
            {"gpu": "rtx4090-48gb", "count": 4, "price_per_hour": 900, "priority": 1},
            {"gpu": "h100-sxm", "count": 2, "price_per_hour": 700, "priority": 2},
            {"gpu": "h200", "count": 2, "priority": 1, "url": "https://rent.test/h200"},
        ],
    )
    rec = pick(SEVENTY_B, theirs)
    assert (rec.offer_id, rec.price_per_hour, rec.url) == ("h100-sxm-x2", 700, "https://rent.test/x")


# --- the shipped offers --------------------------------------------------------------------------


def test_shipped_policy_puts_the_advertised_rtx4090_48gb_first() -> None:
    assert SHIPPED.ranking == RankingPolicy()
    priorities = {o.id: o.priority for o in SHIPPED.offers}
    advertised = {"rtx4090-48gb-x1", "rtx4090-48gb-x2", "rtx4090-48gb-x4"}
    assert {priorities[i] for i in advertised} == {1}
    assert min(p for i, p in priorities.items() if i not in advertised) > 1


def test_70b_bf16_goes_to_four_rtx4090_48gb() -> None:
    rec = pick(SEVENTY_B)
    assert (rec.gpu, rec.count, rec.offer_id, rec.in_offers, rec.verdict) == (
        "rtx4090-48gb",
        4,
        "rtx4090-48gb-x4",
        True,
        "fits",
    )
    assert rec.url


def test_qwen3_30b_a3b_goes_to_an_rtx4090_48gb_offer_with_room_to_spare() -> None:
    result = estimate(QWEN_MOE)
    rec = result.recommendation
    assert rec is not None and rec.gpu == "rtx4090-48gb" and rec.in_offers and rec.offer_id
    usable = SHIPPED.gpus["rtx4090-48gb"].usable_bytes
    assert (usable - rec.bytes_per_gpu) / usable >= SHIPPED.ranking.comfortable_headroom
    assert rec.count == 2  # 62 GB: one 48 GB card is not enough


@pytest.mark.parametrize(
    "request_fields",
    [
        SEVENTY_B,
        SEVENTY_B | {"engine": "vllm"},
        SEVENTY_B | {"context_length": 32768, "concurrency": 8, "engine": "vllm"},  # more than 4 × 48 GB
        {"task": "training", "model": "llama-3.1-8b"},
        {"task": "inference", "model": "qwen2.5-72b", "precision": "bf16"},
    ],
)
def test_a_request_for_rtx4090_48gb_never_recommends_more_cards_than_offered(
    request_fields: dict[str, Any],
) -> None:
    result = estimate(request_fields | {"gpus": ["rtx4090-48gb"]})
    rec = result.recommendation
    offered = {(o.gpu, o.count): o for o in SHIPPED.offers}
    assert rec is not None and rec.in_offers and (rec.gpu, rec.count) in offered
    assert offered[(rec.gpu, rec.count)].id == rec.offer_id
    if rec.gpu == "rtx4090-48gb":
        assert rec.count <= 4
    else:  # no 4090 48 GB server holds it: the best of all the offers
        assert all(
            v.verdict == "does_not_fit" for v in result.verdicts if v.gpu == "rtx4090-48gb" and v.count <= 4
        )


def test_cheapest_and_fastest_are_both_offered() -> None:
    result = estimate(SEVENTY_B)
    rec = result.recommendation
    assert rec is not None and rec.reason == "cheapest"
    [fast] = result.alternatives
    assert fast.reason == "fastest" and fast.in_offers and fast.offer_id and fast.url
    assert (fast.gpu, fast.count) != (rec.gpu, rec.count)
    # decode is bandwidth-bound: the fastest reads the weights faster than the cheapest
    bandwidth = {g.id: g.bandwidth_gb_s for g in SHIPPED.gpus.values()}
    assert bandwidth[fast.gpu] * fast.count > bandwidth[rec.gpu] * rec.count
    assert {(t.gpu, t.count) for t in result.throughput} >= {(rec.gpu, rec.count), (fast.gpu, fast.count)}
    for offer_rec in (rec, fast):  # both exist in the offers, with their own price and page
        offer = next(o for o in SHIPPED.offers if o.id == offer_rec.offer_id)
        assert (offer.gpu, offer.count, offer.url) == (offer_rec.gpu, offer_rec.count, offer_rec.url)


def test_training_judges_the_fastest_by_compute() -> None:
    result = estimate({"task": "training", "model": "llama-3.1-8b", "method": "lora"})
    rec = result.recommendation
    assert rec is not None and rec.offer_id == "rtx4090-48gb-x1"
    [fast] = result.alternatives
    tflops = {g.id: g.fp16_tflops or 0 for g in SHIPPED.gpus.values()}
    assert fast.reason == "fastest" and tflops[fast.gpu] == max(tflops[o.gpu] for o in SHIPPED.offers)


def test_no_alternative_when_the_cheapest_is_also_the_fastest(tmp_path: Path) -> None:
    catalog = offers_file(tmp_path, [{"gpu": "h100-sxm", "count": 1, "price_per_hour": 300}])
    result = estimate(EIGHT_B, catalog)
    assert config(result.recommendation) == ("h100-sxm", 1) and result.alternatives == []


def test_no_offer_fits_says_so_and_offers_no_alternative(tmp_path: Path) -> None:
    catalog = offers_file(tmp_path, [{"gpu": "rtx4090-48gb", "count": 1, "price_per_hour": 149}])
    result = estimate(QWEN_MOE, catalog)
    rec = result.recommendation
    assert rec is not None and not rec.in_offers and (rec.offer_id, rec.url) == (None, None)
    assert result.alternatives == []
    assert "not_in_offers" in {a.code for a in result.assumptions}


# --- the user's own card -------------------------------------------------------------------------


def own_card(**fields: Any) -> Result:
    return estimate(
        {"task": "inference", "model": "qwen2.5-14b", "precision": "bf16", "gpus": ["rtx3090"]} | fields
    )


def test_own_card_gets_its_verdict_and_mitigations_and_an_offer_to_rent() -> None:
    result = own_card()
    target = result.target
    assert target is not None
    assert (target.gpu, target.count, target.verdict) == ("rtx3090", 1, "does_not_fit")
    assert target.bytes_per_gpu == result.total_bytes
    # how to make it fit on that card: sized against the RTX 3090, at one card
    int8 = next(m for m in result.mitigations if m.action == "quantize_int8")
    assert int8.fits and (int8.fits_gpu, int8.fits_count) == ("rtx3090", 1)
    assert {m.fits_gpu for m in result.mitigations if m.fits_gpu} == {"rtx3090"}
    # what to rent: an existing offer, not "2 × RTX 3090, contact us"
    rec = result.recommendation
    assert rec is not None and rec.in_offers
    assert (rec.offer_id, rec.count, rec.price_per_hour, rec.currency) == ("rtx4090-48gb-x1", 1, 149, "RUB")
    assert "not_in_offers" not in {a.code for a in result.assumptions}
    # the verdicts keep the named card (and name the recommended one)
    assert {v.gpu for v in result.verdicts} >= {"rtx3090", "rtx4090-48gb"}
    assert [v.count for v in result.verdicts if v.gpu == "rtx3090"] == [1, 2]


def test_own_card_count_is_the_one_asked() -> None:
    result = own_card(num_gpus=2)
    assert result.target is not None
    assert (result.target.count, result.target.verdict) == (2, "fits")
    assert result.target.bytes_per_gpu == result.total_bytes
    assert ("rtx3090", 2) in {(t.gpu, t.count) for t in result.throughput}  # its speed, too
    assert result.recommendation is not None and result.recommendation.in_offers


def test_own_card_with_offers_of_its_own_recommends_those() -> None:
    result = estimate(SEVENTY_B | {"gpus": ["rtx4090-48gb"]})
    assert result.target is not None and (result.target.count, result.target.verdict) == (1, "does_not_fit")
    assert config(result.recommendation) == ("rtx4090-48gb", 4)
    more = next(m for m in result.mitigations if m.action == "more_gpus")
    assert (more.fits_gpu, more.fits_count) == ("rtx4090-48gb", 4)


def test_no_target_without_named_gpus() -> None:
    assert estimate(EIGHT_B).target is None


def test_the_answer_leads_with_the_tight_offer_and_names_the_comfortable_one_once() -> None:
    from core.layouts.plain import render_answer

    for lang, tight, roomy in (
        ("ru", "Впритык: свободно меньше 10 %", "С запасом: 2× RTX 4090 48 GB, цена по запросу"),
        ("en", "Tight: less than 10 %", "With headroom: 2× RTX 4090 48 GB, price on request"),
    ):
        text = render_answer(estimate(SEVENTY_B_INT4), lang)
        lead, _need, line = text.splitlines()[:3]
        assert "1× RTX 4090 48 GB" in lead and "149" in lead
        assert tight in line and roomy in line
        assert text.count(roomy) == 1
