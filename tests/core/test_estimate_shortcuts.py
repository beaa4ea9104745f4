"""What the estimator's shortcuts must leave as it was: a request or result copied without pydantic's
generic copy is the copy `model_copy` makes, a model's smaller sibling is read from the catalogue the
request is sized against, and the result still carries what the later steps add to it."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, PrivateAttr
from tiny_catalog import GPUS, MODELS, OFFERS, llm, tiny_catalog

from core.advice.sizing import variant
from core.catalogue.catalog import Catalog
from core.contract import Request, Result
from core.sizing.estimate import estimate


def _same_copy(a: BaseModel, b: BaseModel) -> None:
    assert type(a) is type(b)
    assert a.__dict__ == b.__dict__
    assert a.model_fields_set == b.model_fields_set
    assert a.model_dump_json() == b.model_dump_json()


def test_a_request_variant_is_what_model_copy_makes() -> None:
    req = estimate({"task": "inference", "model": "llama-8b"}, tiny_catalog()).request
    changes: dict[str, Any] = {"context_length": 1024, "concurrency": 3}
    copied = variant(req, changes)
    _same_copy(copied, req.model_copy(update=changes))
    assert req.context_length != 1024, "the original is left as it was"
    assert {"context_length", "concurrency"} <= copied.model_fields_set


def test_a_result_variant_is_what_model_copy_makes() -> None:
    result = estimate({"task": "inference", "model": "llama-8b"}, tiny_catalog())
    _same_copy(variant(result, {"launch_commands": []}), result.model_copy(update={"launch_commands": []}))


class _WithPrivate(BaseModel):
    value: int
    _seen: int = PrivateAttr(default=0)


class _WithExtra(BaseModel):
    model_config = ConfigDict(extra="allow")
    value: int


def test_a_model_with_private_or_extra_fields_is_copied_by_pydantic() -> None:
    private = _WithPrivate(value=1)
    private._seen = 5
    copied = variant(private, {"value": 2})
    assert copied.value == 2 and copied._seen == 5
    extra = _WithExtra(value=1, note="kept")  # type: ignore[call-arg]
    assert variant(extra, {"value": 2}).model_dump() == {"value": 2, "note": "kept"}


def _smaller(catalog: Catalog) -> str | None:
    result = estimate({"task": "inference", "model": "llama-70b", "gpus": ["card24"]}, catalog)
    return next((str(m.params["model"]) for m in result.mitigations if m.action == "smaller_model"), None)


def test_the_smaller_model_comes_from_the_catalogue_asked_each_time() -> None:
    assert _smaller(tiny_catalog()) == "llama-8b"
    without = Catalog(gpus=GPUS, models=[m for m in MODELS if m.id != "llama-8b"], offers=OFFERS)
    assert _smaller(without) is None
    other = llm("llama-13b", 13.0, 40, 5120, 40, 40, 13824)
    assert _smaller(Catalog(gpus=GPUS, models=[*MODELS, other], offers=OFFERS)) == "llama-13b"
    assert _smaller(tiny_catalog()) == "llama-8b", "and the first catalogue's answer is unchanged"


def test_the_result_carries_its_launch_commands_and_latency_in_its_json() -> None:
    result = estimate({"task": "inference", "model": "llama-3.1-8b", "requests_per_second": 2})
    assert result.launch_commands and result.latency is not None
    assert {"launch_commands", "latency", "throughput"} <= result.model_fields_set
    again = Result.model_validate_json(result.model_dump_json())
    assert again.launch_commands == result.launch_commands and again.latency == result.latency
    assert all(t.ttft_s is not None for t in again.throughput)
    assert isinstance(again.request, Request)
