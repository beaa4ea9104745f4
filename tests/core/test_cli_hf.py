"""The CLI looks up a Hugging Face id the catalogue lacks by default (`core.model.hub.HttpHub`, 3 s at most),
against a local fake Hub (GPUFIT_HF_ENDPOINT), never the real network: found, not found, offline,
turned off; the line it says is in the language asked."""

from __future__ import annotations

import io
import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from core.cli import EXIT_INVALID, EXIT_UNAVAILABLE, HF_LOOKUP_ENV, main
from tests.fake_hub import FakeHub, fixture_config

ROOT = Path(__file__).resolve().parents[2]
CLONE = "acme/Llama-Clone-8B"  # Llama 3.1 8B's config under a name the catalogue does not know
COUNTS = {"BF16": 8_030_261_248}


@pytest.fixture
def hub(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeHub]:
    with FakeHub({CLONE: (fixture_config("meta-llama/Llama-3.1-8B"), COUNTS)}) as fake:
        monkeypatch.setenv("GPUFIT_HF_ENDPOINT", fake.url)
        monkeypatch.delenv(HF_LOOKUP_ENV, raising=False)
        yield fake


def estimate(request: dict[str, object]) -> tuple[int, str]:
    out = io.StringIO()
    status = main(["estimate", "--json"], stdin=io.StringIO(json.dumps(request)), stdout=out)
    return status, out.getvalue()


def ask(text: str, lang: str) -> tuple[int, str]:
    out = io.StringIO()
    return main(["ask", text, "--lang", lang], stdout=out), out.getvalue()


def test_estimate_json_looks_up_an_unknown_id_by_default(hub: FakeHub) -> None:
    status, out = estimate({"task": "inference", "model": CLONE})
    assert status == 0, out
    result = json.loads(out)
    assert result["model"]["source"] == "huggingface"
    assert result["model"]["params_b"] == pytest.approx(8.03, abs=0.01)
    assert len(hub.requests) == 2  # config.json and the parameter counts, once


def test_a_stack_model_is_looked_up_too(hub: FakeHub) -> None:
    status, out = estimate(
        {
            "task": "inference",
            "model": "llama-3.1-8b",
            "extra_models": [{"model": CLONE}],
            "gpus": ["h100-sxm"],
        }
    )
    assert status == 0, out
    assert [part["model"]["source"] for part in json.loads(out)["stack"]] == ["huggingface"]


@pytest.mark.parametrize(
    ("question", "lang", "said"),
    [
        (f"{CLONE} на 4090 48", "ru", "4090 48"),
        (f"https://huggingface.co/{CLONE}/tree/main on an h100", "en", "H100"),
    ],
)
def test_ask_sizes_a_looked_up_model(hub: FakeHub, question: str, lang: str, said: str) -> None:
    status, out = ask(question, lang)
    assert status == 0, out
    assert said in out and "Llama-Clone-8B" in out, out


def test_a_catalogue_model_never_reaches_the_hub(hub: FakeHub) -> None:
    assert estimate({"task": "inference", "model": "meta-llama/Llama-3.1-8B"})[0] == 0
    assert ask("qwen3 8b на 4090", "ru")[0] == 0
    assert hub.requests == []


@pytest.mark.parametrize(
    ("lang", "words"), [("ru", "нет на Hugging Face"), ("en", "No model acme/no-such-model on Hugging Face")]
)
def test_not_found_is_one_line_in_the_language_asked(hub: FakeHub, lang: str, words: str) -> None:
    status, out = ask("acme/no-such-model на 4090", lang)
    assert status == EXIT_INVALID
    assert out.count("\n") == 1 and words in out, out


@pytest.mark.parametrize(
    ("lang", "words"),
    [("ru", "связаться с Hugging Face за 3 с"), ("en", "Could not reach Hugging Face within 3 s")],
)
def test_offline_is_one_line_and_exit_1(monkeypatch: pytest.MonkeyPatch, lang: str, words: str) -> None:
    with FakeHub({}) as gone:
        url = gone.url  # stopped on leaving: nothing listens there any more
    monkeypatch.setenv("GPUFIT_HF_ENDPOINT", url)
    monkeypatch.delenv(HF_LOOKUP_ENV, raising=False)
    status, out = ask(f"{CLONE} на 4090", lang)
    assert status == EXIT_UNAVAILABLE
    assert out.count("\n") == 1 and words in out, out
    status, out = estimate({"task": "inference", "model": CLONE})
    assert status == EXIT_UNAVAILABLE and json.loads(out)["field"] == "model"


def test_the_look_up_can_be_turned_off(hub: FakeHub, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(HF_LOOKUP_ENV, "0")
    status, out = estimate({"task": "inference", "model": CLONE})
    assert status == EXIT_INVALID and json.loads(out)["field"] == "model"
    assert hub.requests == []


def test_python_m_core_ask_looks_up_by_default(hub: FakeHub) -> None:
    """As a caller runs it: a subprocess, the endpoint from the environment."""
    import os

    env = {**os.environ, "GPUFIT_HF_ENDPOINT": hub.url}
    env.pop(HF_LOOKUP_ENV, None)
    done = subprocess.run(
        [sys.executable, "-m", "core", "ask", f"{CLONE} int4 8k", "--lang", "en"],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env=env,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "Llama-Clone-8B" in done.stdout and len(hub.requests) == 2
