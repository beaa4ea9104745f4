"""Read a pasted log: a PyTorch CUDA OOM (both message formats), an nvidia-smi table, a vLLM or a
llama.cpp start-up log. `read_log(text)` → `LogReading`, or None when nothing known is in it.

Defensive by construction: the text is cut to `MAX_LOG_CHARS` (its head and its tail, where start-up
facts and the final error are), every line to `MAX_LINE_CHARS`; a rule's pattern runs only on lines
holding its literal needle, and every pattern has bounded quantifiers and no nested ones, so reading
is linear in the text (tests/core/test_logs_parse.py reads 100,000-character inputs).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from .reading import SIZE, GpuUse, LogKind, LogReading, to_bytes

MAX_LOG_CHARS = 200_000  # a start-up log is 20-60 kB; a document pasted whole is cut to head + tail
MAX_LINE_CHARS = 2_000
MAX_GPUS = 64


def clip(text: str) -> str:
    """The head and the tail of a text longer than MAX_LOG_CHARS."""
    if len(text) <= MAX_LOG_CHARS:
        return text
    half = MAX_LOG_CHARS // 2
    return text[:half] + "\n" + text[-half:]


@dataclass(frozen=True)
class Rule:
    needle: str  # a literal the line must hold before the pattern runs
    pattern: re.Pattern[str]
    field: str
    read: Callable[[re.Match[str]], Any]
    first: bool = True  # keep the first value found (else the last)


def _size(m: re.Match[str]) -> int | None:
    return to_bytes(m.group("n"), m.group("u"))


def _int(m: re.Match[str]) -> int:
    return int(m.group("v").replace(",", ""))


def _float(m: re.Match[str]) -> float:
    return float(m.group("v"))


def _text(m: re.Match[str]) -> str:
    return m.group("v").strip()


def _rule(
    needle: str, pattern: str, field: str, read: Callable[[re.Match[str]], Any], first: bool = True
) -> Rule:
    sized = pattern.replace("SIZE", SIZE.replace("(\\d", "(?P<n>\\d", 1).replace("(bytes", "(?P<u>bytes", 1))
    return Rule(needle, re.compile(sized), field, read, first)


N = r"(?P<v>\d{1,9})"
DEV = r"CUDA(?P<dev>\d{1,2})"
EQ = r"\s{0,6}=\s{0,16}"

RULES = (
    # PyTorch, both formats (c10/cuda/CUDACachingAllocator.cpp, the OutOfMemoryError message)
    _rule("Tried to allocate", r"Tried to allocate SIZE", "failed", _size),
    _rule("total capac", r"total capac(?:i)?ty of SIZE", "total", _size),
    _rule("of which", r"of which SIZE is free", "free", _size),
    _rule("this process has", r"this process has SIZE memory in use", "used", _size),
    _rule("is allocated by PyTorch", r"Of the allocated memory SIZE is allocated", "allocated", _size),
    _rule("but unallocated", r"and SIZE is reserved by PyTorch but unallocated", "reserved_unused", _size),
    _rule("total capacity;", r"SIZE total capacity;", "legacy_total", _size),
    _rule("already allocated", r"SIZE already allocated", "legacy_allocated", _size),
    _rule(" free;", r"; SIZE free;", "legacy_free", _size),
    _rule("reserved in total", r"SIZE reserved in total by PyTorch", "legacy_reserved", _size),
    # vLLM (vllm/worker/worker.py, vllm/v1/worker/gpu_worker.py, vllm/v1/core/kv_cache_utils.py)
    _rule("model=", r"\bmodel='(?P<v>[^']{1,300})'", "model", _text),
    _rule("'model'", r"'model': '(?P<v>[^']{1,300})'", "model", _text),
    _rule("vllm serve ", r"vllm serve (?P<v>[^\s\\]{1,300})", "model", _text),
    _rule("max_seq_len=", r"max_seq_len=" + N, "context", _int),
    _rule("max_model_len", r"'max_model_len': " + N, "context", _int),
    _rule("--max-model-len", r"--max-model-len[= ]" + N, "context", _int),
    _rule(
        "--gpu-memory-utilization", r"--gpu-memory-utilization[= ](?P<v>[01](?:\.\d{1,4})?)", "util", _float
    ),
    _rule("quantization=", r"quantization=(?P<v>[A-Za-z0-9_-]{1,30})", "quantization", _text),
    _rule("tensor_parallel_size=", r"tensor_parallel_size=(?P<v>\d{1,3})", "tp", _int),
    _rule("weights took", r"weights took SIZE", "weights", _size),
    _rule("Model loading took", r"Model loading took SIZE", "weights", _size),
    _rule("model weights take", r"model weights take SIZE", "weights", _size),
    _rule("non_torch_memory", r"non_torch_memory(?: takes |=)SIZE", "non_torch", _size),
    _rule("activation peak", r"activation peak memory takes SIZE", "activation", _size),
    _rule("reserved for KV Cache", r"reserved for KV Cache is SIZE", "kv", _size),
    _rule("Available KV cache memory", r"Available KV cache memory: SIZE", "kv", _size),
    _rule("kv_cache_size=", r"kv_cache_size=SIZE", "kv", _size),
    _rule(
        "GPU KV cache size", r"GPU KV cache size: (?P<v>\d{1,3}(?:,?\d{3}){0,4}) tokens", "kv_tokens", _int
    ),
    _rule("total_gpu_memory", r"total_gpu_memory \(SIZE\)", "total", _size),
    _rule("total_gpu_memory=", r"total_gpu_memory=SIZE", "total", _size),
    _rule(
        "gpu_memory_utilization", r"gpu_memory_utilization(?: \(|=)(?P<v>[01](?:\.\d{1,4})?)", "util", _float
    ),
    _rule("Maximum concurrency", r"Maximum concurrency for " + N + r" tokens", "concurrency_tokens", _int),
    _rule("Maximum concurrency", r"tokens per request: (?P<v>\d{1,7}(?:\.\d{1,4})?)x", "concurrency", _float),
    _rule("stored in KV cache", r"max seq len \(" + N + r"\) is larger", "context", _int, first=False),
    _rule("stored in KV cache", r"stored in KV cache \((?P<v>\d{1,9})\)", "kv_tokens", _int, first=False),
    _rule("KV cache is needed", r"max seq len \(" + N + r"\)", "context", _int, first=False),
    _rule("KV cache is needed", r"\(SIZE KV cache is needed", "kv_needed", _size, first=False),
    _rule("available KV cache memory", r"available KV cache memory \(SIZE\)", "kv", _size, first=False),
    _rule("estimated maximum model length", r"maximum model length is " + N, "kv_tokens", _int, first=False),
    # llama.cpp (src/llama-model.cpp, src/llama-kv-cache.cpp, src/llama-context.cpp, ggml-cuda.cu)
    _rule("layers to GPU", r"offloaded (?P<v>\d{1,4}/\d{1,4}) layers to GPU", "layers", _text),
    _rule("buffer size", DEV + r" (?:model )?buffer size" + EQ + "SIZE", "weights", _size),
    _rule("KV buffer size", DEV + r" KV buffer size" + EQ + "SIZE", "kv", _size),
    _rule("KV self size", r"KV self size" + EQ + "SIZE", "kv_total", _size),
    _rule("compute buffer size", DEV + r" compute buffer size" + EQ + "SIZE", "activation", _size),
    _rule(
        "cudaMalloc failed", r"allocating SIZE on device (?P<dev>\d{1,2}): cudaMalloc failed", "failed", _size
    ),
    _rule("general.name", r"general\.name\s{1,40}str\s{1,20}=\s{0,4}(?P<v>[^\s].{0,120})", "model", _text),
    _rule(".gguf", r"(?P<v>[^\s/\\'\"]{1,200}\.gguf)", "gguf", _text),
    _rule("file type", r"file type\s{1,20}=\s{0,4}(?P<v>[A-Z0-9_]{1,10})", "ftype", _text),
    _rule("n_ctx", r"\bn_ctx\s{1,12}=\s{0,4}" + N, "context", _int),
    _rule(
        "compute capability", r"Device (?P<dev>\d{1,2}): (?P<v>[^,]{1,80}), compute capability", "name", _text
    ),
    _rule("using device CUDA", r"using device " + DEV + r" \((?P<v>[^)]{1,80})\)", "name", _text),
)

# nvidia-smi: a GPU's row, the memory on the row below, the processes table
SMI_GPU = re.compile(r"^\|\s{0,6}(\d{1,2})\s{1,6}([^|\s][^|]{0,90})\|")
SMI_MODES = (" On", " Off", " WDDM", " TCC")  # the persistence / driver model column ending the name cell
SMI_MEMORY = re.compile(r"(\d{1,7})MiB\s{0,8}/\s{0,8}(\d{1,7})MiB")
SMI_PROCESS = re.compile(
    r"^\|\s{0,6}(\d{1,2})\s{1,6}(?:N/A|\d{1,3})\s{1,6}(?:N/A|\d{1,3})\s{1,12}(\d{1,9})\s{1,8}"
    r"(?:C\+G|C|G)\s{1,8}([^|\s][^|]{0,200})\|"
)  # the name and "NNNMiB" cell split in Python: no pattern backtracks over a long name
SMI_PROCESS_MEMORY = re.compile(r"^(.{0,200}?)\s{1,80}(\d{1,7})MiB$")
MARKERS: tuple[tuple[LogKind, tuple[str, ...]], ...] = (
    (
        "vllm",
        ("vllm", "vLLM", "GPU blocks", "stored in KV cache", "KV cache is needed", "gpu_memory_utilization"),
    ),
    ("llama_cpp", ("llama_", "llm_load", "ggml_", "load_tensors", "llama.cpp")),
)


def read_log(text: str) -> LogReading | None:
    """The log's facts, or None when it holds none this reader knows."""
    facts: dict[str, Any] = {}
    gpus: list[GpuUse] = []
    processes: list[tuple[int, str, int]] = []
    smi = False
    for raw in clip(text).splitlines():
        line = raw[:MAX_LINE_CHARS]
        _apply_rules(line, facts)
        if line.startswith("|"):
            smi = _read_smi_line(line, gpus, processes) or smi
    kind = _kind(text, facts, bool(gpus))
    if kind is None:
        return None
    return _reading(kind, facts, gpus if smi else [], processes)


LOG_NEEDLES = (
    "Tried to allocate", "CUDA out of memory", "OutOfMemoryError", "NVIDIA-SMI", "cudaMalloc failed",
    "Traceback (most recent call last)", "llm_load_", "llama_model_loader", "load_tensors:",
    "llama_kv_cache", "# GPU blocks", "stored in KV cache", "KV cache is needed",
    "Loading model weights took", "GPU KV cache size",
)  # fmt: skip
"""What only a log holds: a text with one of these is a log (read, or told its format is unknown)."""


def looks_like_log(text: str) -> bool:
    """A cheap test for the bot's router: a question naming vLLM or llama.cpp is no log; a text with
    one of LOG_NEEDLES, or an nvidia-smi table's "MiB / MiB" rows, is."""
    head = text[:MAX_LOG_CHARS]
    return any(n in head for n in LOG_NEEDLES) or (
        head.count("MiB") >= 2 and SMI_MEMORY.search(head) is not None
    )


ANY_NEEDLE = re.compile("|".join(sorted({re.escape(r.needle) for r in RULES}, key=lambda n: (-len(n), n))))
"""One scan of a line for every rule's needle: most lines of a log hold none (noise is skipped fast)."""


def is_pasted_log(text: str) -> bool:
    """Whether the bot answers `text` as a log: the reader read it, or it has a log's marks over
    several lines (an unknown format: told so). One line that names an error ("у меня CUDA out of
    memory на 4090 с llama 3 8b") is a question, sized as usual."""
    if not looks_like_log(text):
        return False
    return read_log(text) is not None or text.strip().count("\n") >= 2


def _apply_rules(line: str, facts: dict[str, Any]) -> None:
    if ANY_NEEDLE.search(line) is None:
        return
    for rule in RULES:
        if rule.needle not in line:
            continue
        m = rule.pattern.search(line)
        if m is None:
            continue
        value = rule.read(m)
        if value is None:
            continue
        dev = m.groupdict().get("dev")
        key = f"{rule.field}@{dev}" if dev is not None else rule.field
        if rule.first and key in facts:
            continue
        facts[key] = value


def _read_smi_line(line: str, gpus: list[GpuUse], processes: list[tuple[int, str, int]]) -> bool:
    """One line of an nvidia-smi table; True where it was one of its rows."""
    if (
        (m := SMI_GPU.match(line))
        and (cell := m.group(2).rstrip()).endswith(SMI_MODES)
        and len(gpus) < MAX_GPUS
    ):
        gpus.append(GpuUse(int(m.group(1)), cell.rsplit(" ", 1)[0].strip(), -1, -1))
        return True
    process = SMI_PROCESS.match(line) if len(processes) < MAX_GPUS * 8 else None
    if process and (cell := SMI_PROCESS_MEMORY.match(process.group(3).rstrip())):
        processes.append((int(process.group(2)), cell.group(1).strip(), int(cell.group(2)) << 20))
        return True
    if gpus and gpus[-1].used_bytes < 0 and (m := SMI_MEMORY.search(line)):
        last = gpus[-1]
        gpus[-1] = GpuUse(last.index, last.name, int(m.group(1)) << 20, int(m.group(2)) << 20)
        return True
    return False


def _kind(text: str, facts: dict[str, Any], smi: bool) -> LogKind | None:
    head = text[:MAX_LOG_CHARS]
    for kind, needles in MARKERS:
        if any(n in head for n in needles) and _has_any(facts, kind):
            return kind
    if "failed" in facts and "total" in facts:
        return "torch_oom"
    if "failed" in facts and "legacy_total" in facts:
        return "torch_oom_legacy"
    if smi:
        return "nvidia_smi"
    return None


_FIELDS = {
    "vllm": ("weights", "kv", "kv_tokens", "context", "model", "concurrency", "failed"),
    "llama_cpp": ("weights", "kv", "kv_total", "activation", "failed", "layers", "gguf", "model"),
}


def _has_any(facts: dict[str, Any], kind: LogKind) -> bool:
    fields = _FIELDS[kind]
    return any(k.split("@")[0] in fields for k in facts)


def _device_sum(facts: dict[str, Any], field: str, device: str | None = None) -> int | None:
    """A llama.cpp buffer on `device` (default: the device that failed, else CUDA0), or the field."""
    if field in facts:
        return int(facts[field])
    dev = device if device is not None else _failed_device(facts)
    value = facts.get(f"{field}@{dev}")
    return int(value) if value is not None else None


def _failed_device(facts: dict[str, Any]) -> str:
    return next((k.split("@")[1] for k in facts if k.startswith("failed@")), "0")


def _reading(kind: LogKind, facts: dict[str, Any], gpus: list[GpuUse], processes: list[Any]) -> LogReading:
    if kind == "torch_oom_legacy":
        facts = {**facts, "total": facts.get("legacy_total"), "free": facts.get("legacy_free")}
        facts["allocated"] = facts.get("legacy_allocated")
        reserved, allocated = facts.get("legacy_reserved"), facts.get("legacy_allocated")
        if reserved is not None and allocated is not None:
            facts["reserved_unused"] = max(0, reserved - allocated)
    devices = {k.split("@")[1] for k in facts if "@" in k}
    failed = _device_sum(facts, "failed")
    failure = "oom" if failed is not None else None
    if kind == "vllm" and failure is None and ("kv_needed" in facts or "concurrency" in facts):
        failure = "kv_too_small" if "kv_needed" in facts else None
    if kind == "vllm" and "kv_tokens" in facts and facts.get("context", 0) > facts["kv_tokens"]:
        failure = failure or "kv_too_small"
    name = _device_name(facts, gpus)
    return LogReading(
        kind=kind,
        failure=failure,  # type: ignore[arg-type]
        gpu_name=name,
        gpu_count=max(len(gpus), *(int(d) + 1 for d in devices), facts.get("tp") or 1, 1),
        total_bytes=_total(facts, gpus),
        used_bytes=_used(facts, gpus),
        free_bytes=facts.get("free"),
        failed_bytes=failed,
        allocated_bytes=facts.get("allocated"),
        reserved_unused_bytes=facts.get("reserved_unused"),
        model=facts.get("model") or facts.get("gguf"),
        precision=_precision(facts),
        context_length=facts.get("context") or facts.get("concurrency_tokens"),
        weights_bytes=_device_sum(facts, "weights"),
        kv_cache_bytes=_device_sum(facts, "kv") or facts.get("kv_total"),
        kv_tokens=_kv_tokens(facts),
        kv_needed_bytes=facts.get("kv_needed"),
        activation_bytes=_device_sum(facts, "activation"),
        non_torch_bytes=facts.get("non_torch"),
        memory_utilization=facts.get("util"),
        concurrency=facts.get("concurrency"),
        layers=_layers(facts.get("layers")),
        tensor_parallel=facts.get("tp"),
        gpus=tuple(g for g in gpus if g.total_bytes > 0),
        processes=tuple(processes),
    )


def _used(facts: dict[str, Any], gpus: list[GpuUse]) -> int | None:
    if gpus:
        return max(g.used_bytes for g in gpus)
    return facts.get("used") or facts.get("legacy_reserved")


def _device_name(facts: dict[str, Any], gpus: list[GpuUse]) -> str | None:
    if gpus:
        return gpus[0].name
    return facts.get(f"name@{_failed_device(facts)}") or facts.get("name@0")


def _total(facts: dict[str, Any], gpus: list[GpuUse]) -> int | None:
    if facts.get("total") is not None:
        return int(facts["total"])
    sized = [g.total_bytes for g in gpus if g.total_bytes > 0]
    return max(sized) if sized else None


def _kv_tokens(facts: dict[str, Any]) -> int | None:
    if "kv_tokens" in facts:
        return int(facts["kv_tokens"])
    if "concurrency" in facts and "concurrency_tokens" in facts:
        return int(facts["concurrency"] * facts["concurrency_tokens"])
    return None


def _layers(value: str | None) -> tuple[int, int] | None:
    if not value:
        return None
    done, total = value.split("/")
    return int(done), int(total)


GGUF_TYPE = re.compile(r"(?i)(?:^|[-_.])(I?Q\d_[A-Z0-9]{1,4}(?:_[A-Z0-9]{1,2})?|BF16|F16)(?=[-_.]|$)")


def _precision(facts: dict[str, Any]) -> str | None:
    if facts.get("quantization") and facts["quantization"].lower() != "none":
        return str(facts["quantization"]).lower()
    gguf = facts.get("gguf")
    if gguf:
        m = GGUF_TYPE.search(gguf.removesuffix(".gguf"))
        if m:
            return m.group(1).lower()
    return str(facts["ftype"]).lower() if facts.get("ftype") else None
