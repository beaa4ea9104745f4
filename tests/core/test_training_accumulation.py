"""Gradient accumulation where it is the answer (issue 20 item 9): a batch that does not fit one card
comfortably is first offered as a smaller micro-batch accumulated over steps (the same batch per
optimizer step, the same training: transformers' `per_device_train_batch_size` ×
`gradient_accumulation_steps`), before more cards; the contract's field sizes the micro-batch and
leaves the time of a run (the same tokens) unchanged."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import ValidationError

from core.advice.ranking import accumulation_for, largest_micro_batch
from core.catalogue.catalog import default_catalog
from core.contract import Request
from core.inverse.solve import run
from core.language.answer import build_answer
from core.sizing.estimate import estimate
from core.units import GiB

CATALOG = default_catalog()
# The case: QLoRA of a 7B at batch 8 (2,048 tokens) fits one RTX 4090 48 GB only tightly,
# and the comfortable option named was four of them at ~42 GiB per card.
QLORA_7B_BATCH_8 = {"task": "training", "model": "qwen2.5-7b", "method": "qlora", "batch_size": 8}


def test_a_tight_batch_is_offered_as_micro_batches_first() -> None:
    result = estimate(QLORA_7B_BATCH_8, CATALOG)
    first = result.mitigations[0]
    assert first.action == "gradient_accumulation"
    assert (first.params["batch_size"], first.params["steps"]) == (4, 2)
    assert first.fits and first.fits_on == "1x rtx4090-48gb"
    assert 25 * GiB < first.total_bytes < 33 * GiB  # ~30 GiB of 48, against 42 per card on four


@pytest.mark.parametrize("lang", ["en", "ru"])
def test_the_tight_answer_says_the_accumulation_before_more_cards(lang: str) -> None:
    # 1,900 tokens: one 4090 48 GB fits tightly (92 %); at 2,048 it has no margin and 4× leads
    result = estimate({**QLORA_7B_BATCH_8, "seq_len": 1900}, CATALOG)
    tight = next(a for a in result.assumptions if a.code == "tight_offer")
    assert (tight.params["micro_batch"], tight.params["accumulation"]) == (4, 2)
    line = build_answer(result, lang).tight
    assert line is not None
    roomy = next(a for a in result.alternatives if a.reason == "most_headroom")
    said = line.index("4 × ")
    # "micro-batch 4 × accumulation 2" before "2× RTX 4090 48 GB" (with headroom)
    assert said < line.index(f"{roomy.count}×")


def test_the_micro_batch_is_sized_as_the_contract_asks() -> None:
    """The mitigation's need is the request with `batch_size` the micro-batch and the steps set."""
    result = estimate(QLORA_7B_BATCH_8, CATALOG)
    first = result.mitigations[0]
    asked = estimate({**QLORA_7B_BATCH_8, "batch_size": 4, "gradient_accumulation_steps": 2}, CATALOG)
    assert asked.total_bytes == first.total_bytes
    assert asked.total_bytes < result.total_bytes


def test_accumulation_keeps_the_time_of_a_run() -> None:
    """The same tokens: time and cost follow the dataset, not how it is cut into micro-batches."""
    # one H100 holds both, so the two runs are timed on the same configuration
    data: dict[str, Any] = {"examples": 10_000, "tokens_per_example": 1000, "gpus": ["h100-sxm"]}
    whole = run({**QLORA_7B_BATCH_8, **data})
    cut = run({**QLORA_7B_BATCH_8, **data, "batch_size": 4, "gradient_accumulation_steps": 2})
    assert whole.cost is not None and cut.cost is not None
    assert cut.cost.options[0].hours_low == whole.cost.options[0].hours_low
    assert cut.cost.options[0].hours_high == whole.cost.options[0].hours_high


@pytest.mark.parametrize("steps", [0, -1, 100_001])
def test_accumulation_steps_out_of_bounds_are_refused(steps: int) -> None:
    with pytest.raises(ValidationError, match="gradient_accumulation_steps"):
        Request(**{**QLORA_7B_BATCH_8, "gradient_accumulation_steps": steps})


@pytest.mark.parametrize(
    ("batch", "steps", "limit", "expected"),
    [
        (8, 1, 4, (4, 2)),
        (6, 1, 3, (3, 2)),
        (6, 1, 2, (2, 3)),
        (7, 1, 6, (1, 7)),
        (8, 2, 2, (2, 8)),
        (8, 1, 0, None),
    ],
)
def test_the_micro_batch_divides_the_batch_and_keeps_it_per_step(
    batch: int, steps: int, limit: int, expected: tuple[int, int] | None
) -> None:
    """The largest divisor of the batch below it whose variant fits; the steps keep batch × steps."""
    req = Request(**{**QLORA_7B_BATCH_8, "batch_size": batch, "gradient_accumulation_steps": steps})
    micro = largest_micro_batch(req, lambda changes: changes["batch_size"] <= limit)
    found = (micro, accumulation_for(req, micro)) if micro else None
    assert found == expected
    if found:
        assert found[0] * found[1] == batch * steps
