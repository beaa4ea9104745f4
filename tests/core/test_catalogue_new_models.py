"""Issue 11 item 4: the models users name today are in the catalogue, found by their Latin and
Russian spellings, and sized with their own architecture."""

from __future__ import annotations

import pytest

from core.catalogue.catalog import default_catalog
from core.parse import understand
from core.sizing.estimate import estimate

CATALOG = default_catalog()

PHRASES = [
    ("qwen3 30b a3b на 4090 48", "qwen3-30b-a3b", ["rtx4090-48gb"]),
    ("qwen3 0.6b", "qwen3-0.6b", None),
    ("qwen3 4b на 4090", "qwen3-4b", ["rtx4090"]),
    ("квен 3 кодер 30b", "qwen3-coder-30b-a3b", None),
    ("qwen3 coder 480b на 8 h200", "qwen3-coder-480b-a35b", ["h200"]),
    ("qwen3 vl 8b", "qwen3-vl-8b", None),
    ("qwen3 vl 30b a3b", "qwen3-vl-30b-a3b", None),
    ("llama 4 scout на h100", "llama-4-scout", None),
    ("лама 4 маверик", "llama-4-maverick", None),
    ("deepseek v3.1 на 8 h200", "deepseek-v3.1", ["h200"]),
    ("дипсик 3.1", "deepseek-v3.1", None),
    ("glm 4.5 air на 2 h100", "glm-4.5-air", None),
    ("глм 4.5 эйр", "glm-4.5-air", None),
    ("glm 4.6", "glm-4.6", None),
    ("kimi k2", "kimi-k2", None),
    ("кими к2", "kimi-k2", None),
    ("mistral small 3.2 на 4090", "mistral-small-3.1-24b", ["rtx4090"]),
    ("gemma 3n e4b", "gemma-3n-e4b", None),
    ("yandexgpt 5 lite 8b на 4090", "yandexgpt-5-lite-8b", ["rtx4090"]),
    ("яндекс гпт 5 лайт", "yandexgpt-5-lite-8b", None),
    ("t-pro 2.0 на h100", "t-pro-it-2.0", None),
    ("т-про 2.0", "t-pro-it-2.0", None),
    ("т-лайт", "t-lite-it-1.0", None),
    ("vikhr nemo 12b", "vikhr-nemo-12b", None),
    ("вихрь немо", "vikhr-nemo-12b", None),
    ("saiga llama3 8b", "saiga-llama3-8b", None),
    ("сайга немо 12b", "saiga-nemo-12b", None),
]


@pytest.mark.parametrize(("text", "model", "gpus"), PHRASES)
def test_users_phrases_find_the_new_models(text: str, model: str, gpus: list[str] | None) -> None:
    request = understand(text, CATALOG).request
    assert request.model == model, text
    if gpus is not None:
        assert request.gpus == gpus, text
    assert estimate(request, CATALOG).total_bytes > 0


def test_every_new_row_names_its_source() -> None:
    for model_id in sorted({m for _, m, _ in PHRASES}):
        spec = CATALOG.models[model_id]
        assert spec.source.startswith("https://huggingface.co/"), model_id
        assert "config.json" in spec.source, model_id


def test_native_fp8_models_default_to_fp8() -> None:
    for model in ("deepseek-v3.1", "kimi-k2"):
        assert estimate({"task": "inference", "model": model}, CATALOG).request.precision == "fp8"


def test_moe_rows_carry_their_active_parameters() -> None:
    """Decode speed reads the active parameters: Kimi K2 is 1T total but 32B per token."""
    for model, active in (("kimi-k2", 32.0), ("glm-4.5-air", 12.0), ("llama-4-scout", 17.0)):
        assert CATALOG.models[model].active_params_b == active
