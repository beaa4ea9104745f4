"""What to do when the request does not fit the target cards: mitigations, cheapest first as in
practice, each sized in full (a request variant through the same formulas) and checked against the
target GPUs at the requested card count; when it still does not fit there, the fewest cards on
which it would. Each kind of mitigation is a rule of `_RULES`, run in that order; the list is then
sorted by fit (stable: that order stays within each fit).
"""

from __future__ import annotations

import re
from bisect import bisect_left
from collections.abc import Callable
from functools import lru_cache
from typing import Any
from weakref import WeakKeyDictionary

from pydantic import TypeAdapter

from core.advice.offload import mitigation
from core.catalogue.catalog import Catalog
from core.catalogue.gpus import GpuSpec
from core.catalogue.models import ModelKind, ModelSpec
from core.contract import (
    CpuOffload,
    Engine,
    KvPrecision,
    Method,
    Mitigation,
    MixedPrecision,
    Optimizer,
    Precision,
    Request,
    Sharding,
    Task,
)
from core.formulas.params import Arch, arch_of
from core.formulas.precision import QUANTIZED_ON_LOAD, bits_per_weight, kv_bytes_per_element
from core.formulas.vllm import budget_bytes
from core.sizing.defaults_multimodal import SPEECH_PRECISIONS
from core.sizing.defaults_training import default_adapter_dtype, default_checkpointing
from core.sizing.defaults_tts import TTS_PRECISIONS

from .multimodal import image_mitigations
from .ranking import accumulation_for, largest_micro_batch
from .sizing import CARD_COUNTS, Sizer, fits_within

MIN_QUANTIZE_STEP_BITS = 2  # offer a format only if it saves ≥ 2 bits per weight (not nf4 → int4)
MIN_CONTEXT = 1024
# A 4-bit format quantized on load (bitsandbytes nf4, torchao int4) has pre-quantized checkpoints
# of the same size that load as stored (AWQ/GPTQ on the Hub, GGUF): offered for those.
PREQUANTIZED_MAX_BITS = 5
MIN_SEQ_LEN = 512
# ~7 mitigations per estimate, validated in one call (as core.advice.sizing does the verdicts)
_MITIGATION_LIST = TypeAdapter(list[Mitigation])


def mitigations(
    req: Request,
    spec: ModelSpec,
    catalog: Catalog,
    sizer: Sizer,
    total: int,
    targets: list[GpuSpec],
    given: Request | None = None,
) -> list[Mitigation]:
    """Those that fit first, then those that fit on more cards, then the rest, CPU offload last;
    cheapest first as in practice within each, so a list cut for a phone never hides one that fits
    below a cheaper one that does not. Each is sized in full and checked against the target GPUs.
    `given`: the request as asked, for the defaults a method switch recomputes (`req` if None)."""
    found = _Found(req, given or req, spec, catalog, sizer, total, targets)
    for rule in _RULES:
        rule(found)
    return _MITIGATION_LIST.validate_python(sorted(found.out, key=_fit_rank))


class _Found:
    """The request's mitigations as the rules find them (`add`), each sized and checked against the
    target GPUs; what the rules read of the request, said once."""

    def __init__(
        self,
        req: Request,
        given: Request,
        spec: ModelSpec,
        catalog: Catalog,
        sizer: Sizer,
        total: int,
        targets: list[GpuSpec],
    ) -> None:
        self.req, self.given, self.spec, self.catalog = req, given, spec, catalog
        self.sizer, self.total, self.targets = sizer, total, targets
        self.count = req.num_gpus
        self.out: list[dict[str, Any]] = []  # the fields of each `Mitigation`, validated together
        self.diffusion = spec.kind in (ModelKind.IMAGE, ModelKind.VIDEO)
        # faster-whisper / transformers Whisper: int8 at the least; Bark, XTTS, F5-TTS: fp16 at the
        # least (core.sizing.defaults_tts)
        self.speech, self.tts = spec.kind is ModelKind.SPEECH, spec.kind is ModelKind.TTS
        self.audio = self.speech or self.tts
        # diffusion pipelines run on one GPU, and so does Whisper (faster-whisper's device_index list
        # runs whole replicas): more cards do not help; TTS runs on one card
        self.splits_model = not self.diffusion and not self.audio
        self._by_size = sorted(targets, key=lambda g: g.usable_bytes)  # stable: ties stay in `targets` order
        self._budgets: dict[float, list[tuple[int, GpuSpec]]] = {}  # per share of the card: asked ~10 times

    def smallest_fitting(self, needed: int, changes: dict[str, Any] | None = None) -> GpuSpec | None:
        """The smallest target card `needed` fits, against the share of the card the variant may use
        (vLLM: gpu_memory_utilization)."""
        share = self.sizer.fraction(changes)
        budgets = self._budgets.get(share)
        if budgets is None:
            budgets = self._budgets[share] = [(budget_bytes(g.usable_bytes, share), g) for g in self._by_size]
        bands = self.sizer.bands
        # the budgets grow down the list and a need that fits one fits every larger one: the first
        # that fits by bisection, as a scan would find it
        first = bisect_left(budgets, True, key=lambda b: fits_within(needed, b[0], bands))
        return budgets[first][1] if first < len(budgets) else None

    def fits(self, needed: int) -> bool:
        return self.smallest_fitting(needed) is not None

    def add(
        self, action: str, changes: dict[str, Any], n: int | None = None, **params: str | int | float
    ) -> None:
        """Size the variant; if it does not fit on `n` cards (default: the requested count), find the
        fewest cards (up to 8) on which it would: `fits` stays about the requested count,
        `fits_on`/`fits_count` say where."""
        sizer, total = self.sizer, self.total
        n = self.count if n is None else n
        variant_total = sizer.total(**changes)
        if variant_total >= total and action != "more_gpus":
            return
        gpu, fit_n = self.smallest_fitting(variant_total, changes), n
        if gpu is None and self.splits_model and action != "more_gpus":
            for m in CARD_COUNTS:
                if m > n and sizer.splits(m):
                    gpu = self.smallest_fitting(sizer.total(**{**sizer.count_changes(m), **changes}), changes)
                    if gpu is not None:
                        fit_n = m
                        break
        self.out.append(
            {
                "action": action,
                "saves_bytes": total - variant_total,
                "total_bytes": variant_total,
                "fits": gpu is not None and fit_n == n,
                "fits_on": f"{fit_n}x {gpu.id}" if gpu else None,
                "fits_gpu": gpu.id if gpu else None,
                "fits_gpu_name": gpu.name if gpu else None,
                "fits_count": fit_n if gpu else None,
                "params": params,
            }
        )

    def largest_fitting(self, values: list[int], make: Callable[[int], dict[str, Any]]) -> int | None:
        """The largest value (e.g. context length) whose variant fits a target; else the smallest tried."""
        for v in values:
            if self.fits(self.sizer.total(**make(v))):
                return v
        return values[-1] if values else None


def _quantize(f: _Found) -> None:
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


def _prequantized(f: _Found) -> None:
    """A checkpoint shipped in 4 bit loads as stored: nothing is quantized (or left) while loading."""
    req = f.req
    assert req.precision
    prequantized = (
        req.precision in QUANTIZED_ON_LOAD and bits_per_weight(req.precision) <= PREQUANTIZED_MAX_BITS
    )
    if req.task is Task.INFERENCE and not f.diffusion and prequantized:
        f.add("use_prequantized", dict(precision=Precision.AWQ_INT4), precision=str(Precision.AWQ_INT4))


def _images(f: _Found) -> None:
    """Vision-language models: smaller or fewer images (core.advice.multimodal)."""
    for action, changes, params in image_mitigations(f.req, f.spec):
        f.add(action, changes, **params)


def _windows(f: _Found) -> None:
    """Speech: fewer 30-s windows transcribed together."""
    windows = max(f.req.batch_size, f.req.concurrency)
    if f.speech and windows > 1:
        best = f.largest_fitting(_halvings(windows, 1), lambda v: {"batch_size": v, "concurrency": 1})
        if best:
            f.add("fewer_windows", dict(batch_size=best, concurrency=1), windows=best)


def _serves_text(f: _Found) -> bool:
    """A language model serving text: its KV cache, context and users can change."""
    return f.req.task is Task.INFERENCE and not f.diffusion and not f.speech


def _kv_cache_and_engine(f: _Found) -> None:
    req = f.req
    if not _serves_text(f):
        return
    assert req.kv_cache_precision
    if kv_bytes_per_element(req.kv_cache_precision) > 1:
        f.add("kv_cache_fp8", dict(kv_cache_precision=KvPrecision.FP8), kv_cache_precision="fp8")
    if req.engine is Engine.TRANSFORMERS and req.cpu_offload is CpuOffload.NONE:
        # transformers' generate prefills every prompt at once; vLLM chunks the prefill
        f.add("use_vllm", dict(engine=Engine.VLLM), engine="vllm")


def _context_and_users(f: _Found) -> None:
    """The longest context, then the most users (the request's halved), that fit."""
    req = f.req
    if not _serves_text(f):
        return
    assert req.context_length
    best = f.largest_fitting(_halvings(req.context_length, MIN_CONTEXT), lambda v: {"context_length": v})
    if best:
        f.add("shorten_context", dict(context_length=best), context_length=best)
    if req.concurrency > 1:
        best = f.largest_fitting(_halvings(req.concurrency, 1), lambda v: {"concurrency": v})
        if best:
            f.add("reduce_concurrency", dict(concurrency=best), concurrency=best)


def _diffusion(f: _Found) -> None:
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


def _smaller(f: _Found) -> None:
    """The same family's next smaller model (core.advice.mitigations `_smaller_model`)."""
    found = _smaller_of(f.spec, f.catalog)
    if found is not None:
        smaller, arch = found
        f.add(
            "smaller_model",
            dict(spec=smaller, arch=arch, model=smaller.id),
            model=smaller.id,
            model_name=smaller.name,  # the catalogue's display name, for the words
        )


def _more_gpus(f: _Found) -> None:
    """The fewest more cards (of 2, 4, 8) the request fits on as it is."""
    if not f.splits_model:
        return
    sizer = f.sizer
    for n in CARD_COUNTS:
        if n > f.count and sizer.splits(n) and f.fits(sizer.at_count(n)):
            changes = sizer.count_changes(n)
            f.add("more_gpus", changes, n=n, num_gpus=n, **_str_values(changes))
            break


def _ram_offload(f: _Found) -> None:
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


def _fit_rank(m: dict[str, Any]) -> int:
    """0: fits the requested cards; 1: fits on more cards; 2: does not fit anywhere tried; 3: CPU
    offload for experiments, the last resort whatever it fits (a diffusion pipeline's model offload
    is its standard recipe, ranked by fit like the rest). `m`: a mitigation's fields."""
    if m["action"] == "cpu_offload" and m["params"].get("experiments_only", 1):
        return 3
    if m["action"] == "more_gpus":
        return 1  # it fits by construction, on more cards than asked
    return 0 if m["fits"] else 1 if m["fits_count"] else 2


def _training_steps(f: _Found) -> None:
    """Training, the same model and method: checkpointing first where it is off (the same data and
    batch, about a third slower, nothing else changes); then a smaller micro-batch with gradient
    accumulation (the same batch per optimizer step: the same training, on the same cards); an 8-bit
    optimizer; shorter sequences."""
    req = f.req
    if req.task is not Task.TRAINING:
        return
    if not req.gradient_checkpointing:
        f.add("gradient_checkpointing", dict(gradient_checkpointing=True), gradient_checkpointing=1)
    if req.batch_size > 1:
        micro = largest_micro_batch(req, lambda changes: f.fits(f.sizer.total(**changes)))
        micro = micro or 1
        steps = accumulation_for(req, micro)
        f.add(
            "gradient_accumulation",
            dict(batch_size=micro, gradient_accumulation_steps=steps),
            batch_size=micro,
            steps=steps,
        )
    if req.optimizer in (Optimizer.ADAMW, Optimizer.PAGED_ADAMW):
        f.add("optimizer_8bit", dict(optimizer=Optimizer.ADAMW_8BIT), optimizer="adamw_8bit")
    if not f.diffusion and req.seq_len:
        best = f.largest_fitting(_halvings(req.seq_len, MIN_SEQ_LEN), lambda v: {"seq_len": v})
        if best:
            f.add("shorter_sequence", dict(seq_len=best), seq_len=best)


def _training_method(f: _Found) -> None:
    """Training: the optimizer offloaded over ZeRO-3, then another method (LoRA, QLoRA), sharding."""
    req, given, spec = f.req, f.given, f.spec
    if req.task is not Task.TRAINING:
        return
    if req.method is Method.FULL and req.num_gpus > 1 and req.cpu_offload is CpuOffload.NONE:
        # what a full fine-tune too large for its cards runs as, before changing the method: ZeRO-3
        # with the optimizer states, fp32 master weights and their update in CPU RAM (DeepSpeed
        # offload_optimizer), sized sharded over the cards asked for; slower, the same training
        f.add(
            "shard_offload_optimizer",
            dict(sharding=Sharding.ZERO3, cpu_offload=CpuOffload.MODEL),
            sharding="zero3",
            cpu_offload="model",
        )
    if req.method is Method.FULL:
        lora: dict[str, Any] = {
            "method": Method.LORA,
            "mixed_precision": MixedPrecision.NONE,
            "precision": Precision.BF16 if req.precision is Precision.FP32 else req.precision,
        }
        f.add("use_lora", lora | _method_defaults(req, given, spec, Method.LORA), method="lora")
    if req.method is not Method.QLORA:
        qlora = dict(method=Method.QLORA, precision=Precision.NF4, mixed_precision=MixedPrecision.NONE)
        f.add("use_qlora", qlora | _method_defaults(req, given, spec, Method.QLORA), method="qlora")
    if req.num_gpus > 1 and req.sharding is not Sharding.ZERO3 and req.sharding is not Sharding.FSDP:
        f.add("shard", dict(sharding=Sharding.ZERO3), sharding="zero3")


def _method_defaults(req: Request, given: Request, spec: ModelSpec, method: Method) -> dict[str, Any]:
    """What choosing `method` would default differently, where the request did not say: gradient
    checkpointing (QLoRA turns it on where plain LoRA on an encoder leaves it off) and, from full
    training, the adapters' dtype."""
    changes: dict[str, Any] = {}
    if given.gradient_checkpointing is None:
        changes["gradient_checkpointing"] = default_checkpointing(req.task, method, spec.kind, req.engine)[0]
    if given.adapter_dtype is None:
        changes["adapter_dtype"] = default_adapter_dtype(req.engine)
    return changes


def _cpu_offload(f: _Found) -> None:
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


# The rules, cheapest first as in practice: each adds the mitigations of its kind that apply
# (`_Found.add`); `mitigations` then puts those that fit first (a stable sort keeps this order within).
_RULES: tuple[Callable[[_Found], None], ...] = (
    _quantize,
    _prequantized,
    _images,
    _windows,
    _kv_cache_and_engine,
    _context_and_users,
    _training_steps,
    _training_method,
    _diffusion,
    _smaller,
    _more_gpus,
    _ram_offload,
    _cpu_offload,
)


def _halvings(value: int, floor: int) -> list[int]:
    out = []
    v = value // 2
    while v >= floor:
        out.append(v)
        v //= 2
    return out


def _int8_for(req: Request) -> Precision:
    return Precision.Q8_0 if req.engine is Engine.LLAMA_CPP else Precision.INT8


def _int4_for(req: Request) -> Precision:
    if req.engine is Engine.LLAMA_CPP:
        return Precision.Q4_K_M
    if req.engine is Engine.VLLM:
        return Precision.AWQ_INT4
    return Precision.NF4


# Per catalogue (the offers-only copies the bot makes share its models): a model's smaller one and
# its Arch, by what `_smaller_model` reads of the model. Catalogue facts, the same for every request.
_SMALLER: WeakKeyDictionary[Catalog, dict[tuple[Any, ...], tuple[ModelSpec, Arch | None] | None]]
_SMALLER = WeakKeyDictionary()


def _smaller_of(spec: ModelSpec, catalog: Catalog) -> tuple[ModelSpec, Arch | None] | None:
    """`_smaller_model` and its Arch, memoised per catalogue."""
    known = _SMALLER.setdefault(catalog, {})
    key = (spec.id, spec.family, spec.kind, spec.params_b)
    if key not in known:
        smaller = _smaller_model(spec, catalog)
        known[key] = (smaller, arch_of(smaller)) if smaller is not None else None
    return known[key]


def _smaller_model(spec: ModelSpec, catalog: Catalog) -> ModelSpec | None:
    same = [m for m in catalog.family_models(spec.family, spec.kind) if m.params_b < spec.params_b * 0.8]
    # the same generation first ("llama-3.1-70b" → "llama-3.1-8b", not "llama-2-13b"), then the largest
    line = _model_line(spec.id)
    return max(same, key=lambda m: (_common_prefix(_model_line(m.id), line), m.params_b)) if same else None


_SIZE_SUFFIX = re.compile(r"-\d+(?:\.\d+)?(?:x\d+(?:\.\d+)?)?[bm](?:-.*)?$")


@lru_cache(maxsize=1024)
def _model_line(model_id: str) -> str:
    """A catalogue id without its size: "llama-3.1-70b" → "llama-3.1", "qwen3-30b-a3b" → "qwen3"."""
    return _SIZE_SUFFIX.sub("", model_id)


def _common_prefix(a: str, b: str) -> int:
    n = 0
    for x, y in zip(a, b, strict=False):
        if x != y:
            break
        n += 1
    return n


def _str_values(changes: dict[str, Any]) -> dict[str, str | int | float]:
    return {k: v if isinstance(v, int | float) else str(v) for k, v in changes.items() if k != "num_gpus"}
