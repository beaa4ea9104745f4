"""The quick Hugging Face look-up (`core.model.hub.HttpHub`, `look_up`, `MemoryHub`) against a local fake Hub:
found, not found, out of time (fast), the Hub failing; links to huggingface.co read as ids."""

from __future__ import annotations

import time
from collections.abc import Iterator

import pytest

from core.errors import CoreError, UnknownModelError
from core.model import hub as hf
from core.parse import understand
from core.sizing.estimate import estimate
from tests.fake_hub import FakeHub, fixture_config

CLONE = "acme/Llama-Clone-8B"  # Llama 3.1 8B's config under a name the catalogue does not know
COUNTS = {"BF16": 8_030_261_248}


@pytest.fixture
def hub() -> Iterator[FakeHub]:
    with FakeHub({CLONE: (fixture_config("meta-llama/Llama-3.1-8B"), COUNTS)}) as fake:
        yield fake


def test_found_reads_config_and_parameter_counts(hub: FakeHub) -> None:
    config, counts = hf.look_up(CLONE, hf.HttpHub(hub.url))
    assert config["num_hidden_layers"] == 32 and counts == COUNTS
    assert hub.requests == [
        f"/{CLONE}/resolve/main/config.json",
        f"/api/models/{CLONE}?expand=safetensors",
    ]


def test_a_found_model_sizes_through_the_memory_hub(hub: FakeHub) -> None:
    records = {CLONE.lower(): hf.look_up(CLONE, hf.HttpHub(hub.url))}
    memory = hf.MemoryHub(records, key=str.lower)
    result = estimate({"task": "inference", "model": "ACME/llama-clone-8b"}, hub=memory)
    assert result.model.source == "huggingface" and result.model.params_b == pytest.approx(8.03, abs=0.01)
    # the same architecture as the catalogue's Llama 3.1 8B: the same memory
    same = estimate({"task": "inference", "model": "llama-3.1-8b"})
    assert result.total_bytes == pytest.approx(same.total_bytes, rel=0.01)


def test_memory_hub_knows_nothing_else() -> None:
    with pytest.raises(UnknownModelError):
        estimate({"task": "inference", "model": "acme/unknown-7b"}, hub=hf.MemoryHub({}))


def test_not_found_is_an_unknown_model(hub: FakeHub) -> None:
    with pytest.raises(UnknownModelError):
        hf.look_up("acme/no-such-model", hf.HttpHub(hub.url))


def test_a_missing_safetensors_summary_falls_back_to_the_config(hub: FakeHub) -> None:
    hub.models["acme/no-counts"] = (fixture_config("Qwen/Qwen3-8B"), None)
    config, counts = hf.look_up("acme/no-counts", hf.HttpHub(hub.url))
    assert counts is None and config["model_type"] == "qwen3"


def test_a_stalled_hub_gives_up_within_the_budget(hub: FakeHub) -> None:
    hub.stall = True
    start = time.monotonic()
    with pytest.raises(hf.HubUnavailable):
        hf.look_up(CLONE, hf.HttpHub(hub.url, budget_s=0.3))
    assert time.monotonic() - start < 2.0  # one budget, no retries (the budget here is 0.3 s)


def test_an_unreachable_hub_is_unavailable_not_unknown() -> None:
    with FakeHub({}) as gone:
        url = gone.url
    with pytest.raises(hf.HubUnavailable):
        hf.look_up(CLONE, hf.HttpHub(url, budget_s=1.0))


def test_a_failing_hub_is_unavailable(hub: FakeHub) -> None:
    hub.fail_with = 503
    with pytest.raises(hf.HubUnavailable, match="HTTP 503"):
        hf.look_up(CLONE, hf.HttpHub(hub.url))


def test_a_config_we_do_not_read_is_a_model_error(hub: FakeHub) -> None:
    hub.models["acme/broken"] = (fixture_config("acme/broken"), None)
    with pytest.raises(CoreError) as caught:
        hf.look_up("acme/broken", hf.HttpHub(hub.url))
    assert not isinstance(caught.value, (UnknownModelError, hf.HubUnavailable))


@pytest.mark.parametrize(
    ("text", "model"),
    [
        # a link to a model the catalogue has is that catalogue row
        ("https://huggingface.co/moonshotai/Kimi-K2-Instruct на h100", "kimi-k2"),
        ("https://hf.co/zai-org/GLM-4.6 32k", "glm-4.6"),
        ("zai-org/GLM-4.6 int4", "glm-4.6"),
        # one it lacks is the Hub id, to look up
        ("huggingface.co/acme/Llama-Clone-8B/blob/main/config.json int4", CLONE),
        ("https://hf.co/acme/Tiny-Thing-3B 8k", "acme/Tiny-Thing-3B"),
    ],
)
def test_links_and_ids_name_the_model(text: str, model: str) -> None:
    assert understand(text).request.model == model


def test_links_to_datasets_are_not_models() -> None:
    assert hf.hf_id_from_url("https://huggingface.co/datasets/acme/corpus") is None
    assert hf.hf_id_from_url("https://huggingface.co/Qwen/Qwen3-8B/tree/main") == "Qwen/Qwen3-8B"
