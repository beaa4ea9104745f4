"""`core.sizing.memo`: estimates and answers remembered, and sized afresh whenever what they were sized
from changed (another catalogue, a Hugging Face record looked up, replaced or dropped)."""

from __future__ import annotations

from typing import Any

import pytest

from core.catalogue.catalog import default_catalog, load_catalog
from core.contract import Request
from core.errors import CoreError
from core.inverse.solve import run
from core.language.answer import build_answer
from core.language.words import note
from core.model.hub import MemoryHub
from core.sizing.memo import Estimates
from tests.fake_hub import fixture_config

REQUEST: dict[str, Any] = {"task": "inference", "model": "qwen3-8b", "precision": "int4"}
CLONE = "acme/Clone-8B"  # not in the catalogue: sized from the hub
Record = tuple[dict[str, Any], dict[str, int] | None]


def hub_of(records: dict[str, Record]) -> MemoryHub:
    return MemoryHub(records, key=str.lower)


def test_the_same_request_is_sized_once() -> None:
    estimates, hub, catalog = Estimates(), hub_of({}), default_catalog()
    first = estimates.run(REQUEST, catalog, hub=hub)
    assert first.model_dump() == run(REQUEST, catalog).model_dump()
    assert estimates.run(Request.model_validate(REQUEST), catalog, hub=hub) is first  # dict or Request
    assert estimates.run(dict(REQUEST), catalog, hub=hub_of({})) is first  # another hub of the same records
    assert (estimates.hits, estimates.misses) == (2, 1)
    other = estimates.run({**REQUEST, "context_length": 8192}, catalog, hub=hub)
    assert other is not first and estimates.misses == 2


def test_another_catalogue_is_sized_afresh(tmp_path: Any) -> None:
    """`/offers reload` builds a new Catalog: nothing sized from the old one is reused."""
    estimates, hub = Estimates(), hub_of({})
    offers = tmp_path / "offers.toml"
    offers.write_text(
        '[[offer]]\nid = "h100-x1"\ngpu = "h100-sxm"\ncount = 1\nprice_per_hour = 300\ncurrency = "RUB"\n'
        'url = "https://example.com/h100"\n'
    )
    before = estimates.run(REQUEST, default_catalog(), hub=hub)
    after = estimates.run(REQUEST, load_catalog(offers_file=offers), hub=hub)
    assert before.recommendation is not None and after.recommendation is not None
    assert before.recommendation.offer_id != "h100-x1" and after.recommendation.offer_id == "h100-x1"
    assert estimates.misses == 2


def test_a_hugging_face_model_is_sized_from_the_record_the_hub_holds_now() -> None:
    estimates, catalog = Estimates(), default_catalog()
    records: dict[str, Record] = {}
    hub = hub_of(records)
    request = {**REQUEST, "model": CLONE}
    with pytest.raises(CoreError):  # not looked up yet: unknown, and the error is not remembered
        estimates.run(request, catalog, hub=hub)
    records[CLONE.lower()] = (fixture_config("meta-llama/Llama-3.1-8B"), {"BF16": 8_030_261_248})
    small = estimates.run(request, catalog, hub=hub)
    assert estimates.run(request, catalog, hub=hub) is small
    # looked up again with another config (evicted and read anew): sized from that one
    records[CLONE.lower()] = (fixture_config("Qwen/Qwen3-30B-A3B"), None)
    large = estimates.run(request, catalog, hub=hub)
    assert large is not small and large.total_bytes > small.total_bytes
    assert large.model_dump() == run(request, catalog, hub=hub).model_dump()
    # the same content under a new record (read anew from the database): sized again, the same
    records[CLONE.lower()] = (dict(records[CLONE.lower()][0]), None)
    again = estimates.run(request, catalog, hub=hub)
    assert again is not large and again.model_dump() == large.model_dump()
    del records[CLONE.lower()]  # dropped from memory: unknown again
    with pytest.raises(CoreError):
        estimates.run(request, catalog, hub=hub)


def test_a_catalogue_model_does_not_depend_on_the_hub() -> None:
    estimates, catalog = Estimates(), default_catalog()
    records: dict[str, Record] = {}
    first = estimates.run(REQUEST, catalog, hub=hub_of(records))
    records[CLONE.lower()] = (fixture_config("meta-llama/Llama-3.1-8B"), None)  # a model looked up
    assert estimates.run(REQUEST, catalog, hub=hub_of(records)) is first


def test_without_a_memory_hub_nothing_is_remembered() -> None:
    """No hub (which may reach the network, GPUFIT_HF_LOOKUP) or another hub: plain `run`."""
    estimates, catalog = Estimates(), default_catalog()
    first = estimates.run(REQUEST, catalog)
    assert estimates.run(REQUEST, catalog) is not first
    assert len(estimates) == 0 and estimates.hits == estimates.misses == 0


def test_the_oldest_estimate_makes_room() -> None:
    estimates, hub, catalog = Estimates(size=2), hub_of({}), default_catalog()
    requests = [{**REQUEST, "context_length": 1024 * 2**n} for n in range(3)]
    first, second, _ = (estimates.run(r, catalog, hub=hub) for r in requests)
    assert len(estimates) == 2
    assert estimates.run(requests[1], catalog, hub=hub) is second
    assert estimates.run(requests[0], catalog, hub=hub) is not first  # evicted: sized again
    assert estimates.misses == 4


def test_an_answer_is_built_once_per_result_language_and_notes() -> None:
    estimates, hub, catalog = Estimates(), hub_of({}), default_catalog()
    result = estimates.run(REQUEST, catalog, hub=hub)
    notes = [note("parse_gguf_default")]
    answer = estimates.answer(result, "ru", notes)
    assert answer == build_answer(result, "ru", notes)
    assert estimates.answer(result, "ru-RU", list(notes)) is answer
    assert estimates.answer(result, "en", notes) == build_answer(result, "en", notes) != answer
    assert estimates.answer(result, "ru") == build_answer(result, "ru") != answer
    # against a previous answer, or for a result it did not size: built each time, the same
    previous = estimates.run({**REQUEST, "precision": "bf16"}, catalog, hub=hub)
    changed = estimates.answer(result, "ru", notes, previous)
    assert changed == build_answer(result, "ru", notes, previous) and changed.change
    copy = result.model_copy()
    assert estimates.answer(copy, "ru", notes) == answer and estimates.answer(copy, "ru", notes) is not answer


def test_an_evicted_estimate_takes_its_answers_with_it() -> None:
    estimates, hub, catalog = Estimates(size=1), hub_of({}), default_catalog()
    first = estimates.run(REQUEST, catalog, hub=hub)
    answer = estimates.answer(first, "ru")
    assert estimates.answer(first, "ru") is answer
    estimates.run({**REQUEST, "precision": "bf16"}, catalog, hub=hub)  # `first` makes room
    again = estimates.answer(first, "ru")
    assert again == answer and again is not answer
