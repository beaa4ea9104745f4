"""Locale files: the same keys in every language, every concept of the contract named, fallbacks."""

from __future__ import annotations

from typing import get_args

import pytest

from core.contract import (
    Attention,
    Component,
    CpuOffload,
    Engine,
    KvPrecision,
    Method,
    Optimizer,
    Precision,
    Recommendation,
    Sharding,
    Task,
    VerdictKind,
)
from core.errors import ParseError
from core.language.words import LANGUAGES, concept_key, label, message_ids, normalize_lang, t, translate


def test_every_language_has_the_same_keys() -> None:
    english = message_ids("en")
    assert english, "en/core.ftl is empty or missing"
    for lang in LANGUAGES:
        assert message_ids(lang) == english, lang


def _concepts() -> list[tuple[str, str]]:
    reasons = get_args(Recommendation.model_fields["reason"].annotation)
    return [
        *(("task", v) for v in Task),
        *(("method", v) for v in Method),
        *(("method-note", v) for v in Method),
        *(("precision", v) for v in Precision),
        *(("precision-note", v) for v in Precision),
        *(("precision", v) for v in KvPrecision),
        *(("engine", v) for v in Engine),
        *(("optimizer", v) for v in Optimizer),
        *(("sharding", v) for v in Sharding),
        *(("offload", v) for v in CpuOffload),
        *(("attention", v) for v in Attention),
        *(("component", v) for v in get_args(Component)),
        *(("verdict", v) for v in get_args(VerdictKind)),
        *(("reason", v) for v in reasons),
    ]


@pytest.mark.parametrize("lang", LANGUAGES)
def test_every_contract_concept_has_a_label(lang: str) -> None:
    keys = message_ids(lang)
    missing = [
        concept_key(group, str(value))
        for group, value in _concepts()
        if concept_key(group, str(value)) not in keys
    ]
    assert not missing


def test_every_parse_error_code_has_a_message() -> None:
    codes = ("empty", "missing_model", "ambiguous_model", "unknown_model", "too_large", "invalid")
    assert ParseError.__doc__ and all(code in ParseError.__doc__ for code in codes)
    for code in codes:
        assert concept_key("parse-error", code) in message_ids("en")


def test_labels_differ_by_language() -> None:
    assert label("component", "kv_cache", "en") == "KV cache"
    assert label("component", "kv_cache", "ru") == "KV-кэш"
    assert label("verdict", "does_not_fit", "ru") == "не влезает"
    assert label("engine", "llama.cpp", "en") == "llama.cpp"


def test_plurals_follow_the_language() -> None:
    assert t("setting-users", "en", count=1) == "1 user"
    assert t("setting-users", "en", count=4) == "4 users"
    assert [t("setting-users", "ru", count=n) for n in (1, 3, 5, 21)] == [
        "1 пользователь",
        "3 пользователя",
        "5 пользователей",
        "21 пользователь",
    ]


def test_missing_keys_fall_back_to_english_then_to_the_key() -> None:
    assert t("no-such-key", "ru") == "no-such-key"
    assert translate("no-such-key", "ru") is None
    assert label("component", "brand_new_part", "ru") == "brand_new_part"


def test_a_message_missing_its_arguments_is_not_returned_half_formatted() -> None:
    assert translate("setting-context", "en") is None  # $tokens not given
    assert translate("setting-context", "en", tokens=8192) == "context 8,192 tokens"


def test_no_unicode_isolation_marks() -> None:
    assert "\u2068" not in t("setting-batch", "en", count=4)


@pytest.mark.parametrize(
    ("given", "expected"),
    [("ru", "ru"), ("ru-RU", "ru"), ("EN_us", "en"), ("de", "en"), (None, "en"), ("", "en")],
)
def test_language_codes_are_normalized(given: str | None, expected: str) -> None:
    assert normalize_lang(given) == expected


def test_concept_keys_are_valid_fluent_identifiers() -> None:
    assert concept_key("engine", "llama.cpp") == "engine-llama_cpp"
    assert concept_key("precision", "gptq-int4") == "precision-gptq-int4"
