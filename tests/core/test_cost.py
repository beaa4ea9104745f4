"""Time and cost through the public core (`core.inverse.solve.run`): grows with the work, constants as
stated."""

from __future__ import annotations

from typing import Any

import pytest

from core.catalogue.catalog import default_catalog
from core.contract import Result
from core.inverse.cost import (
    BATCH_FILL,
    FROZEN_BASE_FLOPS_FACTOR,
    FULL_FLOPS_FACTOR,
    MFU_FULL,
    RECOMPUTE_FLOPS,
    figure_for,
    figures,
)
from core.inverse.solve import run

LORA = {"task": "training", "model": "llama-3.1-8b", "method": "lora"}


def cost(fields: dict[str, Any]) -> Result:
    result = run(fields)
    assert result.cost is not None
    return result


def hours(result: Result) -> tuple[float, float]:
    assert result.cost is not None
    first = result.cost.options[0]
    assert first.hours_low is not None and first.hours_high is not None
    return first.hours_low, first.hours_high


def test_training_cost_grows_with_the_dataset_and_the_epochs() -> None:
    small = cost({**LORA, "examples": 10_000, "tokens_per_example": 1000})
    large = cost({**LORA, "examples": 40_000, "tokens_per_example": 1000})
    more_epochs = cost({**LORA, "examples": 10_000, "tokens_per_example": 1000, "epochs": 3})
    assert hours(large)[0] == pytest.approx(4 * hours(small)[0], rel=0.01)
    assert hours(more_epochs)[1] == pytest.approx(3 * hours(small)[1], rel=0.01)
    assert small.cost and large.cost
    low, high = small.cost.options[0].cost_low, large.cost.options[0].cost_low
    assert low is not None and high is not None and high > low  # priced on the 149 ₽/h offer


def test_flops_follow_the_stated_factors() -> None:
    n = 8.030e9
    tokens = 1e9
    plain = {"dataset_tokens": int(tokens), "gradient_checkpointing": False}
    full = cost({"task": "training", "model": "llama-3.1-8b", **plain}).cost
    lora = cost({**LORA, **plain}).cost
    qlora = cost({**LORA, "method": "qlora", "dataset_tokens": int(tokens)}).cost
    assert full and lora and qlora
    assert full.flops == pytest.approx(FULL_FLOPS_FACTOR * n * tokens, rel=0.01)
    assert lora.flops == pytest.approx(FROZEN_BASE_FLOPS_FACTOR * n * tokens, rel=0.01)
    # checkpointing (the trainers' default for a decoder, and QLoRA's) recomputes one forward
    assert qlora.flops_factor == FROZEN_BASE_FLOPS_FACTOR + RECOMPUTE_FLOPS


def test_hours_are_flops_over_peak_times_utilisation() -> None:
    result = cost({"task": "training", "model": "llama-3.1-8b", "dataset_tokens": 10**9})
    assert result.cost is not None
    option = result.cost.options[0]
    peak = default_catalog().gpus[option.gpu].fp16_tflops
    assert peak is not None and result.cost.flops
    expected_fast = result.cost.flops / (option.count * peak * 1e12 * MFU_FULL[1]) / 3600
    assert option.hours_low == pytest.approx(expected_fast, rel=0.01)
    assert option.gpu_hours_low == pytest.approx(expected_fast * option.count, rel=0.01)


def test_serving_cost_grows_with_requests_and_says_how_many_servers() -> None:
    base = {"task": "inference", "model": "llama-3.1-8b", "concurrency": 8}
    day = cost({**base, "requests_per_day": 10_000})
    busy = cost({**base, "requests_per_day": 1_000_000})
    assert hours(busy)[0] == pytest.approx(100 * hours(day)[0], rel=0.02)
    assert busy.cost and busy.cost.options[0].servers and busy.cost.options[0].servers > 1
    assert day.cost and day.cost.options[0].servers == 1
    low, high = hours(day)
    assert high / low == pytest.approx(1 / BATCH_FILL[0], rel=0.2)  # the batch-fill range dominates


def test_image_cost_only_where_a_figure_is_published() -> None:
    result = cost({"task": "image_generation", "model": "flux.1-dev", "outputs": 1000})
    assert result.cost is not None and result.cost.source and "BenchmarkFlux" in result.cost.source
    timed = [o for o in result.cost.options if o.seconds_per_output_low is not None]
    assert timed and all(o.gpu in {"a100-80gb", "a100-40gb", "h100-sxm", "h200"} for o in timed)
    untimed = [o for o in result.cost.options if o.gpu == "rtx4090-48gb"]
    assert untimed and untimed[0].hours_low is None  # no published figure: no guess
    double = cost({"task": "image_generation", "model": "flux.1-dev", "outputs": 2000}).cost
    assert double is not None
    a100 = next(o for o in double.options if o.seconds_per_output_low is not None)
    assert a100.hours_low == pytest.approx(2 * (timed[0].hours_low or 0), rel=0.01)


def test_published_figures_name_catalogue_models_and_cards() -> None:
    catalog = default_catalog()
    for figure in figures():
        assert figure.model in catalog.models, figure.id
        assert all(g in catalog.gpus for g in figure.gpus), figure.id
        assert figure.seconds_low <= figure.seconds_high, figure.id


def test_fp8_peak_only_on_fp8_cards_and_double_the_16_bit_rate() -> None:
    for gpu in default_catalog().gpus.values():
        if gpu.fp8_tflops is not None:
            assert gpu.fp8 and gpu.fp16_tflops
            assert gpu.fp8_tflops == pytest.approx(2 * gpu.fp16_tflops, rel=0.02), gpu.id


def test_no_cost_fields_no_cost() -> None:
    assert run({"task": "inference", "model": "llama-3.1-8b"}).cost is None


@pytest.mark.parametrize(("lang", "word"), [("ru", "от "), ("en", "from ")])
@pytest.mark.parametrize(
    "fields",
    [
        {**LORA, "examples": 10_000, "tokens_per_example": 1000},
        {"task": "inference", "model": "llama-3.1-8b", "requests_per_day": 10_000},
    ],
    ids=["training", "serving"],
)
def test_a_starting_price_is_said_as_one_in_the_cost_lines(
    fields: dict[str, Any], lang: str, word: str
) -> None:
    """The 4090 48 GB offer costs "from 149 ₽/h": its cost is "from …" too, as the lead line says;
    an offer with a fixed price is said without it."""
    from core.language.answer_solve import cost_lines

    result = cost(fields)
    assert result.cost is not None
    lines = cost_lines(result, lang)[1:]  # after the head, one line per option (all are timed here)
    assert len(lines) == len(result.cost.options)
    for option, line in zip(result.cost.options, lines, strict=True):
        if option.cost_low is not None:
            assert line.split(" · ", 1)[1].startswith(word) == option.price_is_from, line
    assert any(o.price_is_from and o.cost_low is not None for o in result.cost.options)


def test_a_card_of_the_same_compute_gets_the_measured_cards_figure_and_says_so() -> None:
    """gpus.toml `same_compute_as`: the 4090 48 GB uses the 24 GB 4090's published Wan 2.1 time, with
    a note naming the card measured (the catalogue refuses the field between unequal cards)."""
    catalog = default_catalog()
    assert catalog.gpus["rtx4090-48gb"].same_compute_as == "rtx4090"
    result = cost({"task": "video_generation", "model": "wan2.1-t2v-1.3b", "outputs": 100})
    assert result.cost is not None
    first = result.cost.options[0]
    assert first.gpu == "rtx4090-48gb" and first.seconds_per_output_low == 216
    assert first.seconds_per_output_high == 264  # Wan2.1 README: "about 4 minutes", ± 10 %
    notes = [a for a in result.assumptions if a.code == "cost_figure_same_compute"]
    assert len(notes) == 1 and notes[0].params["measured"] == catalog.gpus["rtx4090"].name
    # a figure measured on the 48 GB card's own rows (none) or on other cards borrows nothing
    flux = cost({"task": "image_generation", "model": "flux.1-dev", "outputs": 100})
    assert not any(a.code == "cost_figure_same_compute" for a in flux.assumptions)


@pytest.mark.parametrize(
    ("model", "gpu", "seconds"),
    [
        ("cogvideox-2b", "a100-80gb", (81, 99)),  # "Single A100: ~90 seconds"
        ("cogvideox-5b", "a100-80gb", (162, 198)),  # "Single A100: ~180 seconds"
        ("cogvideox-5b", "h100-sxm", (81, 99)),  # "Single H100: ~90 seconds"
        ("hunyuanvideo", "h100-sxm", (1904.08, 1904.08)),  # xDiT, 1 GPU
    ],
)
def test_clip_times_follow_the_published_figures(model: str, gpu: str, seconds: tuple[float, float]) -> None:
    fig = figure_for(model, gpu, None)
    assert fig is not None and (fig.seconds_low, fig.seconds_high) == seconds
    result = cost({"task": "video_generation", "model": model, "outputs": 10, "gpus": [gpu]})
    assert result.cost is not None
    timed = next(o for o in result.cost.options if o.gpu == gpu)
    assert timed.hours_low == pytest.approx(10 * seconds[0] / 3600 / timed.count, rel=0.01)


def test_a_clip_of_another_length_gets_no_published_time() -> None:
    """CogVideoX's figures are for its 49-frame clip: a longer one is not guessed."""
    usual = cost({"task": "video_generation", "model": "cogvideox-5b", "outputs": 10, "gpus": ["a100-80gb"]})
    longer = cost(
        {
            "task": "video_generation",
            "model": "cogvideox-5b",
            "outputs": 10,
            "gpus": ["a100-80gb"],
            "frames": 97,
        }
    )
    assert usual.cost and longer.cost
    assert any(o.seconds_per_output_low for o in usual.cost.options)
    assert not any(o.seconds_per_output_low for o in longer.cost.options)


def test_video_cost_lines_speak_of_clips_and_one_figure_once() -> None:
    from core.language.answer_solve import cost_lines

    result = cost({"task": "video_generation", "model": "hunyuanvideo", "outputs": 10, "gpus": ["h100-sxm"]})
    lines = cost_lines(result, "en")
    assert lines[0] == "⏱ 10 clips:"
    assert "1,900 s a clip" in lines[1] and "–" not in lines[1].split(" s a clip")[0], lines
    ru = cost_lines(result, "ru")
    assert "с на ролик" in ru[1]
