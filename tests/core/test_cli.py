"""The command line as callers use it: JSON on stdin, the answer on stdout, the exit status. Run in
this process (`tests.core.cli_runner.cli`); the smoke tests at the end start `python -m core`."""

import json

from tests.core.cli_runner import cli, cli_process


def test_estimate_json_round_trip() -> None:
    done = cli("estimate", "--json", stdin=json.dumps({"task": "inference", "model": "llama 3.1 8b"}))
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    assert result["model"]["id"] == "llama-3.1-8b"
    assert result["request"]["precision"] == "bf16"
    assert sum(result["breakdown"].values()) == result["total_bytes"]
    assert "overhead" in result["breakdown"]


def test_invalid_request_exits_2_with_the_field() -> None:
    done = cli(
        "estimate",
        "--json",
        stdin=json.dumps({"task": "inference", "model": "llama-3.1-8b", "concurrency": 0}),
    )
    assert done.returncode == 2
    assert json.loads(done.stdout)["field"] == "concurrency"


def test_unknown_model_and_bad_json_exit_2() -> None:
    unknown = cli(
        "estimate", "--json", stdin=json.dumps({"task": "inference", "model": "no such model at all"})
    )
    assert unknown.returncode == 2 and json.loads(unknown.stdout)["field"] == "model"
    broken = cli("estimate", "--json", stdin="{not json")
    assert broken.returncode == 2 and json.loads(broken.stdout)["field"] is None


def test_human_estimate_without_json_flag() -> None:
    done = cli("estimate", stdin=json.dumps({"task": "inference", "model": "llama-3.1-8b"}))
    assert done.returncode == 0 and "GiB" in done.stdout and "weights" in done.stdout


def test_catalogue_listings() -> None:
    gpus = json.loads(cli("gpus", "--json").stdout)
    assert any(g["id"] == "h100-sxm" for g in gpus)
    models = json.loads(cli("models", "--json").stdout)
    assert any(m["id"] == "llama-3.1-8b" for m in models)
    assert "GiB" in cli("gpus").stdout
    assert "llama-3.1-8b" in cli("models").stdout


def test_ask_answers_in_plain_text() -> None:
    done = cli("ask", "llama 3 8b int4 8k context", "--lang", "en")
    assert done.returncode == 0, done.stderr
    lead, need = done.stdout.splitlines()[:2]
    assert lead.startswith("✅ Fits on 1× RTX 4090 48 GB") and "₽/h" in lead and "tok/s" in lead
    assert need.startswith("Needs ") and " GB per card of 48.0 GB" in need
    assert "GiB" not in done.stdout  # one unit, as cards are named


def test_ask_unparseable_exits_2() -> None:
    done = cli("ask", "", "--lang", "en")
    assert done.returncode == 2


def test_ask_shows_what_the_parser_assumed() -> None:
    """`ask` answers through `understand`, so the parser's own notes reach the answer."""
    done = cli("ask", "fine-tune llama 3.1 8b", "--lang", "en")
    assert done.returncode == 0, done.stderr
    assert "Fine-tuning without a method: assumed LoRA" in done.stdout
    russian = cli("ask", "llama 3 8b gguf", "--lang", "ru")
    assert russian.returncode == 0, russian.stderr
    assert "GGUF без указания типа" in russian.stdout


def test_ask_parse_error_is_rendered_in_the_asked_language() -> None:
    done = cli("ask", "сколько памяти", "--lang", "en")
    assert done.returncode == 2
    assert "Which model?" in done.stdout and "Traceback" not in done.stderr


def test_deeply_nested_json_exits_2_with_the_json_error() -> None:
    """json.loads raises RecursionError on deep nesting: an answer, never a traceback."""
    for text in ("[" * 100_000, '{"task": "inference", "model": ' + "[" * 100_000):
        done = cli("estimate", "--json", stdin=text)
        assert done.returncode == 2 and "Traceback" not in done.stderr
        assert json.loads(done.stdout) == {"error": "request is nested too deeply", "field": None}


def test_huge_numbers_exit_2_naming_the_field() -> None:
    """`1e400` reads as infinity (OverflowError territory): the contract refuses it by field."""
    googol4 = "1" + "0" * 400  # 10^400
    cases = {
        '{"task": "inference", "model": "llama-3.1-8b", "concurrency": 1e400}': "concurrency",
        '{"task": "inference", "model": {"params_b": 1e400}}': "model.params_b",
        '{"task": "inference", "model": {"params_b": 7, "hidden_size": 1e400}}': "model.hidden_size",
        '{"task": "training", "model": "llama-3.1-8b", "seq_len": -1e400}': "seq_len",
        '{"task": "inference", "model": "llama-3.1-8b", "concurrency": ' + googol4 + "}": "concurrency",
        '{"task": "inference", "model": {"params_b": 7, "vocab_size": ' + googol4 + "}}": "model.vocab_size",
    }
    for text, field in cases.items():
        done = cli("estimate", "--json", stdin=text)
        assert done.returncode == 2 and "Traceback" not in done.stderr, (text[:80], done.stderr)
        assert json.loads(done.stdout)["field"] == field, text[:80]


def test_numbers_that_are_not_json_exit_2() -> None:
    """NaN / Infinity literals are not JSON; an integer past Python's digit limit is out of range."""
    for text in (
        '{"task": "inference", "model": "llama-3.1-8b", "concurrency": NaN}',
        '{"task": "inference", "model": {"params_b": Infinity}}',
        '{"task": "inference", "model": "llama-3.1-8b", "concurrency": 1' + "0" * 5000 + "}",
    ):
        done = cli("estimate", "--json", stdin=text)
        assert done.returncode == 2 and "Traceback" not in done.stderr
        error = json.loads(done.stdout)
        assert error["field"] is None and "out of range" in error["error"]


def test_oversized_request_exits_2() -> None:
    done = cli("estimate", "--json", stdin='{"task": "inference", "model": "' + "x" * 1_100_000 + '"}')
    assert done.returncode == 2 and "larger than" in json.loads(done.stdout)["error"]


def test_inconsistent_architecture_and_too_many_gpus_exit_2_naming_the_field() -> None:
    cases = {
        json.dumps({"task": "inference", "model": {"params_b": 7, "layers": 32, "hidden_size": 40_000}}): (
            "model.hidden_size"
        ),
        json.dumps({"task": "inference", "model": {"params_b": 7, "layers": 4}, "num_gpus": 8}): "num_gpus",
    }
    for text, field in cases.items():
        done = cli("estimate", "--json", stdin=text)
        assert done.returncode == 2 and json.loads(done.stdout)["field"] == field


# --- smoke tests of the entry point itself: `python -m core` in a process of its own


def test_python_m_core_estimates_as_a_subprocess() -> None:
    done = cli_process("estimate", "--json", stdin=json.dumps({"task": "inference", "model": "llama-3.1-8b"}))
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["model"]["id"] == "llama-3.1-8b"
    usage = cli_process("estimate", "--no-such-flag")
    assert usage.returncode == 2 and "usage: python -m core" in usage.stderr
