"""Words for the pieces of an answer (`core.language.phrases`): sizes in one unit, settings, parse errors,
which
configurations and savings are worth naming. The answer itself is tested in test_answer.py."""

from __future__ import annotations

import random

import pytest

from core.catalogue.catalog import Catalog
from core.catalogue.models import ModelSpec
from core.contract import Assumption, Mitigation, Task
from core.errors import ParseError
from core.language.phrases import (
    SMALL_BELOW,
    action_text,
    assumption_texts,
    describe_settings,
    format_bytes,
    needs_mitigations,
    render_parse_error,
    verdicts_to_show,
)
from core.language.words import t
from core.layouts.plain import render_answer
from core.parse import parse
from core.sizing.estimate import estimate
from core.units import GiB, MiB


@pytest.mark.parametrize(
    ("n_bytes", "lang", "expected"),
    [
        (int(26.9 * GiB), "en", "26.9 GB"),
        (int(26.9 * GiB), "ru", "26,9 ГБ"),
        (48 * GiB, "en", "48.0 GB"),  # an 'RTX 4090 48 GB' holds 48 × 2³⁰ bytes: it reads 48.0 GB
        (802 * MiB, "en", "802 MB"),
        (802 * MiB, "ru", "802 МБ"),
        (1536 * GiB, "en", "1,536.0 GB"),
    ],
)
def test_a_size_is_one_number_in_one_unit(n_bytes: int, lang: str, expected: str) -> None:
    assert format_bytes(n_bytes, lang).replace("\xa0", " ") == expected


def test_below_1000_mb_a_size_is_in_mb_and_never_four_digits_of_it() -> None:
    assert format_bytes(999 * MiB, "en") == "999 MB"
    assert format_bytes(1003 * MiB, "en") == "1.0 GB"
    assert format_bytes(GiB, "ru") == "1,0 ГБ"


def sizes_that_round() -> list[float]:
    """Byte counts around every rounding edge of `format_bytes` (ties of the shown digit, the MB/GB
    switch, zero, negatives rounding to -0) and a spread of others."""
    rng = random.Random(7)
    ties = [(k + 0.5) / 10 * GiB for k in range(-50, 2000)] + [(k + 0.5) * MiB for k in range(-1000, 1000)]
    near = [v + d for v in ties[::7] for d in (-1, 1)]
    spread = [rng.random() * 10 ** rng.randrange(0, 14) * rng.choice((1, -1)) for _ in range(3000)]
    return [0, 0.0, -0.0, 1, -1, SMALL_BELOW, SMALL_BELOW - 1, -SMALL_BELOW, 2**60, *ties, *near, *spread]


@pytest.mark.parametrize("lang", ["en", "ru"])
def test_a_size_reads_as_fluent_writes_the_exact_number(lang: str) -> None:
    """`format_bytes` rounds before formatting (one translation per size shown): the same text as
    Fluent's NUMBER of the unrounded value, whatever the value."""
    for n_bytes in sizes_that_round():
        exact = t("bytes-small", lang, mb=n_bytes / MiB) if abs(n_bytes) < SMALL_BELOW else None
        exact = exact or t("bytes", lang, gb=n_bytes / GiB)
        assert format_bytes(n_bytes, lang) == exact, n_bytes


def test_settings_of_inference_name_context_and_users() -> None:
    fields = {"task": Task.INFERENCE, "precision": "int4", "context_length": 32768, "concurrency": 4}
    assert describe_settings(fields, "en") == "inference, int4, context 32,768 tokens, 4 users"
    assert describe_settings(fields, "ru").replace("\xa0", " ") == (
        "инференс, int4, контекст 32 768 токенов, 4 пользователя"
    )
    assert "context 8,192 tokens, 1 user" in describe_settings(
        fields | {"context_length": 8192, "concurrency": 1}, "en"
    )
    assert "контекст 8 192 токена, 1 пользователь" in describe_settings(
        fields | {"context_length": 8192, "concurrency": 1}, "ru"
    ).replace("\xa0", " ")
    assert "5 пользователей" in describe_settings(fields | {"concurrency": 5}, "ru")


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
    assert "rank" not in describe_settings(fields | {"method": "full"}, "en")


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
    assert text and "{" not in text and "None" not in text
    assert "parse-error" not in text and "field-" not in text
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


# --- which configurations, which savings -----------------------------------------------------------


def test_when_nothing_fits_anywhere_the_closest_configurations_are_named() -> None:
    result = estimate(
        {
            "task": "inference",
            "model": "deepseek-r1",
            "precision": "fp32",
            "context_length": 131072,
            "concurrency": 64,
        }
    )
    assert result.recommendation is None and all(v.verdict == "does_not_fit" for v in result.verdicts)
    shown = verdicts_to_show(result)
    biggest_card = max((v for v in result.verdicts if v.count == 1), key=lambda v: v.usable_bytes)
    closest = max(result.verdicts, key=lambda v: v.headroom)
    assert shown[0] == biggest_card and closest in shown


def test_the_recommendation_comes_first_then_where_the_line_runs() -> None:
    result = estimate({"task": "inference", "model": "llama-3.1-8b", "precision": "int4", "concurrency": 4})
    shown = verdicts_to_show(result)
    rec = result.recommendation
    assert rec is not None and (shown[0].gpu, shown[0].count) == (rec.gpu, rec.count)
    too_small = [v for v in shown if v.verdict == "does_not_fit"]
    assert len(too_small) <= 1, "only the biggest card that is too small"
    assert len(shown) <= 5


def test_an_offer_of_more_cards_than_needed_is_shown_with_its_own_headroom() -> None:
    """Verdicts stop at the first card count that fits; an offer of 8 cards is sized from the card."""
    base = estimate({"task": "inference", "model": "llama-3.1-8b", "precision": "int4"})
    fastest = base.alternatives[0]
    eight = fastest.model_copy(update={"count": 8, "bytes_per_gpu": GiB})
    result = base.model_copy(update={"alternatives": [eight]})
    shown = verdicts_to_show(result)
    assert (shown[1].gpu, shown[1].count) == (fastest.gpu, 8)
    single = next(v for v in base.verdicts if v.gpu == fastest.gpu)
    assert shown[1].usable_bytes == single.usable_bytes
    assert shown[1].headroom_bytes == single.usable_bytes - GiB


def test_mitigations_are_shown_only_when_the_request_does_not_fit_comfortably() -> None:
    small = estimate({"task": "inference", "model": "llama-3.1-8b", "context_length": 4096})
    assert small.recommendation is not None and small.recommendation.verdict == "fits"
    assert small.recommendation.count == 1 and small.mitigations
    assert not needs_mitigations(small)
    head = render_answer(small, "en").split("Does it fit (")[0]
    assert "If it does not fit" not in head, "the list is a detail when one rentable card holds it"

    large = estimate({"task": "inference", "model": "llama-3.1-70b", "precision": "bf16"})
    assert large.recommendation is not None and large.recommendation.count > 1
    assert needs_mitigations(large)
    assert "If it does not fit" in render_answer(large, "en").split("Does it fit (")[0]


def test_an_action_reads_in_words_even_without_a_translation() -> None:
    shorten = Mitigation(
        action="shorten_context", saves_bytes=1, total_bytes=1, fits=True, params={"context_length": 16384}
    )
    assert action_text(shorten, "en") == "shorten the context to 16,384 tokens"
    unknown = Mitigation(
        action="teleport_weights", saves_bytes=1, total_bytes=1, fits=False, params={"how": "magic"}
    )
    assert action_text(unknown, "ru") == "teleport weights (how=magic)"


def test_assumptions_are_translated_and_listed_once() -> None:
    known = Assumption(
        code="typical_architecture",
        text="only the size is known",
        params={"size": "70B", "reference": "Llama 3.1 70B", "layers": 80},
    )
    new = Assumption(code="brand_new_code", text="Something the translations do not know yet.")
    texts = assumption_texts([known, new, known], "en")
    assert len(texts) == 2
    assert "Llama 3.1 70B (80 layers)" in texts[0] and texts[0] != known.text
    assert texts[1] == new.text


@pytest.mark.parametrize(("users", "engine"), [(1, "Transformers"), (8, "vLLM")])
def test_the_answer_says_which_engine_it_assumed(users: int, engine: str) -> None:
    from core.language.answer import build_answer
    from core.sizing.estimate import estimate

    result = estimate({"task": "inference", "model": "llama-3.1-8b", "concurrency": users})
    assert engine in build_answer(result, "en").settings


@pytest.mark.parametrize(
    ("tokens", "said", "cut_to"),
    [
        (1, "1 токен", "до 1 токена"),
        (21, "21 токен", "до 21 токена"),
        (131072, "131 072 токена", "до 131 072 токенов"),
    ],
)
def test_russian_assumptions_and_actions_agree_with_their_numbers(
    tokens: int, said: str, cut_to: str
) -> None:
    from core.language.words import t

    assert said in t("assumption-default_context", "ru", context_length=tokens).replace("\xa0", " ")
    assert cut_to in t("action-shorten_context", "ru", context_length=tokens).replace("\xa0", " ")
    assert "(32 слоя)" in t("assumption-typical_architecture", "ru", size="7B", reference="X", layers=32)


def test_what_was_understood_names_the_cards_given() -> None:
    """'Пока понял: инференс, 2× RTX 4090 48 GB' — not '2 карты': the card the user named (and by
    which memory) is part of what was read."""
    with pytest.raises(ParseError) as caught:
        parse("мне нужно запустить лламу 70б на 2х 4090 по 48, влезет?")
    said = render_parse_error(caught.value, "ru")
    assert "2× RTX 4090 48 GB" in said and "2 карты" not in said
