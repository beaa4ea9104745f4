"""Time to first token and the servers a load takes (core.advice.latency), through `estimate` and the
prefill function; published figures from tests/core/fixtures/prefill_cases.jsonl."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from core.advice.latency import (
    Load,
    check,
    efficiency_rows,
    load_efficiency,
    mdl_wait,
    prefill,
    prefill_flops,
    servers_for,
)
from core.catalogue.catalog import default_catalog
from core.contract import Engine, Precision, Request
from core.errors import CatalogError
from core.formulas.params import arch_of
from core.sizing.estimate import estimate

CASES = [json.loads(line) for line in (Path(__file__).parent / "fixtures" / "prefill_cases.jsonl").open()]


def _prefill_s(case: dict, precision: str) -> float:
    catalog = default_catalog()
    spec = catalog.models[case["model"]]
    arch = arch_of(spec)
    assert arch is not None
    gpu = catalog.gpus[case["gpu"]]
    p = prefill(spec, arch, gpu, case["count"], Engine(case["engine"]), Precision(precision), case["tokens"])
    assert p is not None
    return p.seconds


@pytest.mark.parametrize("case", [c for c in CASES if c["precision"] != "bracket"], ids=lambda c: c["id"])
def test_published_prefill(case: dict) -> None:
    """Each figure within its tolerance: the rows a constant is read from (`calibrates`) to 10%,
    the independent ones to 30%."""
    seconds = _prefill_s(case, case["precision"])
    if "tokens_per_s" in case:
        predicted, measured = case["tokens"] / seconds, case["tokens_per_s"]
    else:
        predicted, measured = seconds, case["ttft_s"]
    assert abs(predicted / measured - 1) <= case["tolerance"], (case["id"], predicted, measured)


@pytest.mark.parametrize("case", [c for c in CASES if c["precision"] == "bracket"], ids=lambda c: c["id"])
def test_published_ttft_bracketed_by_precision(case: dict) -> None:
    """A TTFT published without its precision lies between the fp8 and the bf16 prediction."""
    fast, slow = _prefill_s(case, "fp8"), _prefill_s(case, "bf16")
    assert fast < case["ttft_s"] < slow


def test_every_constant_has_its_figure() -> None:
    calibrated = {c["calibrates"] for c in CASES if c["calibrates"]}
    assert calibrated == {row.id for row in efficiency_rows()}


def test_prefill_grows_faster_than_the_prompt() -> None:
    """The attention term: twice the tokens cost more than twice the FLOPs."""
    spec = default_catalog().models["llama-3.1-8b"]
    arch = arch_of(spec)
    assert arch is not None
    one, two = prefill_flops(spec, arch, 16_384), prefill_flops(spec, arch, 32_768)
    assert two > 2 * one
    assert prefill_flops(spec, arch, 1) > 2 * 7e9  # every decoder weight at least once


def test_moe_prefills_its_active_experts_only() -> None:
    spec = default_catalog().models["qwen3-30b-a3b"]
    arch = arch_of(spec)
    assert arch is not None and spec.active_params_b
    per_token = prefill_flops(spec, arch, 1000) / 1000
    assert per_token < 2 * spec.active_params_b * 1e9 * 1.2


def test_estimate_gives_ttft_next_to_decode_speed() -> None:
    result = estimate(
        {"task": "inference", "model": "llama-3.1-8b", "gpus": ["h100-sxm"], "context_length": 8192}
    )
    latency = result.latency
    assert latency is not None and latency.prompt_tokens == 8192
    assert latency.ttft_s > latency.prefill_s > 0
    assert latency.requests_per_second is None and latency.servers is None
    assert all(t.ttft_s is not None for t in result.throughput)


def test_training_and_diffusion_have_no_latency() -> None:
    assert estimate({"task": "training", "model": "llama-3.1-8b"}).latency is None
    assert estimate({"task": "image_generation", "model": "sdxl"}).latency is None


def test_load_answered_with_servers() -> None:
    req = {
        "task": "inference",
        "model": "llama-3.1-8b",
        "gpus": ["h100-sxm"],
        "requests_per_second": 10,
        "ttft_target_s": 2,
    }
    latency = estimate(req).latency
    assert latency is not None and latency.met
    assert latency.servers and latency.cards == latency.servers * latency.count
    assert latency.ttft_under_load_s is not None and latency.ttft_under_load_s <= 2
    # a load's prompt default (core.inverse.cost's), not the whole context
    assert latency.prompt_tokens == 1000
    more = estimate({**req, "requests_per_second": 40}).latency
    assert more is not None and more.servers and more.servers > latency.servers


def test_a_target_below_one_request_is_unmet() -> None:
    req = {
        "task": "inference",
        "model": "llama-3.1-70b",
        "gpus": ["rtx4090-48gb"],
        "num_gpus": 4,
        "precision": "awq-int4",
        "prompt_tokens": 32000,
        "requests_per_second": 1,
        "ttft_target_s": 0.05,
    }
    latency = estimate(req).latency
    assert latency is not None and latency.met is False and latency.limit == "target"


def test_a_load_defaults_to_a_server_engine() -> None:
    result = estimate({"task": "inference", "model": "llama-3.1-8b", "requests_per_second": 5})
    assert result.request.engine is Engine.VLLM


def test_request_bounds() -> None:
    with pytest.raises(ValueError):
        Request.model_validate({"task": "inference", "model": "x", "requests_per_second": 0})
    with pytest.raises(ValueError):
        Request.model_validate({"task": "inference", "model": "x", "ttft_target_s": -1})


def test_mdl_wait() -> None:
    assert mdl_wait(0.5, 1.0) == pytest.approx(0.5)  # rho 0.5: rho S / 2(1 - rho)
    assert math.isinf(mdl_wait(1.0, 1.0))


@settings(max_examples=60, deadline=None)
@given(
    rps=st.floats(0.1, 500),
    service=st.floats(0.005, 2.0),
    target=st.one_of(st.none(), st.floats(0.05, 30)),
    cap=st.one_of(st.none(), st.integers(1, 512)),
)
def test_fewest_servers(rps: float, service: float, target: float | None, cap: int | None) -> None:
    """The count found meets the load and one fewer does not."""
    load = Load(rps, target, 500, service + 0.01, service, 50.0, cap)
    plan = servers_for(load)
    if not plan.met:
        return
    assert plan.utilization < 1
    if target is not None:
        assert plan.ttft <= target
    if cap is not None:
        assert plan.in_flight <= cap
    if 1 < plan.servers <= 64:  # one by one up to 64 (then 5% steps)
        failed, _ = check(load, plan.servers - 1)
        assert failed is not None


def test_bad_row_named(tmp_path: Path) -> None:
    bad = tmp_path / "prefill.toml"
    row = '[[efficiency]]\nid = "x"\nengines = [{engine}]\nweights = "*"\nmfu = {mfu}\nsource = "{source}"\n'
    source = "a source of twenty characters"
    bad.write_text(row.format(engine='"vllm"', mfu=1.5, source=source))
    with pytest.raises(CatalogError, match=r"efficiency\.0\.mfu"):
        load_efficiency(bad)
    bad.write_text(row.format(engine='"nope"', mfu=0.5, source=source))
    with pytest.raises(CatalogError, match=r"efficiency\.0: unknown engine"):
        load_efficiency(bad)


def test_users_at_once_wait_for_the_prefills_ahead() -> None:
    """N users sending together: the last waits (N - 1) prefills; said in both languages."""
    from core.language.answer_latency import ttft_line

    req = {"task": "inference", "model": "llama-3.1-8b", "gpus": ["h100-sxm"], "context_length": 8192}
    one = estimate(req).latency
    many = estimate({**req, "concurrency": 8}).latency
    assert one is not None and one.burst_wait_s is None
    assert many is not None and many.burst_wait_s == pytest.approx(7 * many.prefill_s, rel=1e-3)
    result = estimate({**req, "concurrency": 2})
    assert "2 пользователя отправят" in (ttft_line(result, "ru") or "")
    assert "with 2 users" in (ttft_line(result, "en") or "")
