"""Pasted logs read into their measurements (core.logs), from real excerpts of public GitHub issues
(tests/core/log_excerpts.py, each with its URL), and answered: the card, the need, what to change,
what to rent. Sizes as the tools print them (GiB = 2^30; llama.cpp and nvidia-smi MiB = 2^20)."""

from __future__ import annotations

import io
import json
import re
from typing import Any

import pytest

from core.catalogue.catalog import default_catalog
from core.cli import main
from core.logs import MAX_LOG_CHARS, advice, parse, read_log
from core.logs.advice import advise_log
from core.logs.words import answer_log
from tests.core import log_excerpts as X

try:  # the regular expression parser (Python 3.11+ names it re._parser)
    import re._parser as sre  # type: ignore[import-not-found]
except ImportError:  # pragma: no cover
    import sre_parse as sre  # type: ignore[no-redef]

GiB, MiB = 1 << 30, 1 << 20
CATALOG = default_catalog()


def near(value: int | None, expected: float, unit: int = GiB, within: float = 0.006) -> bool:
    return value is not None and abs(value / unit - expected) <= within * max(1, abs(expected))


# --- reading, per format ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("excerpt", "total", "used", "failed"),
    [
        (X.TORCH_4090, 23.65, 23.60, 22 / 1024),
        (X.TORCH_5090, 31.47, 18.73, 22.78),
        (X.TORCH_TYPO, 4.00, 3.44, 32 / 1024),
    ],
)
def test_pytorch_oom_is_read(excerpt: X.Excerpt, total: float, used: float, failed: float) -> None:
    r = read_log(excerpt.text)
    assert r is not None and r.kind == "torch_oom" and r.failure == "oom"
    assert near(r.total_bytes, total) and near(r.used_bytes, used) and near(r.failed_bytes, failed)


@pytest.mark.parametrize(
    ("excerpt", "total", "allocated", "failed"),
    [
        (X.LEGACY_T4, 14.76, 8.77, 2.87),
        (X.LEGACY_V100, 15.78, 14.25, 236 / 1024),
        (X.LEGACY_1080TI, 10.91, 9.18, 1006 / 1024),
    ],
)
def test_older_pytorch_oom_is_read(excerpt: X.Excerpt, total: float, allocated: float, failed: float) -> None:
    r = read_log(excerpt.text)
    assert r is not None and r.kind == "torch_oom_legacy" and r.failure == "oom"
    assert near(r.total_bytes, total) and near(r.allocated_bytes, allocated) and near(r.failed_bytes, failed)


@pytest.mark.parametrize(
    ("excerpt", "name", "count", "used_mib", "total_mib"),
    [
        (X.SMI_2X4090, "NVIDIA GeForce RTX 4090", 2, 507, 24564),
        (X.SMI_3090, "NVIDIA GeForce RTX 3090", 1, 15005, 24576),
        (X.SMI_P100, "Tesla P100-PCIE...", 1, 0, 16384),
        (X.SMI_5090, "NVIDIA GeForce RTX 5090", 2, 29659, 32607),
    ],
)
def test_nvidia_smi_is_read(excerpt: X.Excerpt, name: str, count: int, used_mib: int, total_mib: int) -> None:
    r = read_log(excerpt.text)
    assert r is not None and r.kind == "nvidia_smi" and r.failure is None
    assert r.gpu_name == name and r.gpu_count == count == len(r.gpus)
    assert (r.gpus[0].used_bytes, r.gpus[0].total_bytes) == (used_mib * MiB, total_mib * MiB)


def test_vllm_logs_are_read() -> None:
    short = read_log(X.VLLM_3090_29K.text)
    assert short is not None and short.kind == "vllm" and short.failure == "kv_too_small"
    assert (short.context_length, short.kv_tokens, short.memory_utilization) == (29000, 23648, 0.9)
    assert (
        near(short.weights_bytes, 14.9888)
        and near(short.kv_cache_bytes, 2.89)
        and near(short.total_bytes, 23.58)
    )
    alpaca = read_log(X.VLLM_ALPACA.text)
    assert (
        alpaca is not None
        and alpaca.failure == "kv_too_small"
        and alpaca.model == "/home/***/***/models/alpaca-2"
    )
    assert (alpaca.context_length, alpaca.kv_tokens) == (4096, 3664)
    marlin = read_log(X.VLLM_MARLIN_3090.text)
    assert marlin is not None and marlin.failure is None and marlin.memory_utilization == 0.99
    assert (
        near(marlin.weights_bytes, 21.21)
        and near(marlin.kv_cache_bytes, 1.57)
        and near(marlin.activation_bytes, 0.37)
    )
    v1 = read_log(X.VLLM_V1_70B.text)
    assert v1 is not None and v1.model == "neuralmagic/Meta-Llama-3.1-70B-Instruct-quantized.w8a8"
    assert v1.context_length == 2048 and v1.kv_tokens == int(2048 * 10.79) and near(v1.weights_bytes, 67.7229)


def test_llama_cpp_logs_are_read() -> None:
    two = read_log(X.LLAMA_TWO_GPUS.text)
    assert two is not None and two.kind == "llama_cpp" and two.failure is None and two.gpu_count == 2
    assert (
        two.layers == (41, 41) and two.context_length == 4096 and two.gpu_name == "NVIDIA GeForce RTX 4070 Ti"
    )
    assert (two.weights_bytes, two.kv_cache_bytes) == (round(5434.38 * MiB), 1536 * MiB)  # device 0
    apertus = read_log(X.LLAMA_APERTUS_OOM.text)
    assert apertus is not None and apertus.failure == "oom" and near(apertus.failed_bytes, 14136.04, MiB)
    assert apertus.model == "Apertus-70B-Instruct-2509-IQ4_XS.gguf" and apertus.precision == "iq4_xs"
    weights = read_log(X.LLAMA_WEIGHTS_OOM.text)
    assert weights is not None and near(weights.failed_bytes, 144817.04, MiB)
    device4 = read_log(X.LLAMA_OLLAMA_DEVICE4.text)
    assert device4 is not None and device4.gpu_count == 5 and device4.failed_bytes == 144 * MiB


# --- the answer: the card, the need, what to change, what to rent -----------------------------------


def test_pytorch_oom_names_the_card_the_need_and_asks_the_model() -> None:
    a = advise_log(read_log(X.TORCH_5090.text), CATALOG)  # type: ignore[arg-type]
    assert [g.id for g in a.cards] == ["rtx5090"]
    assert a.need == "at_least" and near(a.need_bytes, 18.73 - 9.35 + 22.78)
    assert a.rent is not None and a.rent.gpu.usable_bytes >= a.need_bytes  # type: ignore[operator]
    en = answer_log(X.TORCH_5090.text, CATALOG, "en").text
    assert "RTX 5090" in en and "Which model" in en and "What to rent" in en
    ru = answer_log(X.TORCH_5090.text, CATALOG, "ru").text
    assert "Какая это модель" in ru and "Что арендовать" in ru


def test_a_24_gb_card_is_named_as_both_cards_of_that_memory() -> None:
    a = advise_log(read_log(X.TORCH_4090.text), CATALOG)  # type: ignore[arg-type]
    assert {g.id for g in a.cards} == {"rtx4090", "rtx3090"}  # CUDA's 23.65 GiB cannot tell them apart


def test_older_oom_is_sized_and_fragmentation_named() -> None:
    a = advise_log(read_log(X.LEGACY_T4.text), CATALOG)  # type: ignore[arg-type]
    assert [g.id for g in a.cards] == ["t4"] and near(a.need_bytes, 8.77 + 2.87)
    assert [x.code for x in a.actions] == ["expandable_segments"]  # 4.94 GiB cached, 2.87 GiB asked


def test_nvidia_smi_rents_as_many_cards_each_holding_the_busiest() -> None:
    a = advise_log(read_log(X.SMI_5090.text), CATALOG)  # type: ignore[arg-type]
    assert [g.id for g in a.cards] == ["rtx5090"] and a.need == "measured" and a.need_bytes == 30803 * MiB
    assert a.rent is not None and a.rent.count >= 2 and a.rent.gpu.usable_bytes > 30803 * MiB


def test_a_card_the_catalogue_lacks_is_not_named_as_another() -> None:
    a = advise_log(read_log(X.SMI_P100.text), CATALOG)  # type: ignore[arg-type]
    assert a.cards == ()  # 16384 MiB is near a V100's 16160 MiB, but the table says P100
    assert "Tesla P100" in answer_log(X.SMI_P100.text, CATALOG, "en").text


def test_vllm_short_kv_cache_is_sized_from_its_own_numbers() -> None:
    a = advise_log(read_log(X.VLLM_3090_29K.text), CATALOG)  # type: ignore[arg-type]
    per_token = 2.89 * GiB / 23648
    assert a.need == "measured" and near(a.need_bytes, (23.58 * 0.9 - 2.89) + per_token * 29000 / GiB)
    codes = {x.code: x.params for x in a.actions}
    assert codes["max_model_len"] == {"tokens": "23648"}
    assert codes["gpu_memory_utilization"] == {"value": "0.93"}  # 0.9 + 5352 tokens' bytes / 23.58 GiB
    assert a.rent is not None


def test_vllm_names_the_model_and_its_mitigations_are_the_estimators() -> None:
    answer = answer_log(X.VLLM_V1_70B.text, CATALOG, "en")
    a = answer.advice
    assert a is not None and a.model is not None and a.model.id == "llama-3.1-70b"
    assert a.result is not None and a.result.request.precision == "int8"  # "quantized.w8a8"
    assert a.result.mitigations and "Llama 3.1 70B" in answer.text
    assert answer.offer is not None


def test_vllm_without_numbers_still_says_the_context_that_fits() -> None:
    answer = answer_log(X.VLLM_ALPACA.text, CATALOG, "ru")
    assert "--max-model-len 3664" in answer.text and "alpaca-2" in answer.text


def test_llama_cpp_oom_tells_to_lower_ngl_and_rents_the_need() -> None:
    a = advise_log(read_log(X.LLAMA_WEIGHTS_OOM.text), CATALOG)  # type: ignore[arg-type]
    assert a.need == "at_least" and near(a.need_bytes, 144817.04 / 1024)
    assert a.rent is not None and a.rent.gpu.usable_bytes > a.need_bytes  # type: ignore[operator]
    assert [x.code for x in a.actions] == ["n_gpu_layers_lower"]
    device4 = advise_log(read_log(X.LLAMA_OLLAMA_DEVICE4.text), CATALOG)  # type: ignore[arg-type]
    assert device4.need_bytes is None and device4.rent is None  # 144 MiB on device 4 says nothing of the run


def test_llama_cpp_that_fits_has_its_buffers_read() -> None:
    text = answer_log(X.LLAMA_TWO_GPUS.text, CATALOG, "en").text
    assert "Layers on the GPU: 41 of 41" in text and "KV cache 1.5 GB" in text


@pytest.mark.parametrize("lang", ["ru", "en"])
def test_every_answer_fits_a_phone_message(lang: str) -> None:
    for excerpt in X.ALL.values():
        assert len(answer_log(excerpt.text, CATALOG, lang).text) <= 1500


# --- defensive reading ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    "text",
    [
        "",
        "привет, как дела?",
        "x" * 100_000,
        "|" * 100_000,
        "Tried to allocate " * 6000,
        "1" * 100_000 + " GiB",
        ("| 0 " + " " * 50) * 2000,
        "llama_ " + "CUDA0 buffer size = " * 5000,
    ],
)
def test_garbage_gets_the_unknown_reply_or_a_partial_reading(text: str) -> None:
    answer = answer_log(text, CATALOG, "en")
    assert answer.advice is None or answer.advice.reading is not None
    if answer.advice is None:
        assert "did not recognise" in answer.text


def test_a_huge_text_is_cut_to_its_head_and_tail() -> None:
    """A real OOM at the end of 1 MB of noise is still found: the tail is kept, the middle dropped."""
    text = "noise line\n" * 100_000 + X.TORCH_5090.text
    assert len(text) > 5 * MAX_LOG_CHARS
    r = read_log(text)
    assert r is not None and r.kind == "torch_oom"


def _repeats(tree: Any) -> list[tuple[int, bool]]:
    """(max, whether it holds another repeat) of every repeat in a parsed pattern."""
    out = []
    for op, arg in tree:
        if op in (sre.MAX_REPEAT, sre.MIN_REPEAT):
            inner = _repeats(arg[2])
            out += [(arg[1], bool(inner)), *inner]
        elif op is sre.SUBPATTERN:
            out += _repeats(arg[-1])
        elif op is sre.BRANCH:
            for branch in arg[1]:
                out += _repeats(branch)
    return out


PATTERNS = [
    *(rule.pattern for rule in parse.RULES),
    parse.ANY_NEEDLE, parse.SMI_GPU, parse.SMI_MEMORY, parse.SMI_PROCESS, parse.SMI_PROCESS_MEMORY,
    parse.GGUF_TYPE, advice._HUB_CACHE, advice._QUANT_TAIL, advice._GGUF_TAIL, advice._NAME_PRECISION,
]  # fmt: skip


@pytest.mark.parametrize("pattern", PATTERNS, ids=lambda p: p.pattern[:40])
def test_every_pattern_is_linear_by_construction(pattern: re.Pattern[str]) -> None:
    """No unbounded quantifier, and a repeat inside a repeat only under a small bound: a pattern
    tried at each position of a line costs at most a constant there, so reading is linear in the
    text (lines are cut to MAX_LINE_CHARS, the text to MAX_LOG_CHARS)."""
    for high, nested in _repeats(sre.parse(pattern.pattern)):
        assert high != sre.MAXREPEAT, pattern.pattern
        assert not nested or high <= 4, pattern.pattern


def test_texts_of_100k_characters_are_read() -> None:
    """Adversarial 100,000-character texts (runs of what the patterns look for) are read to the end."""
    shapes = [
        "a" * 1999 + "\n",
        "| 0  NVIDIA " + " " * 1980 + "|\n",
        "Tried to allocate 1" + "1" * 1980 + "\n",
    ]
    for shape in shapes:
        read_log(shape * 50)
    r = read_log("x" * 99_000 + "\n" + X.LEGACY_T4.text)
    assert r is not None and r.kind == "torch_oom_legacy"


# --- the CLI ---------------------------------------------------------------------------------------


def test_cli_log_reads_stdin_as_json() -> None:
    out = io.StringIO()
    assert main(["log", "--json", "--lang", "en"], stdin=io.StringIO(X.LEGACY_T4.text), stdout=out) == 0
    data = json.loads(out.getvalue())
    assert data["reading"]["kind"] == "torch_oom_legacy" and data["cards"] == ["t4"]
    assert data["offer"] and data["actions"][0]["code"] == "expandable_segments"


def test_cli_log_unknown_format_exits_2_with_the_clear_reply() -> None:
    out = io.StringIO()
    assert main(["log"], stdin=io.StringIO("just words"), stdout=out) == 2
    assert "Не узнал формат" in out.getvalue()


def test_cli_ask_with_a_pasted_log_answers_the_log() -> None:
    out = io.StringIO()
    assert main(["ask", X.VLLM_3090_29K.text, "--lang", "en"], stdout=out) == 0
    assert "--max-model-len 23648" in out.getvalue()


def test_nvidia_smi_processes_are_read_by_size() -> None:
    """The processes table (nvidia-smi 550's layout, the columns of the excerpts above): each row's
    PID, name and memory; a name of 200 characters with spaces does not slow the reader."""
    long_name = "/opt/my env/bin/python3 " * 8
    table = (
        X.SMI_3090.text
        + "\n|    0   N/A  N/A         12345      C   /usr/bin/python3                          15000MiB |"
        + f"\n|    0   N/A  N/A           777      G   {long_name}   4MiB |"
    )
    r = read_log(table)
    assert r is not None and r.processes == (
        (12345, "/usr/bin/python3", 15000 * MiB),
        (777, long_name.strip(), 4 * MiB),
    )
    a = advise_log(r, CATALOG)
    from core.logs.advice import record

    assert record(a)["reading"]["processes"] == [15000 * MiB, 4 * MiB]  # type: ignore[index]  # sizes only


def test_vllm_v1_says_the_kv_it_lacked_and_the_context_that_fits() -> None:
    """vLLM V1's own error: 24.0 GiB of KV for 262,144 tokens, 3.18 GiB available, 34,736 tokens fit.
    Qwen3-Coder 30B-A3B keeps 48 layers × 4 KV heads × 128 × 2 (K, V) × 2 bytes = 96 KiB a token: the
    estimator's KV for that context is the 24 GiB vLLM printed."""
    answer = answer_log(X.VLLM_V1_KV_NEEDED.text, CATALOG, "en")
    a = answer.advice
    assert a is not None and a.reading.failure == "kv_too_small" and a.reading.kv_tokens == 34736
    assert near(a.reading.kv_needed_bytes, 24.0) and near(a.short_bytes, 24.0 - 3.18)
    assert a.model is not None and a.model.id == "qwen3-coder-30b-a3b"
    assert a.result is not None and a.result.request.precision == "fp8"  # "…-Instruct-FP8"
    assert near(a.result.breakdown["kv_cache"], 24.0, within=0.01)
    assert "--max-model-len 34736" in answer.text and answer.offer is not None  # the estimate's offer


def test_one_line_naming_an_oom_is_a_question_not_a_log() -> None:
    from core.logs import is_pasted_log

    assert not is_pasted_log("у меня CUDA out of memory на 4090 с llama 3 8b, что делать?")
    assert not is_pasted_log("vllm serve llama 3.1 8b на h100?")  # no log's mark at all
    assert is_pasted_log("Traceback (most recent call last):\n  File 'x.py'\nKeyError: 1")  # unknown: told so
    assert is_pasted_log(X.LEGACY_T4.text)  # one line, read


def test_the_suggested_ngl_fits_and_one_more_layer_does_not() -> None:
    """A llama.cpp log in its own line format (a synthetic case: no public excerpt has the card, the
    buffers and the failure together) on an RTX 3090: 81 layers of 259 MiB, 2.5 GiB of KV cache, the
    1.2 GiB compute buffer failed. The -ngl suggested fits with the KV cache, that buffer and the
    CUDA context; one layer more does not."""
    from core.formulas.overhead import CUDA_CONTEXT_BYTES

    log = (
        "  Device 0: NVIDIA GeForce RTX 3090, compute capability 8.6, VMM: yes\n"
        "load_tensors: offloaded 81/81 layers to GPU\n"
        "load_tensors:        CUDA0 model buffer size = 21000.00 MiB\n"
        "llama_kv_cache_unified:      CUDA0 KV buffer size =  2560.00 MiB\n"
        "ggml_backend_cuda_buffer_type_alloc_buffer: allocating 1200.00 MiB on device 0: cudaMalloc failed: "
        "out of memory\n"
    )
    a = advise_log(read_log(log), CATALOG)  # type: ignore[arg-type]
    assert [g.id for g in a.cards] == ["rtx3090"]
    (action,) = a.actions
    layers = int(action.params["layers"])
    card = CATALOG.gpus["rtx3090"].usable_bytes
    held = (2560 + 1200) * MiB + CUDA_CONTEXT_BYTES

    def fits(n: int) -> bool:
        return n * 21000 * MiB / 81 + held <= card

    assert action.code == "n_gpu_layers" and fits(layers) and not fits(layers + 1)
    assert "-ngl " + str(layers) in answer_log(log, CATALOG, "en").text


@pytest.mark.parametrize(
    ("excerpt", "model", "precision", "within"),
    [
        # vllm-project/vllm#10517 (comment 2024-12-02): "RTX 3090, MODEL: meta-llama/Llama-3.1-8B-Instruct"
        (X.VLLM_3090_29K, "llama-3.1-8b", "bf16", 0.005),
        # vllm-project/vllm#12569: neuralmagic/Meta-Llama-3.1-70B-Instruct-quantized.w8a8
        (X.VLLM_V1_70B, "llama-3.1-70b", "int8", 0.005),
    ],
)
def test_the_weights_a_vllm_log_measured_are_the_estimators(
    excerpt: X.Excerpt, model: str, precision: str, within: float
) -> None:
    """A log's measurement is a calibration point: vLLM's "Loading model weights took" (GiB, its
    meter: torch memory after loading) against the estimator's weights for the same checkpoint."""
    from core.sizing.estimate import estimate

    measured = read_log(excerpt.text).weights_bytes  # type: ignore[union-attr]
    request = {"task": "inference", "model": model, "precision": precision, "engine": "vllm"}
    assert near(estimate(request).breakdown["weights"], measured / GiB, within=within)  # type: ignore[operator]


def test_python_m_core_log_reads_a_file_on_stdin(tmp_path: Any) -> None:
    """The command as the README gives it: `python -m core log --lang en < file`."""
    import subprocess
    import sys

    path = tmp_path / "oom.log"
    path.write_text(X.TORCH_5090.text, encoding="utf-8")
    with path.open(encoding="utf-8") as stdin:
        done = subprocess.run(
            [sys.executable, "-m", "core", "log", "--lang", "en"],
            stdin=stdin,
            capture_output=True,
            text=True,
            timeout=60,
        )
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("📋 Log: PyTorch, CUDA out of memory") and "RTX 5090 32 GB" in done.stdout
