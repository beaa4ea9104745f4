"""A slow or hostile Hugging Face mirror (`tests.fake_hub` modes) against `core.model.hub.look_up`: one
deadline for the whole look-up, however the server drips; bodies capped; ids the Hub cannot have
never sent; every config number checked against the contract's bounds (`core.model.checks`)."""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any

import pytest

from core.errors import UnknownModelError
from core.model import hub as hf
from core.model.checks import ConfigRefused
from core.parse import understand
from tests.fake_hub import FakeHub, fixture_config

CLONE = "acme/Llama-Clone-8B"
COUNTS = {"BF16": 8_030_261_248}
BUDGET_S = 0.5
LLAMA = fixture_config("meta-llama/Llama-3.1-8B")


@pytest.fixture
def hub() -> Iterator[FakeHub]:
    with FakeHub({CLONE: (LLAMA, COUNTS)}) as fake:
        yield fake


def timed_look_up(repo_id: str, hub: FakeHub) -> tuple[type[BaseException], float]:
    start = time.monotonic()
    with pytest.raises(Exception) as caught:
        hf.look_up(repo_id, hf.HttpHub(hub.url, budget_s=BUDGET_S))
    return caught.type, time.monotonic() - start


def test_a_dripping_mirror_is_cut_off_at_the_deadline(hub: FakeHub) -> None:
    """A byte every 50 ms: each read is quick, the response takes minutes. Before, each read had its
    own timeout and the look-up ran as long as the server liked."""
    hub.drip_s = 0.05
    kind, took = timed_look_up(CLONE, hub)
    assert kind is hf.HubUnavailable
    assert took < 2 * BUDGET_S


def test_an_endless_body_is_refused_not_read(hub: FakeHub) -> None:
    hub.huge = True
    kind, took = timed_look_up(CLONE, hub)
    assert kind is ConfigRefused
    assert took < 2 * BUDGET_S + 1  # a megabyte from loopback, then it stops reading


@pytest.mark.parametrize("repo_id", ["org/модель", "org/模型", "Ｑwen/Qwen3-8B", "org/name with space"])
def test_an_id_the_hub_cannot_have_is_never_sent(hub: FakeHub, repo_id: str) -> None:
    with pytest.raises(hf.NotAHubId) as caught:
        hf.look_up(repo_id, hf.HttpHub(hub.url))
    assert isinstance(caught.value, UnknownModelError)
    assert hub.requests == []


def test_a_link_with_a_non_ascii_id_names_that_id() -> None:
    """The parser keeps what was typed; the look-up refuses it (the bot says why)."""
    assert understand("https://huggingface.co/org/модель").request.model == "org/модель"
    assert not hf.is_hub_id("org/модель") and hf.is_hub_id("Qwen/Qwen3-8B")


def llama(**changes: Any) -> dict[str, Any]:
    return {**LLAMA, **changes}


DEEP: Any = 1
for _ in range(40):  # nested past MAX_JSON_DEPTH, well within what the decoder reads
    DEEP = [DEEP]
NESTED = b'{"model_type": "llama", "x": ' + b"[" * 100_000 + b"]" * 100_000 + b"}"


@pytest.mark.parametrize(
    ("config", "counts", "code", "field"),
    [
        (llama(num_attention_heads=0), COUNTS, "range", "num_attention_heads"),
        (llama(num_hidden_layers=1e308), COUNTS, "range", "num_hidden_layers"),
        (llama(num_hidden_layers=10**9), None, "range", "num_hidden_layers"),
        (llama(vocab_size=10**30), None, "range", "vocab_size"),
        (llama(hidden_size=-4096), COUNTS, "range", "hidden_size"),
        (llama(num_key_value_heads=3.5), COUNTS, "malformed", "num_key_value_heads"),
        (llama(intermediate_size=[14336]), COUNTS, "malformed", "intermediate_size"),
        (llama(num_attention_heads="many"), COUNTS, "malformed", "num_attention_heads"),
        (llama(max_position_embeddings=10**12), COUNTS, "range", "max_position_embeddings"),
        (llama(text_config={**LLAMA, "num_attention_heads": 0}), COUNTS, "range", "num_attention_heads"),
        (llama(rope_scaling=DEEP), COUNTS, "malformed", "config.json"),
        # parameter counts that do not go with the architecture, or are not counts at all
        (LLAMA, {"BF16": 1000}, "inconsistent", "num_hidden_layers, hidden_size"),
        (LLAMA, {"BF16": 900_000_000_000}, "inconsistent", "safetensors.parameters"),
        (LLAMA, {"BF16": -8_030_261_248}, "range", "safetensors.parameters.BF16"),
        (LLAMA, {"BF16": "8B"}, "malformed", "safetensors.parameters"),
        (LLAMA, {"BF16": 10**30}, "range", "safetensors.parameters.BF16"),
    ],
)
def test_a_hostile_config_is_refused_naming_the_key(
    hub: FakeHub, config: dict[str, Any], counts: Any, code: str, field: str
) -> None:
    hub.models["acme/hostile"] = (config, counts)
    with pytest.raises(ConfigRefused) as caught:
        hf.look_up("acme/hostile", hf.HttpHub(hub.url))
    assert (caught.value.code, caught.value.details["field"]) == (code, field)
    assert all(len(v) <= 40 for v in caught.value.details.values())


@pytest.mark.parametrize(
    "body",
    [
        NESTED,  # past the JSON decoder's recursion limit
        b'{"model_type": "llama", "num_hidden_layers": Infinity, "hidden_size": 4096}',
        b'{"model_type": "llama", "num_hidden_layers": 32, "hidden_size": NaN}',
        b'{"model_type": "llama", "num_hidden_layers": 1e999, "hidden_size": 4096}',
    ],
)
def test_config_bodies_python_cannot_size_are_refused(hub: FakeHub, body: bytes) -> None:
    hub.raw_configs["acme/raw"] = body
    with pytest.raises(ConfigRefused):
        hf.look_up("acme/raw", hf.HttpHub(hub.url))


def test_the_shipped_configs_pass_the_checks(hub: FakeHub) -> None:
    """The bounds refuse nothing real: every fixture config (Llama, Qwen, DeepSeek V3, gemma 3,
    gpt-oss, T5-style) is read, with and without parameter counts."""
    from tests.core.test_hf import FIXTURES

    for path in sorted(p for p in FIXTURES.iterdir() if (p / "config.json").exists()):
        hf_id = path.name.replace("--", "/")
        if hf_id == "acme/broken":
            continue
        hub.models[hf_id.lower()] = (fixture_config(hf_id), None)
        config, _ = hf.look_up(hf_id, hf.HttpHub(hub.url))
        assert config == fixture_config(hf_id)
