"""The launch command (core.advice.launch): every option it writes is in the engine's documented list
(core/data/engine_flags.toml), and the command says what was sized."""

from __future__ import annotations

import itertools
import json
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from core.advice.launch import engine_flags, llama_server, load_flags
from core.contract import KvPrecision, LaunchCommand, Result
from core.errors import CatalogError
from core.layouts.launch import command_text, launch_plain
from core.sizing.estimate import estimate

ROOT = Path(__file__).resolve().parents[2]

REQUESTS = [
    {"task": "inference", "model": "llama-3.1-8b"},
    {
        "task": "inference",
        "model": "llama-3.1-8b",
        "engine": "vllm",
        "concurrency": 16,
        "context_length": 32768,
    },
    {
        "task": "inference",
        "model": "llama-3.1-70b",
        "engine": "vllm",
        "gpus": ["h100-sxm"],
        "num_gpus": 4,
        "kv_cache_precision": "fp8",
        "precision": "fp8",
    },
    {"task": "inference", "model": "llama-3.1-70b", "engine": "vllm", "precision": "awq-int4"},
    {"task": "inference", "model": "llama-3.1-8b", "engine": "vllm", "gpus": ["t4"], "precision": "fp16"},
    {
        "task": "inference",
        "model": "llama-3.1-8b",
        "precision": "q4_k_m",
        "concurrency": 4,
        "kv_cache_precision": "int8",
    },
    {"task": "inference", "model": "qwen3-30b-a3b", "precision": "q8_0"},
    {"task": "inference", "model": "llama-3.1-8b", "precision": "nf4"},
    {"task": "inference", "model": "llama-3.1-8b", "attention": "eager", "precision": "int8"},
    {"task": "inference", "model": "gpt-oss-120b", "engine": "vllm"},
    {"task": "training", "model": "llama-3.1-8b", "num_gpus": 4},
    {"task": "training", "model": "llama-3.1-8b", "method": "qlora"},
    {"task": "inference", "model": "llama-3.1-8b", "requests_per_second": 20},
]


def _commands(req: dict) -> list[LaunchCommand]:
    return estimate(req).launch_commands


@pytest.mark.parametrize("req", REQUESTS, ids=lambda r: json.dumps(r)[:60])
def test_every_flag_is_documented(req: dict) -> None:
    flags = engine_flags()
    commands = _commands(req)
    assert commands, req
    for command in commands:
        for arg in [*command.args, *command.env]:
            assert flags.documented(command.engine, arg.flag), (command.engine, arg.flag)


def test_offload_flags_documented() -> None:
    """The llama.cpp builder takes the offload values another part sizes (-ngl N, --n-cpu-moe N)."""
    command = llama_server("m.gguf", 8192, 1, KvPrecision.FP16, gpu_layers=30, n_cpu_moe=20)
    args = {a.flag: a.value for a in command.args}
    assert args["-ngl"] == "30" and args["--n-cpu-moe"] == "20"
    assert all(engine_flags().documented("llama.cpp", a.flag) for a in command.args)


def _args(command: LaunchCommand) -> dict[str, str | None]:
    return {a.flag: a.value for a in command.args}


def test_vllm_command_as_sized() -> None:
    result = estimate(REQUESTS[2])
    (command,) = result.launch_commands
    args = _args(command)
    assert command.program == "vllm serve" and command.model == "meta-llama/Llama-3.1-70B"
    assert args["--tensor-parallel-size"] == "4"
    assert args["--kv-cache-dtype"] == "fp8"
    assert args["--quantization"] == "fp8"
    assert args["--max-model-len"] == str(result.request.context_length)
    assert args["--gpu-memory-utilization"] == "0.9"


def test_vllm_awq_and_half() -> None:
    assert _args(_commands(REQUESTS[3])[0])["--quantization"] == "awq"
    assert _args(_commands(REQUESTS[4])[0])["--dtype"] == "half"  # a T4 has no bf16
    assert "--quantization" not in _args(_commands(REQUESTS[9])[0])  # gpt-oss ships its MXFP4


def test_llama_cpp_context_is_per_slot_times_slots() -> None:
    server, ollama = _commands(REQUESTS[5])
    args = _args(server)
    assert server.engine == "llama.cpp" and server.model_is_placeholder
    assert args["-c"] == str(4 * 4096) and args["--parallel"] == "4"
    assert args["-ctk"] == args["-ctv"] == "q8_0"
    assert args["-m"].endswith("-Q4_K_M.gguf")
    assert ollama.engine == "ollama" and _args(ollama)["num_ctx"] == "4096"
    assert {a.flag: a.value for a in ollama.env} == {"OLLAMA_NUM_PARALLEL": "4"}


def test_transformers_snippet_quantizes() -> None:
    (command,) = _commands(REQUESTS[7])
    assert "load_in_4bit=True" in (_args(command)["quantization_config"] or "")
    text = command_text(command)
    compile(text, "<snippet>", "exec")  # valid Python
    (eager,) = _commands(REQUESTS[8])
    assert _args(eager)["attn_implementation"] == '"eager"'


def test_training_launch() -> None:
    (command,) = _commands(REQUESTS[10])
    args = _args(command)
    assert command.engine == "accelerate" and args["--num_processes"] == "4"
    assert "--use_fsdp" in args


def test_a_load_raises_the_batch_to_the_requests_in_flight() -> None:
    result = estimate(REQUESTS[12])
    assert result.latency is not None and result.latency.in_flight
    (command,) = result.launch_commands
    assert int(_args(command)["--max-num-seqs"] or 0) >= min(
        int(result.latency.in_flight), result.latency.max_in_flight or 1
    )


def test_no_command_without_a_checkpoint() -> None:
    assert estimate({"task": "inference", "model": "7B"}).launch_commands == []
    assert estimate({"task": "image_generation", "model": "sdxl"}).launch_commands == []


@pytest.mark.parametrize(
    "req", [r for r in REQUESTS if r.get("task") == "inference"], ids=lambda r: str(r)[:50]
)
def test_shell_text_splits_back_into_the_arguments(req: dict) -> None:
    for command in _commands(req):
        if command.kind != "shell":
            continue
        words = shlex.split(command_text(command).replace("\\\n", " "))
        assert " ".join(words).startswith(command.program)
        for arg in command.args:
            i = words.index(arg.flag)
            if arg.value is not None:
                assert words[i + 1] == arg.value


def test_message_fits_telegram() -> None:
    for req, lang in itertools.product(REQUESTS, ("ru", "en")):
        assert len(launch_plain(estimate(req), lang)) < 3500


def test_result_json_round_trip() -> None:
    result = estimate(REQUESTS[1])
    again = Result.model_validate_json(result.model_dump_json())
    assert again.launch_commands == result.launch_commands and again.latency == result.latency


def test_bad_flag_row_named(tmp_path: Path) -> None:
    text = (ROOT / "core" / "data" / "engine_flags.toml").read_text()
    bad = tmp_path / "f.toml"
    bad.write_text(text.replace('flag = "--max-model-len"', 'flag = "max model len"'))
    with pytest.raises(CatalogError, match=r"flag\.0\.flag"):
        load_flags(bad)
    bad.write_text(
        text
        + '\n[[flag]]\nengine = "vllm"\nflag = "--dtype"\nmeaning_en = "x"\nmeaning_ru = "x"\nsource = "x"\n'
    )
    with pytest.raises(CatalogError, match="listed twice"):
        load_flags(bad)


def test_cli_ask_command() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "core", "ask", "--lang", "en", "--command", "llama 3.1 8b q4_k_m on rtx 4090"],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert "llama-server" in done.stdout and "-ngl 999" in done.stdout
    assert "number of server slots" in done.stdout or "layers to store in VRAM" in done.stdout


def test_cli_json_has_the_fields() -> None:
    req = {"task": "inference", "model": "llama-3.1-8b", "requests_per_second": 10, "ttft_target_s": 2}
    done = subprocess.run(
        [sys.executable, "-m", "core", "estimate", "--json"],
        input=json.dumps(req),
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout)
    assert out["request"]["requests_per_second"] == 10 and out["request"]["ttft_target_s"] == 2
    assert out["latency"]["servers"] >= 1 and out["launch_commands"][0]["engine"] == "vllm"
    assert all("ttft_s" in t for t in out["throughput"])


def test_no_transformers_command_for_another_checkpoint() -> None:
    """AWQ under transformers needs an AWQ checkpoint, not the one named: no command rather than a
    wrong one; a format the checkpoint ships in (gpt-oss MXFP4) gets its snippet."""
    awq = {"task": "inference", "model": "llama-3.1-8b", "precision": "awq-int4", "engine": "transformers"}
    assert estimate(awq).launch_commands == []
    assert estimate({"task": "inference", "model": "gpt-oss-20b", "engine": "transformers"}).launch_commands


def test_offload_fields_reach_the_commands() -> None:
    """A request offloading to RAM (`gpu_layers`, `n_cpu_moe`) gets them in the llama.cpp and Ollama
    commands."""
    from core.advice.launch import launch_commands
    from core.catalogue.catalog import default_catalog
    from core.formulas.params import arch_of

    result = estimate({**REQUESTS[6], "gpu_layers": 20, "n_cpu_moe": 12})
    spec = default_catalog().models["qwen3-30b-a3b"]
    commands = launch_commands(result, spec, arch_of(spec))
    assert _args(commands[0])["-ngl"] == "20" and _args(commands[0])["--n-cpu-moe"] == "12"
    # Ollama places whole layers only: no Modelfile for an expert split it cannot reproduce
    assert [c.engine for c in commands] == ["llama.cpp"]
    layers_only = estimate({**REQUESTS[6], "gpu_layers": 20})
    server, ollama = launch_commands(layers_only, spec, arch_of(spec))
    assert _args(server)["-ngl"] == "20" and _args(ollama)["num_gpu"] == "20"
