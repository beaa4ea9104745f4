"""Property: for any request the page can make, the API's numbers are the contract's — those of
`python -m core estimate --json` for the same request (and a request the CLI refuses, the API
refuses too). The bot and its page run in a thread of their own (its own event loop), so the test
itself is plain and hypothesis drives it."""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bot.throttle import Limits, Throttle
from bot.webapp.auth import sign
from core.catalogue.catalog import default_catalog
from core.catalogue.models import ModelKind
from tests.bot.e2e.test_webapp_api import CONTRACT, cli_estimate
from tests.bot.e2e.webapp_fixtures import bot_in_thread

CATALOG = default_catalog()
MODELS = {kind: sorted(m.id for m in CATALOG.models.values() if m.kind == kind) for kind in ModelKind}
GPUS = sorted(CATALOG.gpus)
PRECISIONS = ["bf16", "fp16", "fp8", "int8", "int4", "awq-int4", "gptq-int4", "q4_k_m", "q8_0"]


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory, template_db: Path) -> Iterator[tuple[str, str]]:
    """(the page's base URL, the bot token): the real bot and its page, in a thread of their own."""
    # As many calls as the test makes: throttling has tests of its own.
    throttle = Throttle(buttons=Limits(1_000_000, 1_000_000.0))
    with bot_in_thread(tmp_path_factory.mktemp("property"), template_db, throttle) as bot:
        yield bot.url, bot.token


def api_answer(served: tuple[str, str], request: dict[str, Any]) -> tuple[int, Any]:
    url, token = served
    call = urllib.request.Request(
        url + "/app/api/answer",
        data=json.dumps(request).encode(),
        headers={
            "X-Telegram-Init-Data": sign(token, {"id": 42, "first_name": "P"}),
            "Content-Type": "application/json",
        },
        method="POST",
    )
    try:
        with urllib.request.urlopen(call, timeout=30) as r:
            return r.status, json.loads(r.read())
    except urllib.error.HTTPError as e:
        return e.code, json.loads(e.read())


def _maybe(strategy: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    return st.one_of(st.none(), strategy)


@st.composite
def page_requests(draw: st.DrawFn) -> dict[str, Any]:
    """What the page's controls can ask: a task, a catalogue model of its kind, a precision, the
    sliders of that task within their ranges, and a card with a count (or none)."""
    task = draw(st.sampled_from(["inference", "lora", "qlora", "full", "image", "video"]))
    fields: dict[str, Any]
    if task == "inference":
        fields = {"task": "inference", "model": draw(st.sampled_from(MODELS[ModelKind.LLM]))}
        fields["context_length"] = draw(_maybe(st.integers(512, 131072)))
        fields["concurrency"] = draw(_maybe(st.integers(1, 256)))
    elif task in ("lora", "qlora", "full"):
        fields = {"task": "training", "method": task, "model": draw(st.sampled_from(MODELS[ModelKind.LLM]))}
        fields["seq_len"] = draw(_maybe(st.integers(256, 32768)))
        fields["batch_size"] = draw(_maybe(st.integers(1, 64)))
    else:
        kind = ModelKind.IMAGE if task == "image" else ModelKind.VIDEO
        fields = {"task": f"{kind.value}_generation", "model": draw(st.sampled_from(MODELS[kind]))}
        side = draw(_maybe(st.integers(4, 32).map(lambda n: n * 64)))
        fields["resolution"] = None if side is None else [side, side]
        if task == "video":
            fields["frames"] = draw(_maybe(st.integers(1, 161)))
    fields["precision"] = draw(_maybe(st.sampled_from(PRECISIONS)))
    if draw(st.booleans()):
        fields["gpus"] = [draw(st.sampled_from(GPUS))]
        fields["num_gpus"] = draw(st.sampled_from([1, 2, 4, 8]))
    return {k: v for k, v in fields.items() if v is not None}


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(request=page_requests())
def test_the_pages_numbers_are_the_clis(served: tuple[str, str], request: dict[str, Any]) -> None:
    status, body = api_answer(served, request)
    code, result = cli_estimate(request)
    if code != 0:  # the CLI refuses it (exit status 2): so does the API, naming the same field
        assert (status, body["error"], body["field"]) == (422, "invalid", result["field"])
        return
    assert status == 200, body
    assert {k: body[k] for k in CONTRACT} == {k: result[k] for k in CONTRACT}
    assert body["request"] == result["request"]
    for card in body["cards"]:  # the bar is the breakdown of the configuration as asked (each part
        if card["as_asked"]:  # rounded to whole bytes on its own)
            assert abs(sum(p["bytes"] for p in body["parts"]) - card["need_bytes"]) <= len(body["parts"])
