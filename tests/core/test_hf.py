"""Hugging Face config.json / safetensors -> ModelSpec, from local fixture files only (no network)."""

from __future__ import annotations

import json
import struct
from pathlib import Path
from typing import Any

import pytest

from core.catalogue.catalog import Catalog, default_catalog
from core.errors import CoreError, UnknownModelError
from core.model import config as hf_config
from core.model import hub as hf
from core.model import safetensors
from core.model.resolve import HF_LOOKUP_ENV, resolve_model

FIXTURES = Path(__file__).parent / "fixtures" / "hf"

# Fixture config.json -> the catalogue row hand-copied from the same model: the two must agree.
CONFIG_MATCHES_CATALOGUE = {
    "meta-llama/Llama-3.1-8B": "llama-3.1-8b",
    "mistralai/Mistral-7B-v0.1": "mistral-7b",
    "Qwen/Qwen2.5-7B": "qwen2.5-7b",
    "Qwen/Qwen3-8B": "qwen3-8b",
    "google/gemma-2-9b": "gemma-2-9b",
    "google/gemma-3-4b-pt": "gemma-3-4b",
    "mistralai/Mixtral-8x7B-v0.1": "mixtral-8x7b",
    "Qwen/Qwen3-30B-A3B": "qwen3-30b-a3b",
    "deepseek-ai/DeepSeek-V3": "deepseek-v3",
    "openai/gpt-oss-20b": "gpt-oss-20b",
    "google-bert/bert-large-uncased": "bert-large",
}
ARCH_FIELDS = (
    "kind",
    "layers",
    "hidden_size",
    "attention_heads",
    "kv_heads",
    "resolved_head_dim",
    "intermediate_size",
    "vocab_size",
    "tied_embeddings",
    "experts",
    "active_experts",
    "moe_intermediate_size",
    "sliding_window",
    "sliding_window_layers",
    "kv_lora_rank",
    "qk_rope_head_dim",
    "native_precision",  # quantization_config: DeepSeek V3 fp8, GPT-OSS mxfp4, the rest none
)


def load_config(hf_id: str) -> dict[str, Any]:
    loaded: dict[str, Any] = json.loads((FIXTURES / hf_id.replace("/", "--") / "config.json").read_text())
    return loaded


def safetensors_bytes(tensors: dict[str, tuple[str, list[int]]]) -> bytes:
    """A safetensors file's header (no tensor data needed to count parameters)."""
    header: dict[str, Any] = {"__metadata__": {"format": "pt"}}
    for offset, (name, (dtype, shape)) in enumerate(tensors.items()):
        header[name] = {"dtype": dtype, "shape": shape, "data_offsets": [offset, offset + 1]}
    raw = json.dumps(header).encode()
    return struct.pack("<Q", len(raw)) + raw


class FixtureHub:
    """A Hub reading tests/core/fixtures/hf, plus `configs` given by a test; counts per test."""

    def __init__(
        self,
        counts: dict[str, dict[str, int]] | None = None,
        configs: dict[str, dict[str, Any]] | None = None,
    ) -> None:
        self.counts = counts or {}
        self.configs = configs or {}
        self.calls: list[str] = []

    def config(self, repo_id: str) -> dict[str, Any]:
        self.calls.append(repo_id)
        if repo_id in self.configs:
            return self.configs[repo_id]
        if not (FIXTURES / repo_id.replace("/", "--")).is_dir():
            raise UnknownModelError(repo_id)
        return load_config(repo_id)

    def parameter_counts(self, repo_id: str) -> dict[str, int] | None:
        return self.counts.get(repo_id)


def clone_hub(counts: dict[str, int] | None = None) -> FixtureHub:
    """`acme/llama-clone`: a fine-tune not in the catalogue, with Llama 3.1 8B's config."""
    return FixtureHub(
        {"acme/llama-clone": counts} if counts else None,
        {"acme/llama-clone": load_config("meta-llama/Llama-3.1-8B")},
    )


class BrokenHub(FixtureHub):
    def config(self, repo_id: str) -> dict[str, Any]:
        raise ConnectionError("network unreachable")


@pytest.fixture(scope="module")
def catalog() -> Catalog:
    return default_catalog()


# --- config.json mapping -------------------------------------------------------------------------


@pytest.mark.parametrize(("hf_id", "model_id"), CONFIG_MATCHES_CATALOGUE.items())
def test_config_maps_to_the_catalogue_architecture(catalog: Catalog, hf_id: str, model_id: str) -> None:
    spec, _ = hf_config.spec_from_config(load_config(hf_id), hf_id)
    row = catalog.models[model_id]
    assert {f: getattr(spec, f) for f in ARCH_FIELDS} == {f: getattr(row, f) for f in ARCH_FIELDS}


@pytest.mark.parametrize(
    "hf_id",
    [h for h in CONFIG_MATCHES_CATALOGUE if h != "google/gemma-3-4b-pt"],  # its total has a vision tower
)
def test_parameters_computed_from_config_match_published_counts(catalog: Catalog, hf_id: str) -> None:
    spec, assumptions = hf_config.spec_from_config(load_config(hf_id), hf_id)
    assert spec.params_b == pytest.approx(catalog.models[CONFIG_MATCHES_CATALOGUE[hf_id]].params_b, rel=0.02)
    assert "huggingface_params_from_config" in [a.code for a in assumptions]


@pytest.mark.parametrize(
    ("quantization", "precision"),
    [
        ({"quant_method": "fp8", "weight_block_size": [128, 128]}, "fp8"),
        ({"quant_method": "mxfp4"}, "mxfp4"),
        ({"quant_method": "awq", "bits": 4}, "awq-int4"),
        ({"quant_method": "gptq", "bits": 4}, "gptq-int4"),
        ({"quant_method": "gptq", "bits": 8}, None),
        ({"quant_method": "bitsandbytes", "load_in_4bit": True}, "nf4"),
        ({"quant_method": "bitsandbytes", "load_in_8bit": True}, "int8"),
        ({"quant_method": "something-new"}, None),
        (None, None),
        ("fp8", None),
    ],
)
def test_shipped_precision_from_quantization_config(quantization: Any, precision: str | None) -> None:
    assert hf_config.shipped_precision(quantization) == precision


def test_moe_active_parameters_from_config() -> None:
    spec, _ = hf_config.spec_from_config(
        load_config("mistralai/Mixtral-8x7B-v0.1"), "mistralai/Mixtral-8x7B-v0.1"
    )
    assert spec.active_params_b == pytest.approx(12.879, rel=0.01)


def test_qwen_window_is_ignored_unless_enabled() -> None:
    config = load_config("Qwen/Qwen2.5-7B")
    assert hf_config.spec_from_config(config, "q/a")[0].sliding_window is None
    spec, _ = hf_config.spec_from_config(
        {**config, "use_sliding_window": True, "sliding_window": 4096}, "q/b"
    )
    assert (spec.sliding_window, spec.sliding_window_layers) == (4096, 28)


def test_config_without_decoder_fields_is_a_model_error() -> None:
    with pytest.raises(CoreError, match=r"config\.json") as error:
        hf_config.spec_from_config(load_config("acme/broken"), "acme/broken")
    assert error.value.field == "model"


def test_inconsistent_config_is_a_model_error() -> None:
    config = {**load_config("meta-llama/Llama-3.1-8B"), "num_key_value_heads": 5}
    with pytest.raises(CoreError, match="inconsistent") as error:
        hf_config.spec_from_config(config, "acme/odd")
    assert error.value.field == "model"


def test_t5_style_config_is_an_encoder_decoder() -> None:
    config = {
        "model_type": "t5",
        "d_model": 1024,
        "num_layers": 24,
        "num_heads": 16,
        "d_kv": 64,
        "d_ff": 4096,
        "vocab_size": 32128,
        "feed_forward_proj": "relu",
    }
    spec, _ = hf_config.spec_from_config(config, "google-t5/t5-large")
    assert (spec.kind, spec.layers, spec.encoder_layers, spec.resolved_head_dim) == (
        "encoder_decoder",
        24,
        24,
        64,
    )
    assert spec.params_b == pytest.approx(0.738, rel=0.03)  # T5-large's published 738M


# --- safetensors ---------------------------------------------------------------------------------


def test_safetensors_header_counts_parameters_by_dtype(tmp_path: Path) -> None:
    data = safetensors_bytes(
        {
            "embed.weight": ("BF16", [1000, 64]),
            "layer.0.weight": ("BF16", [64, 64]),
            "layer.0.scale": ("F32", [64]),
        }
    )
    path = tmp_path / "model.safetensors"
    path.write_bytes(data + b"\0" * 16)
    for source in (data, path):
        assert safetensors.parameter_counts(safetensors.read_safetensors_header(source)) == {
            "BF16": 64_000 + 4096,
            "F32": 64,
        }


@pytest.mark.parametrize("data", [b"", b"\x05\0\0\0\0\0\0\0{}", struct.pack("<Q", 2) + b"no"])
def test_malformed_safetensors_header(data: bytes) -> None:
    with pytest.raises(CoreError, match="not a safetensors file"):
        safetensors.read_safetensors_header(data)


def test_exact_count_from_safetensors_wins_over_the_config() -> None:
    hf_id = "meta-llama/Llama-3.1-8B"
    spec, assumptions = hf_config.spec_from_config(load_config(hf_id), hf_id, {"BF16": 8_030_261_248})
    assert spec.params_b == 8.030261248
    saved = next(a for a in assumptions if a.code == "huggingface_safetensors")
    assert saved.params["dtype"] == "BF16"


def test_packed_quantised_checkpoint_falls_back_to_the_config() -> None:
    hf_id = "openai/gpt-oss-20b"
    counts = {"BF16": 1_800_000_000, "U8": 9_000_000_000}  # MXFP4 blocks: 2 weights per byte
    spec, assumptions = hf_config.spec_from_config(load_config(hf_id), hf_id, counts)
    assert spec.params_b == pytest.approx(20.914, rel=0.02)
    assert "U8" in next(a.text for a in assumptions if a.code == "huggingface_params_from_config")


# --- resolve through the Hub ---------------------------------------------------------------------


def test_unknown_hf_id_is_read_from_the_hub_when_enabled(catalog: Catalog) -> None:
    hub = clone_hub(counts={"BF16": 8_030_261_248})
    spec, resolved, assumptions = resolve_model("acme/llama-clone", catalog, hf_lookup=True, hub=hub)
    assert (resolved.source, resolved.id) == ("huggingface", "acme/llama-clone")
    assert (spec.layers, spec.kv_heads) == (32, 8)
    assert resolved.params_b == 8.030261248
    assert [a.code for a in assumptions] == ["huggingface_config", "huggingface_safetensors"]


def test_catalogue_models_never_touch_the_hub(catalog: Catalog) -> None:
    hub = FixtureHub()
    resolve_model("meta-llama/Llama-3.1-8B-Instruct", catalog, hf_lookup=True, hub=hub)
    assert hub.calls == []


def test_lookup_is_enabled_by_the_environment(catalog: Catalog, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(HF_LOOKUP_ENV, "1")
    assert resolve_model("acme/llama-clone", catalog, hub=clone_hub())[1].source == "huggingface"
    monkeypatch.setenv(HF_LOOKUP_ENV, "0")
    with pytest.raises(UnknownModelError):
        resolve_model("acme/llama-clone", catalog, hub=clone_hub())


def test_explicit_parameter_overrides_the_environment(
    catalog: Catalog, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(HF_LOOKUP_ENV, "1")
    hub = clone_hub()
    with pytest.raises(UnknownModelError):
        resolve_model("acme/llama-clone", catalog, hf_lookup=False, hub=hub)
    assert hub.calls == []


def test_missing_repo_is_an_unknown_model(catalog: Catalog) -> None:
    with pytest.raises(UnknownModelError):
        resolve_model("acme/does-not-exist", catalog, hf_lookup=True, hub=FixtureHub())


def test_network_failure_is_a_clear_model_error(catalog: Catalog) -> None:
    with pytest.raises(CoreError, match="could not read acme/x from Hugging Face") as error:
        resolve_model("acme/x", catalog, hf_lookup=True, hub=BrokenHub())
    assert error.value.field == "model"


def test_looks_like_hf_id() -> None:
    assert hf.looks_like_hf_id("Qwen/Qwen2.5-7B-Instruct")
    assert not hf.looks_like_hf_id("llama 3 8b")
    assert not hf.looks_like_hf_id("a/b/c")


# --- the real Hub wrapper, with huggingface_hub's functions replaced (no network) ----------------


class _Metadata:
    parameter_count = {"BF16": 8_030_261_248}  # noqa: RUF012


def test_huggingface_hub_wrapper_reads_config_and_counts(monkeypatch: pytest.MonkeyPatch) -> None:
    huggingface_hub = pytest.importorskip("huggingface_hub")  # the optional `hf` extra

    config_path = FIXTURES / "meta-llama--Llama-3.1-8B" / "config.json"
    downloads: list[tuple[str, str]] = []

    def fake_download(repo_id: str, filename: str, **_: object) -> str:
        downloads.append((repo_id, filename))
        return str(config_path)

    monkeypatch.setattr(huggingface_hub, "hf_hub_download", fake_download)
    monkeypatch.setattr(huggingface_hub, "get_safetensors_metadata", lambda repo_id, **_: _Metadata())
    hub = hf.HuggingFaceHub()
    assert hub.config("acme/clone")["num_hidden_layers"] == 32
    assert hub.parameter_counts("acme/clone") == {"BF16": 8_030_261_248}
    assert downloads == [("acme/clone", "config.json")]


def test_huggingface_hub_wrapper_maps_a_missing_repo(monkeypatch: pytest.MonkeyPatch) -> None:
    huggingface_hub = pytest.importorskip("huggingface_hub")  # the optional `hf` extra
    import httpx
    from huggingface_hub.errors import NotASafetensorsRepoError, RepositoryNotFoundError

    def missing(repo_id: str, filename: str, **_: object) -> str:
        request = httpx.Request("GET", f"https://huggingface.co/{repo_id}")
        raise RepositoryNotFoundError("404", response=httpx.Response(404, request=request))

    def not_safetensors(repo_id: str, **_: object) -> object:
        raise NotASafetensorsRepoError("no safetensors")

    monkeypatch.setattr(huggingface_hub, "hf_hub_download", missing)
    monkeypatch.setattr(huggingface_hub, "get_safetensors_metadata", not_safetensors)
    with pytest.raises(UnknownModelError):
        hf.HuggingFaceHub().config("acme/gone")
    assert hf.HuggingFaceHub().parameter_counts("acme/gone") is None
