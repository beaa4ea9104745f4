"""resolve_model: catalogue names, bare sizes, custom architectures and unknown ids."""

from __future__ import annotations

import pytest

from core.catalogue.catalog import Catalog, default_catalog
from core.catalogue.models import ModelSpec
from core.contract import Assumption, CustomModel
from core.errors import CoreError, UnknownModelError
from core.model.resolve import HF_LOOKUP_ENV, parse_size, resolve_model


@pytest.fixture(scope="module")
def catalog() -> Catalog:
    return default_catalog()


def codes(assumptions: list[Assumption]) -> list[str]:
    return [a.code for a in assumptions]


# --- catalogue -----------------------------------------------------------------------------------


def test_catalogue_alias_resolves_without_assumptions(catalog: Catalog) -> None:
    spec, resolved, assumptions = resolve_model("llama 3.1 8b", catalog)
    assert spec.id == "llama-3.1-8b"
    assert (resolved.id, resolved.source, resolved.params_b) == ("llama-3.1-8b", "catalogue", 8.030)
    assert assumptions == []


def test_instruct_variant_says_which_architecture_it_used(catalog: Catalog) -> None:
    spec, resolved, assumptions = resolve_model("meta-llama/Llama-3.1-8B-Instruct", catalog)
    assert spec.id == "llama-3.1-8b" and resolved.source == "catalogue"
    assert codes(assumptions) == ["variant_same_architecture"]


def test_moe_reports_active_parameters(catalog: Catalog) -> None:
    _, resolved, _ = resolve_model("Mixtral-8x7B", catalog)
    assert resolved.params_b == 46.703 and resolved.active_params_b == 12.879


def test_a_bare_8x7b_is_mixtral(catalog: Catalog) -> None:
    assert resolve_model("8x7b", catalog)[0].id == "mixtral-8x7b"


# --- sizes ---------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("13B", (13.0, None)),
        ("1.5b", (1.5, None)),
        ("8x7b", (7.0, 8)),
        ("405 млрд", (405.0, None)),
        ("7 billion", (7.0, None)),
        ("350m", (0.35, None)),
        ("1,5B", (1.5, None)),
        ("8х22b", (22.0, 8)),
        ("70B params", (70.0, None)),
        ("1.8T", (1800.0, None)),
    ],
)
def test_parse_size(text: str, expected: tuple[float, int | None]) -> None:
    value, experts = parse_size(text)  # type: ignore[misc]
    assert value == pytest.approx(expected[0]) and experts == expected[1]


@pytest.mark.parametrize("text", ["llama", "7", "b", "13B llama", "x7b"])
def test_parse_size_ignores_non_sizes(text: str) -> None:
    assert parse_size(text) is None


@pytest.mark.parametrize("text", ["0b", "0.0B", "25000b", "30T", "1000x30b"])
def test_absurd_sizes_are_rejected_with_the_model_field(catalog: Catalog, text: str) -> None:
    with pytest.raises(CoreError) as error:
        resolve_model(text, catalog)
    assert error.value.field == "model"


def test_size_uses_a_typical_architecture_and_says_so(catalog: Catalog) -> None:
    spec, resolved, assumptions = resolve_model("13B", catalog)
    assert resolved.source == "size" and resolved.id is None
    assert spec.params_b == 13.0
    assert (spec.layers, spec.hidden_size) == (40, 5120)  # Llama 2 13B's shape
    assert codes(assumptions) == ["typical_architecture"]
    assert "Llama 2 13B" in assumptions[0].text


def _params_from_shape_b(spec: ModelSpec) -> float:
    """Gated-FFN decoder: attention q,o + k,v projections, 3 FFN matrices, embeddings."""
    h, d = spec.hidden_size or 0, spec.resolved_head_dim or 0
    attention = 2 * h * (spec.attention_heads or 0) * d + 2 * h * (spec.kv_heads or 0) * d
    layer = attention + 3 * h * (spec.intermediate_size or 0)
    embeddings = (spec.vocab_size or 0) * h * (1 if spec.tied_embeddings else 2)
    return ((spec.layers or 0) * layer + embeddings) / 1e9


@pytest.mark.parametrize("size", ["0.7b", "2b", "5b", "10b", "20b", "24b", "45b", "100b", "180b", "1t"])
def test_typical_shape_holds_about_the_requested_parameters(catalog: Catalog, size: str) -> None:
    spec, _, _ = resolve_model(size, catalog)
    assert _params_from_shape_b(spec) == pytest.approx(spec.params_b, rel=0.1)


def test_size_beyond_the_largest_reference_is_deeper(catalog: Catalog) -> None:
    spec, _, _ = resolve_model("1T", catalog)
    assert (spec.layers or 0) > (catalog.models["llama-3.1-405b"].layers or 0)
    assert spec.params_b == 1000


def test_moe_size_reports_total_and_active(catalog: Catalog) -> None:
    spec, resolved, assumptions = resolve_model("4x3b", catalog)
    assert spec.experts == 4 and spec.active_experts == 2
    assert resolved.active_params_b is not None
    assert 3 < resolved.active_params_b < resolved.params_b < 12
    assert codes(assumptions) == ["typical_architecture", "typical_moe"]


# --- custom architectures -----------------------------------------------------------------------


def test_complete_custom_model_is_kept_as_given(catalog: Catalog) -> None:
    model = CustomModel(
        params_b=7.2,
        layers=32,
        hidden_size=4096,
        attention_heads=32,
        kv_heads=8,
        head_dim=128,
        intermediate_size=14336,
        vocab_size=32000,
    )
    spec, resolved, assumptions = resolve_model(model, catalog)
    assert resolved.source == "custom"
    assert (spec.layers, spec.kv_heads, spec.intermediate_size, spec.params_b) == (32, 8, 14336, 7.2)
    assert assumptions == []


def test_custom_model_fills_missing_numbers_and_names_them(catalog: Catalog) -> None:
    spec, _, assumptions = resolve_model(CustomModel(params_b=7, layers=30), catalog)
    assert spec.layers == 30 and spec.hidden_size is not None and spec.vocab_size is not None
    filled = next(a for a in assumptions if a.code == "custom_filled")
    assert "layers" not in str(filled.params["fields"]).split(", ")
    assert "hidden_size" in str(filled.params["fields"])


def test_custom_heads_without_kv_heads_assume_full_attention(catalog: Catalog) -> None:
    spec, _, assumptions = resolve_model(
        CustomModel(params_b=13, hidden_size=5120, attention_heads=40), catalog
    )
    assert spec.kv_heads == 40 and spec.resolved_head_dim == 128
    assert "custom_mha" in codes(assumptions)


def test_custom_hidden_size_keeps_ffn_proportional(catalog: Catalog) -> None:
    spec, _, _ = resolve_model(CustomModel(params_b=7, hidden_size=2048), catalog)
    assert spec.hidden_size == 2048
    assert spec.intermediate_size is not None and spec.intermediate_size < 11008


def test_custom_moe_without_active_experts(catalog: Catalog) -> None:
    model = CustomModel(
        params_b=46.7,
        layers=32,
        hidden_size=4096,
        attention_heads=32,
        kv_heads=8,
        intermediate_size=14336,
        vocab_size=32000,
        experts=8,
    )
    spec, resolved, assumptions = resolve_model(model, catalog)
    assert spec.active_experts == 2 and "custom_active_experts" in codes(assumptions)
    assert resolved.active_params_b == pytest.approx(12.9, abs=0.5)  # Mixtral's 12.9B


def test_custom_inconsistent_heads_is_a_model_error(catalog: Catalog) -> None:
    with pytest.raises(CoreError) as error:
        resolve_model(CustomModel(params_b=7, attention_heads=30, kv_heads=8), catalog)
    assert error.value.field == "model"


def test_custom_active_experts_without_experts(catalog: Catalog) -> None:
    with pytest.raises(CoreError, match="active_experts"):
        resolve_model(CustomModel(params_b=7, active_experts=2), catalog)


# --- unknown names ------------------------------------------------------------------------------


def test_unknown_name_suggests_catalogue_models(catalog: Catalog) -> None:
    with pytest.raises(UnknownModelError) as error:
        resolve_model("qwen 2.5 7", catalog)
    assert "Qwen2.5 7B" in error.value.suggestions


def test_unknown_hf_id_without_lookup(catalog: Catalog, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(HF_LOOKUP_ENV, raising=False)
    with pytest.raises(UnknownModelError) as error:
        resolve_model("acme/totally-new-model", catalog)
    assert error.value.field == "model"


def test_empty_model(catalog: Catalog) -> None:
    with pytest.raises(CoreError, match="empty"):
        resolve_model("   ", catalog)
