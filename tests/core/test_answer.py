"""The one human answer (`core.language.answer.build_answer`) and its plain-text layout (`core.layouts.plain`,
the CLI's
`ask`): the decision in the first two lines, each size once in one unit, Russian plural forms, the
offers, the own card, the change against the previous answer, cards side by side."""

from __future__ import annotations

import re

import pytest

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
from core.inverse.comparison import Compared, compare, comparison_answer
from core.language.answer import build_answer
from core.layouts.plain import render_answer
from core.parse import understand
from core.sizing.estimate import estimate
from core.units import GiB, MiB

QUESTION = "llama 3.1 8b int4 32k 4 пользователя"


def read(text: str) -> str:
    """What a reader sees: Fluent groups digits with a no-break space."""
    return text.replace("\xa0", " ").replace("\u202f", " ")


def leftovers(text: str) -> list[str]:
    """Pieces of an unformatted Fluent message: placeholders, message ids, unset values."""
    found = re.findall(r"\{\$?|\}|\bNone\b|\u2068|\u2069", text)
    found += re.findall(
        r"\b(?:lead|answer|change|compare|price|currency|setting|component|verdict|"
        r"action|assumption|mitigation|speed|bytes)-[a-z_]+(?:-[a-z_]+)*\b",
        text,
    )
    return found


def asked(question: str = QUESTION) -> tuple[Result, list[Assumption]]:
    understood = understand(question)
    return estimate(understood.request), list(understood.notes)


def make_result(**changes: object) -> Result:
    """Llama 3 70B in int4, 32k context, 4 users: 44 GB, tight on a 48 GB card, not on a 24 GB one."""
    request = Request(
        task=Task.INFERENCE,
        model="llama-3-70b",
        precision=Precision.INT4,
        context_length=32768,
        concurrency=4,
    )

    def verdict(gpu: str, name: str, usable: float, kind: str) -> Verdict:
        return Verdict(
            gpu=gpu,
            gpu_name=name,
            count=1,
            bytes_per_gpu=44 * GiB,
            usable_bytes=int(usable * GiB),
            headroom=(usable - 44) / usable,
            headroom_bytes=int((usable - 44) * GiB),
            verdict=kind,  # type: ignore[arg-type]
        )

    result = Result(
        request=request,
        model=ResolvedModel(
            id="llama-3-70b", name="Llama 3 70B", kind="llm", params_b=70.6, source="catalogue"
        ),
        total_bytes=44 * GiB,
        breakdown={
            "weights": 35 * GiB,
            "kv_cache": 6 * GiB,
            "activations": 512 * MiB,
            "overhead": 5 * GiB // 2,
        },
        range=Range(low_bytes=40 * GiB, high_bytes=48 * GiB),
        verdicts=[
            verdict("rtx4090", "NVIDIA GeForce RTX 4090 24 GB", 24, "does_not_fit"),
            verdict("rtx4090-48gb", "NVIDIA GeForce RTX 4090 48 GB (modded)", 48, "tight"),
            verdict("h100-sxm", "NVIDIA H100 SXM 80 GB", 79.6, "fits"),
            verdict("a100-80gb", "NVIDIA A100 80 GB", 79.6, "fits"),
        ],
        recommendation=Recommendation(
            gpu="rtx4090-48gb",
            gpu_name="NVIDIA GeForce RTX 4090 48 GB (modded)",
            count=1,
            offer_id="rtx4090-48-x1",
            url="https://example.com/4090",
            price_per_hour=149.0,
            currency="RUB",
            bytes_per_gpu=44 * GiB,
            verdict="tight",
        ),
        alternatives=[
            Recommendation(
                gpu="h100-sxm",
                gpu_name="NVIDIA H100 SXM 80 GB",
                count=1,
                offer_id="h100-x1",
                url="https://example.com/h100",
                price_per_hour=None,
                currency=None,
                bytes_per_gpu=44 * GiB,
                verdict="fits",
                reason="fastest",
            )
        ],
        mitigations=[
            Mitigation(
                action="shorten_context",
                saves_bytes=3 * GiB,
                total_bytes=41 * GiB,
                fits=True,
                fits_on="1x h100-sxm",
                fits_gpu="h100-sxm",
                fits_gpu_name="NVIDIA H100 SXM 80 GB",
                fits_count=1,
                params={"context_length": 16384},
            ),
            Mitigation(
                action="teleport_weights",
                saves_bytes=500 * MiB,
                total_bytes=43 * GiB,
                fits=False,
                params={"how": "magic"},
            ),
        ],
        throughput=[
            Throughput(gpu="rtx4090-48gb", count=1, tokens_per_s=21.4, aggregate_tokens_per_s=85.6),
            Throughput(gpu="h100-sxm", count=1, tokens_per_s=60.2, aggregate_tokens_per_s=240.8),
        ],
        host=HostAdvice(ram_min_bytes=44 * GiB, ram_recommended_bytes=88 * GiB, disk_bytes=40 * GiB),
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


# --- every part, both languages ------------------------------------------------------------------


@pytest.mark.parametrize("lang", ["ru", "en"])
def test_every_part_of_a_result_shows_up_without_fluent_leftovers(lang: str) -> None:
    text = render_answer(make_result(), lang)
    assert leftovers(text) == []
    for expected in (
        "Llama 3 70B",
        "1× RTX 4090 48 GB",  # the recommendation, named as people call the card
        "1× H100 SXM 80 GB",  # the fastest alternative
        "1× RTX 4090 24 GB:",  # where the line runs: the biggest card that is too small
        "1× A100 80 GB",
        "149 ₽",
        "https://example.com/4090",
        "https://example.com/h100",
        "teleport weights (how=magic)",  # an action without a translation still reads
        "Something the translations do not know yet.",  # an assumption without one: the core's text
        "Llama 3.1 70B",  # the reference architecture, from the assumption's params
        "512",  # the smallest part, in MB
    ):
        assert expected in text, expected
    assert "NVIDIA" not in text and "(modded)" not in text
    assert len(text) < 4096


def test_the_answer_in_english_reads_as_expected() -> None:
    lines = render_answer(make_result(), "en").splitlines()
    assert lines[0] == "⚠️ Fits tightly on 1× RTX 4090 48 GB · 149 ₽/h · ~21 tok/s"
    assert lines[1] == "Needs 44.0 GB per card of 48.0 GB (likely 40.0 GB–48.0 GB)"
    assert lines[3] == "Llama 3 70B: inference, int4, context 32,768 tokens, 4 users"
    text = "\n".join(lines)
    assert "  weights: 35.0 GB\n  KV cache: 6.0 GB\n  CUDA context and allocator reserve: 2.5 GB\n" in text
    assert "  activations: 512 MB" in text
    assert "Cheapest: 1× RTX 4090 48 GB, 149 ₽/h · fastest: 1× H100 SXM 80 GB, price on request" in text
    assert "❌ 1× RTX 4090 24 GB: does not fit, 44.0 GB of 24.0 GB" in text
    assert "Speed on 1× RTX 4090 48 GB: ~21 tokens/s per user, ~86 tokens/s in total" in text
    assert (
        "✅ shorten the context to 16,384 tokens: −3.0 GB → 41.0 GB, then it fits on 1× H100 SXM 80 GB"
        in text
    )
    assert "❌ teleport weights (how=magic): −500 MB → 43.0 GB, still does not fit on one card" in text
    assert "Server: RAM at least 44.0 GB (better 88.0 GB), NVMe disk of 40.0 GB for the weights." in text
    assert "sized with the architecture of Llama 3.1 70B (80 layers)" in text


def test_the_answer_in_russian_uses_russian_words_and_decimal_comma() -> None:
    lines = read(render_answer(make_result(), "ru")).splitlines()
    assert lines[0] == "⚠️ Влезет впритык на 1× RTX 4090 48 GB · 149 ₽/ч · ~21 ток/с"
    assert lines[1] == "Нужно 44,0 ГБ на карту из 48,0 ГБ (вероятно, 40,0 ГБ–48,0 ГБ)"
    assert lines[3] == "Llama 3 70B: инференс, int4, контекст 32 768 токенов, 4 пользователя"
    text = "\n".join(lines)
    assert "  KV-кэш: 6,0 ГБ" in text and "  активации: 512 МБ" in text
    assert (
        "Дешевле всего: 1× RTX 4090 48 GB, 149 ₽/ч · быстрее всего: 1× H100 SXM 80 GB, цена по запросу"
        in text
    )
    assert "❌ 1× RTX 4090 24 GB: не влезает, 44,0 ГБ из 24,0 ГБ" in text
    assert "Скорость на 1× RTX 4090 48 GB: ~21 токен/с на пользователя, ~86 всего" in text
    assert "Допущения:" in text


def test_the_details_show_where_the_line_runs() -> None:
    answer = build_answer(make_result(), "en")
    assert answer.verdicts == (
        "⚠️ 1× RTX 4090 48 GB: fits, but tight, 44.0 GB of 48.0 GB",
        "✅ 1× H100 SXM 80 GB: fits, 44.0 GB of 79.6 GB",
        "❌ 1× RTX 4090 24 GB: does not fit, 44.0 GB of 24.0 GB",
        "✅ 1× A100 80 GB: fits, 44.0 GB of 79.6 GB",
    )


def test_nothing_fits_and_no_speed_are_said_plainly() -> None:
    result = make_result(recommendation=None, alternatives=[], throughput=[], mitigations=[], assumptions=[])
    text = render_answer(result, "en")
    lines = text.splitlines()
    assert lines[0] == "❌ Needs 44.0 GB per card: none of our configurations holds it as asked"
    assert lines[1] == "How to cut the memory is below."
    assert (
        "tok/s" not in text
        and "Speed" not in text
        and "If it does not fit" not in text
        and "Assumptions" not in text
    )
    assert "Cheapest" not in text and "₽" not in text
    assert build_answer(result, "en").offer is None


def test_parser_notes_are_listed_with_the_assumptions() -> None:
    note = Assumption(code="parse_gguf_default", text="GGUF without a type: assumed Q4_K_M.")
    text = render_answer(make_result(), "ru", notes=[note])
    assert "взят Q4_K_M" in text.split("Допущения:")[1]


def test_unknown_language_falls_back_to_english() -> None:
    assert render_answer(make_result(), "de") == render_answer(make_result(), "en")


# --- the decision first --------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("lang", "lead", "need"),
    [
        # 4 users: a vLLM server, compared with vLLM's 90% of the card (43.2 of 48 GB)
        ("ru", "✅ Влезет на 1× RTX 4090 48 GB · от 149 ₽/ч · ~32 ток/с", "Нужно 24,0 ГБ на карту из 43,2"),
        ("en", "✅ Fits on 1× RTX 4090 48 GB · from 149 ₽/h · ~32 tok/s", "Needs 24.0 GB per card of 43.2"),
    ],
)
def test_the_first_two_lines_carry_verdict_card_price_and_speed(lang: str, lead: str, need: str) -> None:
    result, notes = asked()
    first, second = render_answer(result, lang, notes=notes).splitlines()[:2]
    assert first == lead
    assert second.startswith(need)
    answer = build_answer(result, lang, notes)
    assert (answer.lead, answer.need) == (first, second)


@pytest.mark.parametrize("lang", ["ru", "en"])
@pytest.mark.parametrize(
    "question",
    [
        QUESTION,
        "llama 3.1 70b bf16 32k 8 users",
        "deepseek r1 bf16 128k 64 users",
        "train 70b from scratch batch 32 seq 16k",
        "sdxl 1024x1024 4 images",
        "дообучение qwen 2.5 7b",
    ],
)
def test_each_size_is_shown_once_in_one_unit(question: str, lang: str) -> None:
    result, notes = asked(question)
    text = render_answer(result, lang, notes=notes)
    assert leftovers(text) == []
    assert "ГиБ" not in text and "GiB" not in text and "МиБ" not in text and "MiB" not in text
    unit = r"(?:ГБ|МБ)" if lang == "ru" else r"(?:GB|MB)"
    number = r"\d[\d\xa0 ,.]*"
    # no size followed by the same size in another unit: '26.9 GB (25.0 GiB)'
    assert not re.search(rf"{number} {unit} \({number}", text), text
    pattern = r"[\d\xa0]+,\d" if lang == "ru" else r"[\d,]+\.\d"
    for size in re.findall(r"(\d[\d\xa0,.]*) (?:ГБ|GB)\b", text):
        if not size.isdigit():  # 'RTX 4090 48 GB' is a card's name; a size has one decimal
            assert re.fullmatch(pattern, size), size


# --- Russian plural forms ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("question", "expected"),
    [
        (QUESTION, ["4 пользователя", "контекст 32 768 токенов", "обслуживать 2 пользователей"]),
        ("llama 3.1 8b int4 8k 1 пользователь", ["1 пользователь", "контекст 8 192 токена"]),
        ("llama 3.1 8b int4 8k 5 пользователей", ["5 пользователей", "контекст 8 192 токена"]),
        ("llama 3.1 8b int4 8k 1 пользователь vllm", ["~121 токен/с на пользователя"]),
        ("sdxl 1024x1024 4 картинки", ["4 изображения"]),
    ],
)
def test_russian_counts_take_their_plural_forms(question: str, expected: list[str]) -> None:
    result, notes = asked(question)
    text = read(render_answer(result, "ru", notes=notes))
    for words in expected:
        assert words in text, words


@pytest.mark.parametrize(
    ("per_user", "expected"),
    [(21.4, "~21 токен/с"), (22.0, "~22 токена/с"), (25.0, "~25 токенов/с"), (11.0, "~11 токенов/с")],
)
def test_speed_takes_the_plural_form_of_its_number(per_user: float, expected: str) -> None:
    speed = Throughput(gpu="rtx4090-48gb", count=1, tokens_per_s=per_user, aggregate_tokens_per_s=100.0)
    answer = build_answer(make_result(throughput=[speed]), "ru")
    assert answer.speed is not None and answer.speed.startswith(f"Скорость на 1× RTX 4090 48 GB: {expected}")


@pytest.mark.parametrize(("cards", "expected"), [(1, "1 карта"), (2, "2 карты"), (5, "5 карт")])
def test_a_mitigation_that_still_does_not_fit_counts_the_cards(cards: int, expected: str) -> None:
    base = make_result()
    result = base.model_copy(update={"request": base.request.model_copy(update={"num_gpus": cards})})
    text = render_answer(result, "ru")
    assert f"всё равно не влезает ({expected})" in text


@pytest.mark.parametrize(
    "users",
    [
        1,
        4,
        21,  # CLDR's Russian 'one' holds 21, 31, …: the total must not hang on that category
    ],
)
def test_the_speed_in_total_is_named_for_several_users(users: int) -> None:
    base = make_result()
    request = base.request.model_copy(update={"concurrency": users})
    answer = build_answer(base.model_copy(update={"request": request}), "ru")
    assert answer.speed is not None
    assert ("всего" in answer.speed) == (users > 1), answer.speed


# --- offers -------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("lang", "line"),
    [
        (
            "ru",
            "Дешевле всего: 1× RTX 4090 48 GB, от 149 ₽/ч · быстрее всего: 1× B200 180 GB, цена по запросу",
        ),
        ("en", "Cheapest: 1× RTX 4090 48 GB, from 149 ₽/h · fastest: 1× B200 180 GB, price on request"),
    ],
)
def test_cheapest_and_fastest_are_both_named_when_they_differ(lang: str, line: str) -> None:
    result, notes = asked()
    text = render_answer(result, lang, notes=notes)
    assert line in text.splitlines()
    answer = build_answer(result, lang, notes)
    assert answer.cheapest is not None and answer.fastest is not None
    assert answer.offer == answer.cheapest
    assert [o.url for o in (answer.cheapest, answer.fastest)] == [
        "https://example.com/gpu-rent/rtx4090-48gb-x1",
        "https://example.com/gpu-rent/b200-x1",
    ]
    for url in ("https://example.com/gpu-rent/rtx4090-48gb-x1", "https://example.com/gpu-rent/b200-x1"):
        assert f"  {url}" in text.splitlines()


def test_the_fastest_is_not_repeated_when_it_is_the_cheapest() -> None:
    base = make_result()
    same = base.recommendation.model_copy(update={"reason": "fastest"})  # type: ignore[union-attr]
    text = render_answer(base.model_copy(update={"alternatives": [same]}), "en")
    assert "fastest" not in text
    assert text.count("https://example.com/4090") == 1
    assert "Cheapest: 1× RTX 4090 48 GB, 149 ₽/h" in text


def test_a_configuration_we_do_not_rent_says_so() -> None:
    base = make_result()
    outside = base.recommendation.model_copy(  # type: ignore[union-attr]
        update={"in_offers": False, "offer_id": None, "url": None, "price_per_hour": None, "currency": None}
    )
    text = render_answer(base.model_copy(update={"recommendation": outside, "alternatives": []}), "en")
    assert text.splitlines()[0].startswith("⚠️ Fits tightly on 1× RTX 4090 48 GB, which we do not rent")
    assert "Recommended: 1× RTX 4090 48 GB, not in our offers, contact us" in text
    assert "149" not in text


# --- the user's own card --------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("lang", "first", "second", "title"),
    [
        (
            "ru",
            "❌ На 1× RTX 3090 24 GB не влезет: нужно 29,3 ГБ на карту из 24,0 ГБ",
            "🚀 В аренду: 1× RTX 4090 48 GB · от 149 ₽/ч · ~17 ток/с",
            "Как уместить на 1× RTX 3090 24 GB (память на карту):",
        ),
        (
            "en",
            "❌ Does not fit on 1× RTX 3090 24 GB: needs 29.3 GB per card of 24.0 GB",
            "🚀 To rent: 1× RTX 4090 48 GB · from 149 ₽/h · ~17 tok/s",
            "To fit on 1× RTX 3090 24 GB (memory per card):",
        ),
    ],
)
def test_the_own_card_answer_says_it_does_not_fit_and_offers_a_card_to_rent(
    lang: str, first: str, second: str, title: str
) -> None:
    result = estimate({"task": "inference", "model": "qwen2.5-14b", "precision": "bf16", "gpus": ["rtx3090"]})
    text = read(render_answer(result, lang))
    lines = text.splitlines()
    assert lines[:2] == [first, second]
    assert title in lines
    answer = build_answer(result, lang)
    assert answer.mitigations_title == title
    assert answer.mitigations, "it does not fit the card asked for: the ways to make it fit are shown"
    fits_own = "тогда влезает на 1× RTX 3090 24 GB" if lang == "ru" else "then it fits on 1× RTX 3090 24 GB"
    assert fits_own in read(answer.mitigations[0])
    # the own card is among the verdicts, with what it lacks
    assert any("1× RTX 3090 24 GB" in v and v.startswith("❌") for v in answer.verdicts)


def test_the_own_card_that_fits_says_so_on_line_one() -> None:
    result = estimate(
        {"task": "inference", "model": "llama-3.1-8b", "precision": "int4", "gpus": ["rtx3090"]}
    )
    lead = build_answer(result, "en").lead
    assert lead.startswith("✅ Fits on 1× RTX 3090 24 GB: ")


# --- against the previous answer -------------------------------------------------------------------


BF16 = {"task": "inference", "model": "llama-3.1-8b", "precision": "bf16", "context_length": 32768}


@pytest.mark.parametrize(
    ("lang", "change"),
    [
        (
            "ru",
            "Было: 33,6 ГБ на карту · 1× RTX 4090 48 GB · от 149 ₽/ч → "
            "стало: 24,0 ГБ на карту · 1× RTX 4090 48 GB · от 149 ₽/ч",
        ),
        (
            "en",
            "Before: 33.6 GB per card · 1× RTX 4090 48 GB · from 149 ₽/h → "
            "now: 24.0 GB per card · 1× RTX 4090 48 GB · from 149 ₽/h",
        ),
    ],
)
def test_the_change_line_says_before_and_after(lang: str, change: str) -> None:
    result, notes = asked()
    previous = estimate(BF16 | {"concurrency": 4})
    text = render_answer(result, lang, notes=notes, previous=previous)
    assert text.splitlines()[2] == change  # right under the decision
    assert build_answer(result, lang, notes, previous).change == change
    assert build_answer(result, lang, notes).change is None
    assert change.split(" ")[0] not in render_answer(result, lang, notes=notes)


def test_the_change_line_when_the_previous_fitted_nowhere() -> None:
    result, _ = asked()
    nowhere = make_result(recommendation=None, alternatives=[])
    change = build_answer(result, "en", previous=nowhere).change
    assert change == (
        "Before: 44.0 GB per card · fits none of our configurations → "
        "now: 24.0 GB per card · 1× RTX 4090 48 GB · from 149 ₽/h"
    )


# --- cards side by side -------------------------------------------------------------------------


def _compare(model: str, **extra: int | str) -> list[Compared]:
    request = Request.model_validate({"task": "inference", "model": model, "precision": "int4"} | extra)
    return compare(request, [("rtx4090-48gb", 1), ("h100-sxm", 1)])


@pytest.mark.parametrize("lang", ["ru", "en"])
def test_a_comparison_shows_a_row_for_each_card(lang: str) -> None:
    # at 32K the KV cache (10 GB) keeps 70B int4 off one 48 GB card
    answer = comparison_answer(_compare("llama-3.1-70b", context_length=32768), lang)
    words = {
        "ru": ("инференс, int4", "не влезает", "влезает", "ток/с"),
        "en": ("inference, int4", "does not fit", "fits", "tok/s"),
    }[lang]
    assert answer.title.startswith("Llama 3.1 70B: " + words[0])
    four, h100 = (read(row) for row in answer.rows)
    assert four.startswith(f"❌ 1× RTX 4090 48 GB: {words[1]}, 60")
    assert h100.startswith(f"✅ 1× H100 SXM 80 GB: {words[2]}, 60") and h100.endswith(words[3])
    assert all(leftovers(row) == [] for row in answer.rows)
    assert answer.verdict is None, "one card fits and its price is on request: nothing to weigh"


def test_a_compared_card_that_does_not_fit_is_not_called_unoffered() -> None:
    four = comparison_answer(_compare("llama-3.1-70b", context_length=32768), "en").rows[0]
    assert "not in our offers" not in four


@pytest.mark.parametrize(
    ("lang", "verdict"),
    [
        ("ru", "Дешевле: 1× RTX 4090 48 GB · Быстрее: 1× H100 SXM 80 GB"),
        ("en", "Cheaper: 1× RTX 4090 48 GB · Faster: 1× H100 SXM 80 GB"),
    ],
)
def test_a_comparison_names_the_cheaper_and_the_faster(lang: str, verdict: str) -> None:
    answer = comparison_answer(_compare("llama-3.1-8b", engine="vllm"), lang)
    assert answer.verdict == verdict
    four, h100 = answer.rows
    assert ("149 ₽/ч" if lang == "ru" else "149 ₽/h") in four
    assert four.startswith("✅ 1× RTX 4090 48 GB") and h100.startswith("✅ 1× H100 SXM 80 GB")


def test_a_comparison_under_eager_generate_names_no_faster_card() -> None:
    """Eager transformers `generate()` is launch-bound (core/advice/speed.py EAGER_LAYER_LAUNCH_S):
    an H100 decodes no faster than a 4090 there, so the verdict does not call one of them faster."""
    answer = comparison_answer(_compare("llama-3.1-8b", engine="transformers"), "en")
    assert answer.verdict == "Cheaper: 1× RTX 4090 48 GB"
