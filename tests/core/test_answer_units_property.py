"""Property (issue 25, "Done when"): for generated requests — tasks, models, precisions, card counts,
named cards — every size the answer shows says per card (or is the server's), the breakdown adds up
to the figure it explains, and no verdict shown as a fit lies beyond the tight band."""

from __future__ import annotations

import re
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from core.catalogue.catalog import default_catalog
from core.contract import Result
from core.errors import CoreError
from core.language.answer import Answer, build_answer
from core.language.phrases import format_bytes
from core.layouts.plain import layout
from core.sizing.estimate import estimate

CATALOG = default_catalog()
TIGHT = CATALOG.ranking.tight_headroom
SIZE = re.compile(r"\d[\d\xa0\u202f ]*(?:,\d+)? (?:ГБ|МБ)")
# a line with a size says per card, or it is the server's (host RAM and disk), or its block's
# heading says per card for every line of it
PER_CARD = ("на карту", "Сервер:")
FITS = re.compile(r"(?<!не )(?:влезает|влезает впритык), ([\d\xa0 ]+,\d) ГБ из ([\d\xa0 ]+,\d) ГБ")

MODELS = ["llama-3.1-8b", "qwen2.5-7b", "llama-3.1-70b", "mistral-7b", "qwen2.5-32b", "qwen3-30b-a3b"]
CARDS = ["t4", "rtx3090", "rtx4090-48gb", "l4", "a100-80gb", "h100-sxm"]


@st.composite
def requests(draw: st.DrawFn) -> dict[str, Any]:
    task = draw(st.sampled_from(["inference", "training", "image_generation", "video_generation"]))
    request: dict[str, Any] = {"task": task, "model": draw(st.sampled_from(MODELS))}
    if task == "image_generation":
        request["model"] = draw(st.sampled_from(["sdxl", "flux.1-dev"]))
        request["images"] = draw(st.sampled_from([1, 4]))
    elif task == "video_generation":
        request["model"] = draw(st.sampled_from(["wan2.1-t2v-14b", "cogvideox-5b"]))
    elif task == "inference":
        request["precision"] = draw(st.sampled_from([None, "bf16", "int8", "int4", "fp8"]))
        request["concurrency"] = draw(st.sampled_from([1, 4, 16]))
        request["context_length"] = draw(st.sampled_from([2048, 8192, 32768]))
    else:
        request["method"] = draw(st.sampled_from(["full", "lora", "qlora"]))
        request["batch_size"] = draw(st.sampled_from([1, 4]))
    request["num_gpus"] = draw(st.sampled_from([1, 2, 4, 8]))
    if draw(st.booleans()):
        request["gpus"] = [draw(st.sampled_from(CARDS))]
    return {k: v for k, v in request.items() if v is not None}


def sized(request: dict[str, Any]) -> Result | None:
    try:
        return estimate(request, CATALOG)
    except CoreError:  # a request the estimator refuses (a split the model does not allow)
        return None


def number(text: str) -> float:
    return float(text.replace("\xa0", "").replace(" ", "").replace(",", "."))


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(requests())
def test_every_size_is_per_card_the_breakdown_adds_up_and_no_fit_beyond_the_band(
    request: dict[str, Any],
) -> None:
    result = sized(request)
    if result is None:
        return
    answer = build_answer(result, "ru")
    text = layout(answer)
    assert_every_size_is_per_card(text)
    assert_the_breakdown_adds_up(result, answer)
    assert_no_fit_beyond_the_band(result, text)


def assert_every_size_is_per_card(text: str) -> None:
    assumptions = "Допущения:"
    for block in text.split("\n\n"):
        if block.startswith(assumptions):
            continue  # the method's own constants (a 5 GB checkpoint shard), not the answer's sizes
        heading, *_ = block.splitlines()
        for line in block.splitlines():
            if SIZE.search(line):
                assert any(m in line or m in heading for m in PER_CARD), line


def assert_the_breakdown_adds_up(result: Result, answer: Answer) -> None:
    """The breakdown adds up to the figure its heading and the lead give."""
    total = sum(answer.part_bytes)
    figure = format_bytes(total, "ru")
    assert figure in answer.parts_title
    lead_figure = (
        result.target.bytes_per_gpu
        if result.target is not None
        else result.recommendation.bytes_per_gpu
        if result.recommendation is not None
        else result.total_bytes
    )
    assert abs(total - lead_figure) <= len(answer.part_bytes) + 1, (total, lead_figure)


def assert_no_fit_beyond_the_band(result: Result, text: str) -> None:
    """Nothing shown as a fit beyond the tight band: the verdicts, and their words."""
    shown = [*result.verdicts, *([result.target] if result.target else [])]
    for v in shown:
        if v.verdict != "does_not_fit":
            assert v.bytes_per_gpu <= v.usable_bytes * (1 - TIGHT), v
    for rec in [result.recommendation, *result.alternatives]:
        if rec is not None and rec.verdict != "does_not_fit":
            usable = CATALOG.gpus[rec.gpu].usable_bytes
            assert rec.bytes_per_gpu <= usable * (1 - TIGHT), rec
    for need, usable in FITS.findall(text):
        assert number(need) <= number(usable) * (1 - TIGHT) + 0.1, (need, usable)
    for m in result.mitigations:
        if m.fits and m.fits_gpu is not None:
            assert m.total_bytes <= CATALOG.gpus[m.fits_gpu].usable_bytes * (1 - TIGHT), m
