"""The rules that change the model or how it is served, one kind of mitigation each: a narrower
weight format or a pre-quantized checkpoint, fewer images or speech windows, an fp8 KV cache or vLLM,
a shorter context or fewer users, the diffusion pipeline's options, the next smaller model, more
cards, llama.cpp with part of the model in host RAM, CPU offload as the last resort. Each adds what
applies to `Found` (sized and checked there); `core.advice.mitigations` runs them in its order.
"""

from __future__ import annotations

from typing import Any

from core.advice.offload import mitigation
from core.contract import CpuOffload, Engine, KvPrecision, Method, Precision, Request, Task
from core.formulas.precision import QUANTIZED_ON_LOAD, bits_per_weight, kv_bytes_per_element
from core.sizing.defaults_multimodal import SPEECH_PRECISIONS
from core.sizing.defaults_tts import TTS_PRECISIONS

from .mitigation_fit import Found, halvings
from .multimodal import image_mitigations
from .sizing import CARD_COUNTS
from .smaller_model import smaller_of

MIN_QUANTIZE_STEP_BITS = 2  # offer a format only if it saves ≥ 2 bits per weight (not nf4 → int4)
MIN_CONTEXT = 1024
# A 4-bit format quantized on load (bitsandbytes nf4, torchao int4) has pre-quantized checkpoints
# of the same size that load as stored (AWQ/GPTQ on the Hub, GGUF): offered for those.
PREQUANTIZED_MAX_BITS = 5


def quantize(f: Found) -> None:
    """A weight format at least `MIN_QUANTIZE_STEP_BITS` narrower, one the runtime runs."""
    req = f.req
    if req.task is Task.TRAINING:
        return
    assert req.precision
    bits = bits_per_weight(req.precision)
    for action, precision in (("quantize_int8", _int8_for(req)), ("quantize_int4", _int4_for(req))):
        if (f.speech and precision not in SPEECH_PRECISIONS) or (f.tts and precision not in TTS_PRECISIONS):
            continue
        if bits - bits_per_weight(precision) >= MIN_QUANTIZE_STEP_BITS:
            f.add(action, dict(precision=precision), precision=str(precision))


def prequantized(f: Found) -> None:
    """A checkpoint shipped in 4 bit loads as stored: nothing is quantized (or left) while loading."""
    req = f.req
    assert req.precision
    prequantized = (
        req.precision in QUANTIZED_ON_LOAD and bits_per_weight(req.precision) <= PREQUANTIZED_MAX_BITS
    )
    if req.task is Task.INFERENCE and not f.diffusion and prequantized:
        f.add("use_prequantized", dict(precision=Precision.AWQ_INT4), precision=str(Precision.AWQ_INT4))


def images(f: Found) -> None:
    """Vision-language models: smaller or fewer images (core.advice.multimodal)."""
    for action, changes, params in image_mitigations(f.req, f.spec):
        f.add(action, changes, **params)


def windows(f: Found) -> None:
    """Speech: fewer 30-s windows transcribed together."""
    windows = max(f.req.batch_size, f.req.concurrency)
    if f.speech and windows > 1:
        best = f.largest_fitting(halvings(windows, 1), lambda v: {"batch_size": v, "concurrency": 1})
        if best:
            f.add("fewer_windows", dict(batch_size=best, concurrency=1), windows=best)


def _serves_text(f: Found) -> bool:
    """A language model serving text: its KV cache, context and users can change."""
    return f.req.task is Task.INFERENCE and not f.diffusion and not f.speech


def kv_cache_and_engine(f: Found) -> None:
    req = f.req
    if not _serves_text(f):
        return
    assert req.kv_cache_precision
    if kv_bytes_per_element(req.kv_cache_precision) > 1:
        f.add("kv_cache_fp8", dict(kv_cache_precision=KvPrecision.FP8), kv_cache_precision="fp8")
    if req.engine is Engine.TRANSFORMERS and req.cpu_offload is CpuOffload.NONE:
        # transformers' generate prefills every prompt at once; vLLM chunks the prefill
        f.add("use_vllm", dict(engine=Engine.VLLM), engine="vllm")


def context_and_users(f: Found) -> None:
    """The longest context, then the most users (the request's halved), that fit."""
    req = f.req
    if not _serves_text(f):
        return
    assert req.context_length
    best = f.largest_fitting(halvings(req.context_length, MIN_CONTEXT), lambda v: {"context_length": v})
    if best:
        f.add("shorten_context", dict(context_length=best), context_length=best)
    if req.concurrency > 1:
        best = f.largest_fitting(halvings(req.concurrency, 1), lambda v: {"concurrency": v})
        if best:
            f.add("reduce_concurrency", dict(concurrency=best), concurrency=best)


def diffusion(f: Found) -> None:
    """Image and video generation: the VAE's tiling and slicing, model offload, less output."""
    req = f.req
    if not f.diffusion or req.task is Task.TRAINING:
        return
    if not req.vae_tiling:
        f.add("vae_tiling", dict(vae_tiling=True), vae_tiling=1)
    if req.images > 1 and not req.vae_slicing:
        f.add("vae_slicing", dict(vae_slicing=True), vae_slicing=1)
    if req.cpu_offload is CpuOffload.NONE:
        # the standard recipe (FLUX.1 model card: `pipe.enable_model_cpu_offload()`): the same
        # output, each component on the GPU only while it runs; before any cut in quality
        f.add("cpu_offload", dict(cpu_offload=CpuOffload.MODEL), cpu_offload="model", experiments_only=0)
    if req.images > 1:
        f.add("fewer_images", dict(images=1), images=1)
    if req.frames and req.frames > 1:
        frames = max(1, req.frames // 2)
        f.add("fewer_frames", dict(frames=frames), frames=frames)
    if req.resolution and min(req.resolution) >= 512:
        w, h = req.resolution
        f.add("lower_resolution", {"resolution": (w // 2, h // 2)}, width=w // 2, height=h // 2)


def smaller(f: Found) -> None:
    """The same family's next smaller model (core.advice.smaller_model)."""
    found = smaller_of(f.spec, f.catalog)
    if found is not None:
        smaller, arch = found
        f.add(
            "smaller_model",
            dict(spec=smaller, arch=arch, model=smaller.id),
            model=smaller.id,
            model_name=smaller.name,  # the catalogue's display name, for the words
        )


def more_gpus(f: Found) -> None:
    """The fewest more cards (of 2, 4, 8) the request fits on as it is."""
    if not f.splits_model:
        return
    sizer = f.sizer
    for n in CARD_COUNTS:
        if n > f.count and sizer.splits(n) and f.fits(sizer.at_count(n)):
            changes = sizer.count_changes(n)
            f.add("more_gpus", changes, n=n, num_gpus=n, **_str_values(changes))
            break


def ram_offload(f: Found) -> None:
    """llama.cpp with the routed experts (a mixture of experts) or whole layers in host RAM, sized for
    the largest target card (core.advice.offload, issue 22): how Qwen3-235B or GLM-4.5 run on one card."""
    if f.diffusion or not f.targets or f.audio:  # TTS offload (SUNO_OFFLOAD_CPU) not sized
        return
    largest = max(f.targets, key=lambda g: g.usable_bytes)
    usable = round(largest.usable_bytes * (1 - f.sizer.bands.tight))
    found = mitigation(f.req, f.spec, f.sizer.arch, largest, usable)
    if found is None:
        return
    action, changes, tokens_per_s = found
    assert changes["precision"] is not None
    f.add(
        action,
        changes,
        precision=str(changes["precision"]),
        gpu_layers=changes["gpu_layers"] if changes["gpu_layers"] is not None else -1,
        n_cpu_moe=changes["n_cpu_moe"] or 0,
        tokens_per_s=round(tokens_per_s, 1) if tokens_per_s < 10 else round(tokens_per_s),
    )


def cpu_offload(f: Found) -> None:
    """Last resort, for experiments: several times slower. `model` then `sequential`, as the request's
    `cpu_offload` field means them (for language models `model` already streams every layer). A
    diffusion pipeline's model offload is no last resort (offered with the VAE options); only
    its sequential offload is. None for speech and TTS: CTranslate2 has no CPU offload of a GPU model."""
    if f.audio:
        return
    req, diffusion = f.req, f.diffusion
    modes = [CpuOffload.MODEL, CpuOffload.SEQUENTIAL]
    if req.task is Task.TRAINING and req.method is Method.FULL and req.num_gpus > 1:
        modes = [CpuOffload.SEQUENTIAL]  # the optimizer offload is offered sharded (above)
    elif req.task is Task.INFERENCE:
        modes = [CpuOffload.MODEL]
    elif diffusion and req.task is not Task.TRAINING:
        modes = [CpuOffload.SEQUENTIAL]
    elif req.task is Task.TRAINING and req.method is not Method.FULL:
        modes = [CpuOffload.SEQUENTIAL]  # LoRA has next to no optimizer state to offload
    for mode in modes:
        if req.cpu_offload is CpuOffload.NONE or (
            mode is CpuOffload.SEQUENTIAL and req.cpu_offload is CpuOffload.MODEL
        ):
            f.add("cpu_offload", dict(cpu_offload=mode), cpu_offload=str(mode), experiments_only=1)


def _int8_for(req: Request) -> Precision:
    return Precision.Q8_0 if req.engine is Engine.LLAMA_CPP else Precision.INT8


def _int4_for(req: Request) -> Precision:
    if req.engine is Engine.LLAMA_CPP:
        return Precision.Q4_K_M
    if req.engine is Engine.VLLM:
        return Precision.AWQ_INT4
    return Precision.NF4


def _str_values(changes: dict[str, Any]) -> dict[str, str | int | float]:
    return {k: v if isinstance(v, int | float) else str(v) for k, v in changes.items() if k != "num_gpus"}
