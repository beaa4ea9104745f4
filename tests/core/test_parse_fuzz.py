"""The parser on arbitrary text: a Request or a ParseError, never anything else; numbers round-trip."""

from __future__ import annotations

import contextlib

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from core.catalogue.catalog import Catalog, default_catalog
from core.catalogue.models import ModelKind
from core.contract import Precision, Request
from core.errors import ParseError
from core.parse import (
    Comparison,
    FollowUp,
    Understood,
    comparison,
    comparison_follow_up,
    follow_up,
    parse,
    parse_context,
    parse_count,
    parse_partial,
    parse_resolution,
    parse_size_b,
    understand,
    understand_message,
)

FUZZ = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
EMPTY = Catalog([], [], [])

WORDS = [
    "llama",
    "3.1",
    "70b",
    "8x7b",
    "int4",
    "q4_k_m",
    "gguf",
    "awq",
    "lora",
    "qlora",
    "full",
    "контекст",
    "32k",
    "128к",
    "пользователя",
    "users",
    "batch",
    "bs=8",
    "seq",
    "1024x1024",
    "на",
    "картах",
    "gpu",
    "кадр",
    "картинки",
    "sdxl",
    "flux",
    "обучение",
    "с нуля",
    "дообучение",
    "инференс",
    "10^12",
    "0b",
    "без",
    "offload",
    "tiling",
    "r=",
    "x",
    "k",
    "b",
    "-",
    "/",
    "meta-llama/",
    "h100",
    "🦙",
    "٣",
    "½",
    "Ⅻ",
]
# Text a user might type: known words and numbers (huge ones too) glued in any order, plus noise.
phrases = st.lists(
    st.one_of(
        st.sampled_from(WORDS), st.integers(min_value=0, max_value=10**40).map(str), st.text(max_size=8)
    ),
    max_size=12,
).map(" ".join)
any_text = st.one_of(st.text(max_size=200), phrases)


def _parse_or_error(text: str, catalog: Catalog | None) -> Request | ParseError:
    try:
        return parse(text, catalog)
    except ParseError as e:
        return e


@FUZZ
@given(any_text)
def test_parse_returns_a_request_or_a_parse_error(text: str) -> None:
    outcome = _parse_or_error(text, None)
    assert isinstance(outcome, Request | ParseError)
    if isinstance(outcome, ParseError):
        assert outcome.code in {
            "empty",
            "missing_model",
            "ambiguous_model",
            "unknown_model",
            "chit_chat",
            "off_topic",
            "unsized_model",
            "too_large",
            "invalid",
        }
        assert outcome.field
        assert outcome.code != "ambiguous_model" or len(outcome.candidates) > 1


@FUZZ
@given(any_text)
def test_parse_works_without_a_catalogue(text: str) -> None:
    assert isinstance(_parse_or_error(text, EMPTY), Request | ParseError)


@FUZZ
@given(any_text)
def test_parse_partial_never_raises_and_only_names_request_fields(text: str) -> None:
    fields = parse_partial(text)
    assert set(fields) <= set(Request.model_fields)


@FUZZ
@given(any_text)
def test_small_helpers_never_raise(text: str) -> None:
    context, count = parse_context(text), parse_count(text)
    resolution, size = parse_resolution(text), parse_size_b(text)
    assert context is None or 0 < context <= 10_000_000
    assert count is None or count > 0
    assert resolution is None or min(resolution) >= 64
    assert size is None or size > 0


@FUZZ
@given(st.integers(min_value=1, max_value=9000), st.sampled_from(["k", "K", "к"]))
def test_context_in_thousands_round_trips(n: int, suffix: str) -> None:
    assert parse_context(f"{n}{suffix}") == n * 1024
    assert parse(f"70b контекст {n}{suffix}", EMPTY).context_length == n * 1024


@FUZZ
@given(
    st.integers(min_value=64, max_value=16384),
    st.integers(min_value=64, max_value=16384),
    st.sampled_from(["x", "×", " x ", " на ", "X", " by "]),
)
def test_resolution_round_trips(width: int, height: int, sep: str) -> None:
    assert parse_resolution(f"{width}{sep}{height}") == (width, height)


@FUZZ
@given(
    st.decimals(min_value="0.1", max_value="2000", places=1), st.sampled_from(["b", "B", " млрд", " billion"])
)
def test_size_round_trips(size: object, unit: str) -> None:
    text = f"{size}{unit}"
    assert parse_size_b(text) == float(str(size))
    assert parse(text, EMPTY).model == f"{float(str(size)):g}B"


@FUZZ
@given(st.integers(min_value=1, max_value=100_000), st.sampled_from(["users", "пользователей", "юзеров"]))
def test_users_round_trip(n: int, word: str) -> None:
    assert parse(f"7b {n} {word}", EMPTY).concurrency == n


# --- whole phrases built from the shipped catalogue: every part comes back, in any order ---------

PRECISION_WORDS = {
    "int4": Precision.INT4,
    "4-bit": Precision.INT4,
    "4 бита": Precision.INT4,
    "int8": Precision.INT8,
    "8bit": Precision.INT8,
    "fp16": Precision.FP16,
    "bf16": Precision.BF16,
    "fp8": Precision.FP8,
    "nf4": Precision.NF4,
    "awq": Precision.AWQ_INT4,
    "gptq": Precision.GPTQ_INT4,
    "Q4_K_M": Precision.Q4_K_M,
    "q5_k_m": Precision.Q5_K_M,
    "q8_0": Precision.Q8_0,
}
# Models a context and users apply to: not diffusion, and not speech (Whisper, TTS), which are
# sized in their own precisions and windows (tests/core/test_tts.py, test_vlm_speech.py).
NOT_LANGUAGE = (ModelKind.IMAGE, ModelKind.VIDEO, ModelKind.SPEECH, ModelKind.TTS)
LANGUAGE_MODELS = [m for m in default_catalog().models.values() if m.kind not in NOT_LANGUAGE]
MODEL_NAMES = [(name, m.id) for m in LANGUAGE_MODELS for name in [m.id, m.name, *m.aliases]]


@FUZZ
@given(
    st.sampled_from(MODEL_NAMES),
    st.sampled_from(sorted(PRECISION_WORDS)),
    st.integers(min_value=1, max_value=1024),
    st.sampled_from(["{}k", "контекст {}k", "context {}K", "ctx {}к"]),
    st.integers(min_value=1, max_value=10_000),
    st.sampled_from(["{} users", "{} пользователей", "concurrency {}", "{} одновременных запросов"]),
    st.permutations(range(4)),
)
def test_catalogue_phrases_round_trip(
    model: tuple[str, str], precision: str, k: int, context: str, users: int, user_form: str, order: list[int]
) -> None:
    name, model_id = model
    parts = [name, precision, context.format(k), user_form.format(users)]
    request = parse(" ".join(parts[i] for i in order))
    assert (request.model, request.precision) == (model_id, PRECISION_WORDS[precision])
    assert (request.context_length, request.concurrency) == (k * 1024, users)


# --- any message a user can send (Telegram: up to 4096 characters of any Unicode), after any answer --

LONG = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
TELEGRAM_MAX_CHARS = 4096
# Telegram text is UTF-8: every code point but the surrogates, whose categories hypothesis leaves out
# of st.text by default; blacklisted nothing else (control characters, RTL marks, emoji, CJK).
long_text = st.one_of(
    st.text(min_size=200, max_size=TELEGRAM_MAX_CHARS),
    st.lists(st.one_of(st.sampled_from(WORDS), st.text(max_size=8)), min_size=50, max_size=800)
    .map(" ".join)
    .map(lambda text: text[:TELEGRAM_MAX_CHARS]),
)
PREVIOUS = [
    None,
    parse("llama 3.1 8b int4 32k 4 пользователя"),
    parse("дообучение qwen 2.5 7b lora"),
    parse("sdxl 1024x1024"),
]


def _understood_or_error(text: str, previous: Request | None) -> object:
    try:
        return understand_message(text, previous)
    except ParseError as e:
        return e


@LONG
@given(long_text, st.sampled_from(PREVIOUS))
def test_any_long_message_after_any_answer_is_understood_or_a_parse_error(
    text: str, previous: Request | None
) -> None:
    outcome = _understood_or_error(text, previous)
    assert isinstance(outcome, Comparison | FollowUp | Understood | ParseError)


@FUZZ
@given(any_text, st.sampled_from(PREVIOUS[1:]))
def test_follow_ups_and_comparisons_never_raise_anything_else(text: str, previous: Request) -> None:
    for read_it in (
        lambda: follow_up(text, previous),
        lambda: comparison(text),
        lambda: comparison_follow_up(text, previous),
        lambda: understand(text),
    ):
        with contextlib.suppress(ParseError):
            read_it()
