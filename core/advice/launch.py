"""The command that runs what was sized: `vllm serve`, `llama-server`, an Ollama Modelfile, a
transformers snippet, `accelerate launch` for training.

`launch_commands(result, spec, arch)` is a pure function of the sized result: the request's engine,
precision, context, users and KV-cache type, on the configuration the answer shows (the user's cards,
else the recommended ones). Every option it writes is a row of `core/data/engine_flags.toml` (the
engine's documented list, validated at load); `core.layouts.launch.command_text` lays a command out as typed,
and
`flag_meaning` says what an option does, in the engine's words. An engine a request cannot be run
with as sized (vLLM with int8 weights of bitsandbytes) gets no command rather than a wrong one.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, ValidationInfo, field_validator

from core.advice.sizing import variant
from core.catalogue.catalog import Catalog
from core.catalogue.gpus import GpuSpec
from core.catalogue.load import DATA_DIR, read_toml
from core.catalogue.models import ModelKind, ModelSpec
from core.contract import (
    Attention,
    Engine,
    KvPrecision,
    LaunchArg,
    LaunchCommand,
    Method,
    MixedPrecision,
    Precision,
    Result,
    Sharding,
    Task,
)
from core.errors import CatalogError
from core.formulas.params import Arch
from core.formulas.precision import is_gguf

FLAGS_FILE = DATA_DIR / "engine_flags.toml"
EngineId = Literal["vllm", "llama.cpp", "ollama", "transformers", "accelerate"]
# How each engine's options are spelled: CLI flags, Modelfile parameters or environment variables
# (Ollama), Python keyword arguments (transformers).
_SPELLING = {
    "vllm": r"^--[a-z][a-z0-9-]*$",
    "llama.cpp": r"^--?[a-z][a-z0-9-]*$",
    "ollama": r"^(?:[a-z][a-z_]*|[A-Z][A-Z_]*)$",
    "transformers": r"^[a-z][a-z_]*$",
    "accelerate": r"^--[a-z][a-z_]*$",
}
# llama.cpp and Ollama: every layer on the GPU. `-ngl 999` is what llama.cpp's own maintainers run
# (ggml-org/llama.cpp#3776, `run-all-perf.sh … -ngl 999`): more than any model's layers, and a
# number every build accepts ('all' is recent).
ALL_LAYERS = 999
# vLLM's `--quantization` for weight formats it does not read from the checkpoint's own config:
# fp8 on a 16-bit checkpoint quantizes while loading (vLLM docs "FP8 W8A8", online dynamic), 4-bit
# bitsandbytes quantizes in flight (vLLM docs "BitsAndBytes"); AWQ / GPTQ checkpoints.
_VLLM_QUANTIZATION = {
    Precision.AWQ_INT4: "awq",
    Precision.GPTQ_INT4: "gptq",
    Precision.FP8: "fp8",
    Precision.INT4: "bitsandbytes",
    Precision.NF4: "bitsandbytes",
}
# Formats vLLM does not run as sized here (int8 bitsandbytes, GGUF in vLLM is experimental).
_VLLM_UNRUNNABLE = frozenset({Precision.INT8})
# llama.cpp's KV-cache types (`-ctk`, `-ctv` allowed values) for the request's KV precision.
_LLAMA_KV = {
    KvPrecision.INT8: "q8_0",
    KvPrecision.INT4: "q4_0",
    KvPrecision.BF16: "bf16",
    KvPrecision.FP32: "f32",
}
# Formats transformers loads from a checkpoint quantized beforehand, not from the 16-bit one named.
_PREQUANTIZED = frozenset({Precision.AWQ_INT4, Precision.GPTQ_INT4, Precision.FP8})
_TORCH_DTYPE = {Precision.FP16: "torch.float16", Precision.FP32: "torch.float32"}
_BNB = {
    Precision.INT8: "BitsAndBytesConfig(load_in_8bit=True)",
    Precision.INT4: "BitsAndBytesConfig(load_in_4bit=True)",
    Precision.NF4: 'BitsAndBytesConfig(load_in_4bit=True, bnb_4bit_quant_type="nf4")',
}


class _Engine(BaseModel):
    model_config = ConfigDict(extra="forbid")

    id: EngineId
    program: str = Field(min_length=1)
    doc: str = Field(pattern=r"^https://")
    source: str = Field(min_length=1)


class _Flag(BaseModel):
    model_config = ConfigDict(extra="forbid")

    engine: EngineId
    flag: str
    meaning_en: str = Field(min_length=1, max_length=200)
    meaning_ru: str = Field(min_length=1, max_length=200)
    source: str = Field(min_length=1)

    @field_validator("flag")
    @classmethod
    def _spelled(cls, flag: str, info: ValidationInfo) -> str:
        engine = info.data.get("engine")
        if engine in _SPELLING and not re.match(_SPELLING[engine], flag):
            raise ValueError(f"{flag!r} is not spelled as a {engine} option")
        return flag


class _File(BaseModel):
    model_config = ConfigDict(extra="forbid")

    engine: list[_Engine]
    flag: list[_Flag]


@dataclass(frozen=True)
class EngineFlags:
    engines: dict[str, _Engine]
    flags: dict[tuple[str, str], _Flag]  # (engine, flag)

    def documented(self, engine: str, flag: str) -> bool:
        return (engine, flag) in self.flags


def load_flags(path: Path | None = None) -> EngineFlags:
    """The engines' documented options; a CatalogError naming the row when one is wrong."""
    file = FLAGS_FILE if path is None else path
    raw = read_toml(file)
    try:
        data = _File.model_validate(raw)
    except ValidationError as e:
        first = e.errors()[0]
        where = ".".join(str(p) for p in first["loc"])
        raise CatalogError(f"{file}: {where}: {first['msg']}", field=where) from e
    engines: dict[str, _Engine] = {e.id: e for e in data.engine}
    flags: dict[tuple[str, str], _Flag] = {}
    for index, row in enumerate(data.flag):
        where = f"flag.{index}"
        if row.engine not in engines:
            raise CatalogError(f"{file}: {where}: engine {row.engine!r} has no [[engine]] row", field=where)
        if (row.engine, row.flag) in flags:
            raise CatalogError(f"{file}: {where}: {row.engine} {row.flag} is listed twice", field=where)
        flags[(row.engine, row.flag)] = row
    return EngineFlags(engines, flags)


@lru_cache(maxsize=1)
def engine_flags() -> EngineFlags:
    return load_flags()


def flag_meaning(engine: str, flag: str, lang: str) -> str | None:
    """What `flag` does, in the engine's own words, in `lang` (ru, else en)."""
    row = engine_flags().flags.get((engine, flag))
    if row is None:
        return None
    return row.meaning_ru if lang == "ru" else row.meaning_en


# --- the builders -------------------------------------------------------------------------------


def _arg(flag: str, value: object = None) -> LaunchArg:
    return LaunchArg(flag=flag, value=None if value is None else str(value))


def gguf_file(spec: ModelSpec, precision: Precision) -> str:
    """The GGUF file's name to put in a command: the checkpoint's name and the quant type, as the
    GGUF uploads name their files ("Llama-3.1-8B-Q4_K_M.gguf"). A placeholder: the user's own file."""
    base = (spec.hf_id or spec.id).rsplit("/", 1)[-1]
    return f"{base}-{precision.value.upper()}.gguf"


def llama_server(
    model_file: str,
    context_length: int,
    parallel: int,
    kv: KvPrecision | None,
    *,
    gpu_layers: int | None = None,
    n_cpu_moe: int | None = None,
) -> LaunchCommand:
    """`llama-server` for a GGUF file. `-c` is the context of every slot together: the server gives
    each of its `--parallel` slots `n_ctx / n_parallel` (tools/server: slot context), so it is the
    context times the users. `gpu_layers` (None: every layer) and `n_cpu_moe` (layers whose experts
    stay in RAM) are for partial and MoE offload."""
    args = [
        _arg("-m", model_file),
        _arg("-ngl", ALL_LAYERS if gpu_layers is None else gpu_layers),
        _arg("-c", context_length * parallel),
    ]
    if parallel > 1:
        args.append(_arg("--parallel", parallel))
    if kv in _LLAMA_KV:
        args += [_arg("-ctk", _LLAMA_KV[kv]), _arg("-ctv", _LLAMA_KV[kv])]
    if n_cpu_moe:
        args.append(_arg("--n-cpu-moe", n_cpu_moe))
    return LaunchCommand(
        engine="llama.cpp",
        kind="shell",
        program="llama-server",
        model=model_file,
        model_is_placeholder=True,
        args=args,
    )


def ollama_modelfile(
    model_file: str, context_length: int, parallel: int, *, gpu_layers: int | None = None
) -> LaunchCommand:
    """An Ollama Modelfile over the same GGUF file: `num_ctx` is per request (Ollama allocates the
    context once per parallel request, docs/faq.md), `OLLAMA_NUM_PARALLEL` the users."""
    args = [
        _arg("num_ctx", context_length),
        _arg("num_gpu", ALL_LAYERS if gpu_layers is None else gpu_layers),
    ]
    env = [_arg("OLLAMA_NUM_PARALLEL", parallel)] if parallel > 1 else []
    return LaunchCommand(
        engine="ollama",
        kind="modelfile",
        program="ollama",
        model=model_file,
        model_is_placeholder=True,
        args=args,
        env=env,
    )


def vllm_serve(
    model: str,
    precision: Precision,
    native: Precision | None,
    context_length: int,
    users: int,
    count: int,
    utilization: float,
    kv: KvPrecision | None,
    no_bf16: bool = False,
) -> LaunchCommand | None:
    """`vllm serve` as sized; None for a weight format vLLM does not run that way."""
    if precision in _VLLM_UNRUNNABLE or is_gguf(precision):
        return None
    args = [
        _arg("--max-model-len", context_length),
        _arg("--gpu-memory-utilization", f"{utilization:g}"),
        _arg("--max-num-seqs", users),
    ]
    if count > 1:
        args.append(_arg("--tensor-parallel-size", count))
    if kv is KvPrecision.FP8:
        args.append(_arg("--kv-cache-dtype", "fp8"))
    method = _VLLM_QUANTIZATION.get(precision)
    if method is not None and precision is not native:
        args.append(_arg("--quantization", method))
    if precision is Precision.FP16 or (no_bf16 and precision is Precision.BF16):
        args.append(_arg("--dtype", "half"))
    return LaunchCommand(engine="vllm", kind="shell", program="vllm serve", model=model, args=args)


def transformers_snippet(model: str, precision: Precision, attention: Attention) -> LaunchCommand:
    """`AutoModelForCausalLM.from_pretrained` as sized: the dtype, every visible GPU, bitsandbytes."""
    args = [_arg("torch_dtype", _TORCH_DTYPE.get(precision, "torch.bfloat16")), _arg("device_map", '"auto"')]
    if precision in _BNB:
        args.append(_arg("quantization_config", _BNB[precision]))
    if attention is not Attention.SDPA:
        args.append(_arg("attn_implementation", f'"{attention.value}"'))
    return LaunchCommand(engine="transformers", kind="python", program="python", model=model, args=args)


def accelerate_launch(count: int, mixed: MixedPrecision | None, sharded: bool) -> LaunchCommand:
    """`accelerate launch` for a training script on `count` GPUs, as sized (FSDP when sharded)."""
    args = [_arg("--num_processes", count), _arg("--mixed_precision", (mixed or MixedPrecision.NONE).value)]
    if args[1].value == "none":
        args[1] = _arg("--mixed_precision", "no")
    if sharded:
        args.append(_arg("--use_fsdp"))
    return LaunchCommand(
        engine="accelerate",
        kind="shell",
        program="accelerate launch",
        model="train.py",
        model_is_placeholder=True,
        args=args,
    )


def shown_config(result: Result) -> tuple[str | None, int]:
    """The configuration the answer shows: the user's cards, else the recommended ones."""
    if result.target is not None:
        return result.target.gpu, result.target.count
    if result.recommendation is not None:
        return result.recommendation.gpu, result.recommendation.count
    return None, result.request.num_gpus


def launch_commands(
    result: Result, spec: ModelSpec, arch: Arch | None, gpu: GpuSpec | None = None
) -> list[LaunchCommand]:
    """Every command that runs what `result` sized; empty for what has none (diffusion, encoders,
    a bare size or architecture with no checkpoint to name)."""
    req = result.request
    model = spec.hf_id or (result.model.id if result.model.source == "huggingface" else None)
    if arch is None or spec.kind is not ModelKind.LLM or model is None or req.precision is None:
        return []
    _, count = shown_config(result)
    if req.task is Task.TRAINING:
        if req.engine not in (None, Engine.TRANSFORMERS):
            return []
        sharded = count > 1 and req.sharding not in (None, Sharding.NONE)
        mixed = req.mixed_precision if req.method is Method.FULL else None
        return [accelerate_launch(count, mixed, sharded)]
    if req.task is not Task.INFERENCE or req.context_length is None:
        return []
    return _inference(req.engine, model, spec, count, result, gpu)


def _inference(
    engine: Engine | None, model: str, spec: ModelSpec, count: int, result: Result, gpu: GpuSpec | None
) -> list[LaunchCommand]:
    req = result.request
    assert req.precision and req.context_length
    if engine is Engine.LLAMA_CPP:
        file = gguf_file(spec, req.precision)
        # partial and MoE offload (`gpu_layers`, `n_cpu_moe`, sized by core.advice.offload)
        layers, cpu_moe = req.gpu_layers, req.n_cpu_moe
        server = llama_server(
            file,
            req.context_length,
            req.concurrency,
            req.kv_cache_precision,
            gpu_layers=layers,
            n_cpu_moe=cpu_moe,
        )
        if cpu_moe:
            # Ollama's Modelfile has no expert placement (`num_gpu` moves whole layers): its own
            # split would not be the one sized here, so no Ollama command rather than a wrong one
            return [server]
        return [server, ollama_modelfile(file, req.context_length, req.concurrency, gpu_layers=layers)]
    if engine is Engine.VLLM:
        # under a load (core.advice.latency) the requests in flight per server, within the KV pool vLLM
        # pre-allocates whatever --max-num-seqs says
        users = req.concurrency
        load = result.latency
        if load is not None and load.in_flight is not None:
            users = max(users, min(math.ceil(load.in_flight), load.max_in_flight or users))
        command = vllm_serve(
            model,
            req.precision,
            spec.native_precision,
            req.context_length,
            users,
            count,
            req.gpu_memory_utilization or 0.9,
            req.kv_cache_precision,
            no_bf16=gpu is not None and not gpu.bf16,
        )
        return [command] if command else []
    if engine in (None, Engine.TRANSFORMERS):
        # a pre-quantized format (AWQ, GPTQ, FP8) is another checkpoint than the one named: no command
        if req.precision in _PREQUANTIZED and req.precision is not spec.native_precision:
            return []
        return [transformers_snippet(model, req.precision, req.attention)]
    return []


def with_launch(result: Result, spec: ModelSpec, arch: Arch | None, catalog: Catalog) -> Result:
    """`result` with its launch commands (`launch_commands`), for the configuration it shows."""
    gpu_id, _ = shown_config(result)
    commands = launch_commands(result, spec, arch, catalog.gpus.get(gpu_id) if gpu_id else None)
    return variant(result, {"launch_commands": commands}) if commands else result
