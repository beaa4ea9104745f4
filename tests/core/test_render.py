"""The human answer: every part of a Result shows up, in both languages, with no Fluent leftovers."""

from __future__ import annotations

import re

import pytest

from core.catalog import Catalog
from core.contract import (
    Assumption,
    HostAdvice,
    Mitigation,
    Precision,
    Range,
    Recommendation,
    Request,
    ResolvedModel,
    Result,
    Task,
    Throughput,
    Verdict,
)
from core.errors import ParseError
from core.render import describe_settings, format_bytes, render_answer, render_parse_error
from core.specs import ModelSpec

GB = 10**9


def make_result(**changes: object) -> Result:
    """Llama 3 70B in int4 with 32k context for 4 users: 44 GB, fits a 48 GB card, not a 24 GB one."""
    request = Request(
        task=Task.INFERENCE,
        model="llama-3-70b",
        precision=Precision.INT4,
        context_length=32768,
        concurrency=4,
    )
    result = Result(
        request=request,
        model=ResolvedModel(
            id="llama-3-70b", name="Llama 3 70B", kind="llm", params_b=70.6, source="catalogue"
        ),
        total_bytes=44 * GB,
        breakdown={
            "weights": 35 * GB,
            "kv_cache": 6 * GB,
            "activations": 2 * GB,
            "overhead": 1 * GB,
        },
        range=Range(low_bytes=41 * GB, high_bytes=48 * GB),
        verdicts=[
            Verdict(
                gpu="rtx4090",
                gpu_name="RTX 4090",
                count=1,
                bytes_per_gpu=44 * GB,
                usable_bytes=25 * GB,
                headroom=-0.76,
                headroom_bytes=-19 * GB,
                verdict="does_not_fit",
            ),
            Verdict(
                gpu="rtx4090-48gb",
                gpu_name="RTX 4090 48 GB",
                count=1,
                bytes_per_gpu=44 * GB,
                usable_bytes=50 * GB,
                headroom=0.12,
                headroom_bytes=6 * GB,
                verdict="tight",
            ),
            Verdict(
                gpu="h100-sxm",
                gpu_name="H100 SXM",
                count=1,
                bytes_per_gpu=44 * GB,
                usable_bytes=85 * GB,
                headroom=0.48,
                headroom_bytes=41 * GB,
                verdict="fits",
            ),
            Verdict(
                gpu="a100-80gb",
                gpu_name="A100 80 GB",
                count=1,
                bytes_per_gpu=44 * GB,
                usable_bytes=85 * GB,
                headroom=0.48,
                headroom_bytes=41 * GB,
                verdict="fits",
            ),
        ],
        recommendation=Recommendation(
            gpu="rtx4090-48gb",
            gpu_name="RTX 4090 48 GB",
            count=1,
            offer_id="rtx4090-48-x1",
            url="https://example.com/4090",
            price_per_hour=149.0,
            currency="RUB",
            bytes_per_gpu=44 * GB,
            verdict="tight",
        ),
        alternatives=[
            Recommendation(
                gpu="h100-sxm",
                gpu_name="H100 SXM",
                count=1,
                offer_id="h100-x1",
                url="https://example.com/h100",
                price_per_hour=None,
                currency=None,
                bytes_per_gpu=44 * GB,
                verdict="fits",
                reason="fastest",
            )
        ],
        mitigations=[
            Mitigation(
                action="shorten_context",
                saves_bytes=3 * GB,
                total_bytes=41 * GB,
                fits=True,
                fits_on="1x h100-sxm",
                fits_gpu="h100-sxm",
                fits_gpu_name="H100 SXM",
                fits_count=1,
                params={"context_length": 16384},
            ),
            Mitigation(
                action="teleport_weights",
                saves_bytes=500 * 10**6,
                total_bytes=43_500 * 10**6,
                fits=False,
                params={"how": "magic"},
            ),
        ],
        throughput=[
            Throughput(gpu="rtx4090-48gb", count=1, tokens_per_s=21.5, aggregate_tokens_per_s=86.0),
            Throughput(gpu="h100-sxm", count=1, tokens_per_s=60.2, aggregate_tokens_per_s=240.8),
        ],
        host=HostAdvice(ram_min_bytes=44 * GB, ram_recommended_bytes=88 * GB, disk_bytes=40 * GB),
        assumptions=[
            Assumption(
                code="typical_architecture",
                text="only the size (70B) is known",
                params={"size": "70B", "reference": "Llama 3.1 70B", "layers": 80},
            ),
            Assumption(code="brand_new_code", text="Something the translations do not know yet."),
        ],
    )
    return result.model_copy(update=changes)


@pytest.mark.parametrize("lang", ["ru", "en"])
def test_answer_shows_every_part_without_placeholders(lang: str) -> None:
    text = render_answer(make_result(), lang)
    assert "{" not in text and "}" not in text
    assert not re.search(r"\b(answer|setting|component|verdict|action|assumption|price)-[\w-]+", text)
    for expected in (
        "Llama 3 70B",
        "https://example.com/4090",
        "https://example.com/h100",
        "149",
        "RUB",
        "RTX 4090 48 GB",
        "H100 SXM",
        "RTX 4090",
        "teleport weights (how=magic)",
        "Something the translations do not know yet.",
        "Llama 3.1 70B",
    ):
        assert expected in text, expected
    assert len(text) < 4096


def test_answer_in_english_reads_as_expected() -> None:
    text = render_answer(make_result(), "en")
    assert text.splitlines()[0] == "Llama 3 70B: inference, int4, context 32,768 tokens, 4 users"
    assert "Needs 44.0 GB (41.0 GiB) per card." in text
    assert "KV cache" in text and "CUDA context and allocator reserve" in text
    recommended = (
        "Recommended: 1 × RTX 4090 48 GB: fits, but tight, headroom 12%: 6.0 GB (5.6 GiB); 149 RUB/hour"
    )
    assert recommended in text
    assert "Also (fastest): 1 × H100 SXM: fits" in text and "price on request" in text
    assert "1 × RTX 4090: does not fit, 19.0 GB (17.7 GiB) short" in text
    assert "about 22 tokens/s per user, 86 tokens/s in total" in text
    assert (
        "shorten the context to 16,384 tokens: saves 3.0 GB (2.8 GiB), "
        "41.0 GB (38.2 GiB) in all, then it fits on 1 × H100 SXM" in text
    )
    assert "still does not fit on one card" in text
    assert "RAM at least 44.0 GB (41.0 GiB), better 88.0 GB (82.0 GiB); NVMe disk" in text
    assert "sized with the architecture of Llama 3.1 70B (80 layers)" in text


def test_answer_in_russian_uses_russian_words_and_decimal_comma() -> None:
    text = render_answer(make_result(), "ru")
    assert text.splitlines()[0] == "Llama 3 70B: инференс, int4, контекст 32\xa0768 токенов, 4 пользователя"
    assert "Нужно 44,0 ГБ (41,0 ГиБ) на карту." in text
    assert "KV-кэш" in text and "влезает впритык" in text and "не влезает" in text
    assert "цена по запросу" in text and "149 RUB/час" in text
    assert "Допущения:" in text


def test_the_other_cards_show_where_the_line_runs() -> None:
    text = render_answer(make_result(), "en")
    others = text.split("Other cards:")[1].split("\n\n")[0]
    assert "RTX 4090: does not fit" in others  # the biggest card that is too small
    assert "A100 80 GB: fits" in others  # a card that fits, not already recommended
    assert "H100 SXM" not in others  # shown above as the alternative


def test_nothing_fits_and_no_speed_are_said_plainly() -> None:
    result = make_result(recommendation=None, alternatives=[], throughput=[], mitigations=[], assumptions=[])
    text = render_answer(result, "en")
    assert "No offered configuration fits as requested." in text
    assert "tokens/s" not in text and "If it does not fit" not in text and "Assumptions" not in text


def test_parser_notes_are_listed_with_the_assumptions() -> None:
    note = Assumption(code="parse_gguf_default", text="GGUF without a type: assumed Q4_K_M.")
    assert "взят Q4_K_M" in render_answer(make_result(), "ru", notes=[note])


def test_unknown_language_falls_back_to_english() -> None:
    assert render_answer(make_result(), "de") == render_answer(make_result(), "en")


@pytest.mark.parametrize(
    ("n_bytes", "lang", "expected"),
    [
        (45_300_000_000, "en", "45.3 GB (42.2 GiB)"),
        (45_300_000_000, "ru", "45,3 ГБ (42,2 ГиБ)"),
        (512 * 10**6, "en", "512 MB (488 MiB)"),
    ],
)
def test_bytes_show_decimal_and_binary_units(n_bytes: int, lang: str, expected: str) -> None:
    assert format_bytes(n_bytes, lang) == expected


def test_settings_of_training_name_method_and_batch() -> None:
    fields = {
        "task": Task.TRAINING,
        "method": "lora",
        "lora_rank": 64,
        "batch_size": 4,
        "seq_len": 2048,
        "gradient_checkpointing": True,
        "num_gpus": 1,
    }
    assert describe_settings(fields, "en") == (
        "training, LoRA, rank 64, batch 4, sequences of 2,048 tokens, gradient checkpointing"
    )
    accumulating = fields | {"gradient_accumulation_steps": 8}
    assert "gradients accumulated over 8 micro-batches" in describe_settings(accumulating, "en")
    assert "накопление градиентов за 8 микробатчей" in describe_settings(accumulating, "ru")
    assert "accumulated" not in describe_settings(fields | {"gradient_accumulation_steps": 1}, "en")


@pytest.mark.parametrize("lang", ["ru", "en"])
@pytest.mark.parametrize(
    "err",
    [
        ParseError("empty", "the text is empty", field="text"),
        ParseError(
            "missing_model",
            "no model",
            field="model",
            partial={"task": Task.INFERENCE, "context_length": 32768},
        ),
        ParseError("ambiguous_model", "several", field="model", candidates=["llama-3-70b", "llama-3.1-70b"]),
        ParseError("unknown_model", "unknown", field="model", candidates=["llama-3-8b"], value="blorp"),
        ParseError("too_large", "too large", field="context_length", partial={"model": "70B"}),
        ParseError("invalid", "invalid", field="model"),
        ParseError("brand_new_code", "?", field="frames"),
    ],
)
def test_parse_errors_are_friendly(err: ParseError, lang: str) -> None:
    text = render_parse_error(err, lang, catalog=Catalog([], [], []))  # no names known: ids are shown
    assert text and "{" not in text and "parse-error" not in text and "field-" not in text
    for candidate in err.candidates:
        assert candidate in text
    if err.value:
        assert err.value in text
    if err.code in ("empty", "missing_model", "unknown_model"):
        assert "llama 3 70b int4 32k" in text  # an example to copy


def test_candidates_are_named_as_the_catalogue_names_them() -> None:
    llama = ModelSpec(
        id="llama-3-8b",
        name="Llama 3 8B",
        family="llama",
        kind="llm",
        source="test",
        params_b=8.0,
        layers=32,
        hidden_size=4096,
        attention_heads=32,
        vocab_size=128256,
    )
    err = ParseError("ambiguous_model", "several", field="model", candidates=["llama-3-8b", "other-7b"])
    assert (
        render_parse_error(err, "en", Catalog([], [llama], []))
        == "Several models match. Which one: Llama 3 8B, other-7b?"
    )


def test_parse_error_names_the_field_and_what_was_understood() -> None:
    err = ParseError("too_large", "too large", field="context_length", partial={"model": "70B"})
    assert render_parse_error(err, "en") == "Too large: the context length.\nUnderstood so far: 70B."
    missing = ParseError(
        "missing_model", "no model", partial={"task": Task.INFERENCE, "context_length": 32768}
    )
    assert "Пока понял: инференс, контекст 32\xa0768 токенов." in render_parse_error(missing, "ru")


@pytest.mark.parametrize("lang", ["ru", "en"])
@pytest.mark.parametrize(
    "text",
    ["llama 3.1 8b int4 32k контекст 4 пользователя", "дообучение qwen 2.5 7b", "sdxl 1024x1024 4 картинки"],
)
def test_real_estimates_render_cleanly(text: str, lang: str) -> None:
    from core.estimate import estimate
    from core.parse import understand

    understood = understand(text)
    result = estimate(understood.request)
    answer = render_answer(result, lang, notes=understood.notes)
    assert answer.startswith(result.model.name)
    assert "{" not in answer and "}" not in answer and "\u2068" not in answer
    assert len(answer) < 4096


def test_mitigations_are_shown_only_when_the_request_does_not_fit_comfortably() -> None:
    from core.estimate import estimate
    from core.render import needs_mitigations

    small = estimate({"task": "inference", "model": "llama-3.1-8b", "context_length": 4096})
    assert small.recommendation is not None and small.recommendation.verdict == "fits"
    assert small.recommendation.count == 1 and small.mitigations
    assert not needs_mitigations(small)
    assert "If it does not fit" not in render_answer(small, "en")

    large = estimate({"task": "inference", "model": "llama-3.1-70b", "precision": "bf16"})
    assert large.recommendation is not None and large.recommendation.count > 1
    assert needs_mitigations(large)
    assert "If it does not fit" in render_answer(large, "en")


def test_an_offer_of_more_cards_than_needed_is_shown_with_its_own_headroom() -> None:
    """Verdicts stop at the first card count that fits; an offer of 8 cards is sized from the card."""
    from core.render import verdicts_to_show

    base = make_result()
    eight = base.alternatives[0].model_copy(update={"count": 8, "bytes_per_gpu": 6 * GB})
    result = base.model_copy(update={"alternatives": [eight]})
    shown = verdicts_to_show(result)
    assert [(v.gpu, v.count) for v in shown[:2]] == [("rtx4090-48gb", 1), ("h100-sxm", 8)]
    assert shown[1].usable_bytes == 85 * GB and shown[1].headroom_bytes == 79 * GB
    assert "Also (fastest): 8 × H100 SXM: fits, headroom 93%" in render_answer(result, "en")
