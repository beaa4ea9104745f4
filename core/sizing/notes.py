"""Which notices apply to a sized request, by method: inference engine and precision, training
(peak phase, sharding, checkpointing), diffusion pipelines. Codes and parameters only — the words are
`assumption-<code>` in `core/locales`. Split from `core/sizing/estimate.py` so each reads in one sitting."""

from __future__ import annotations

from core.advice import tensor_parallel_divides
from core.catalogue.models import ModelKind, ModelSpec
from core.contract import (
    AdapterDtype,
    Assumption,
    CpuOffload,
    Engine,
    Method,
    MixedPrecision,
    Request,
    Sharding,
    Task,
)
from core.formulas.diffusion import SINGLE_PASS_FAMILIES
from core.formulas.loading import loading_reserve_in_flight
from core.formulas.overhead import CUDA_CONTEXT_BYTES
from core.formulas.params import Arch
from core.formulas.peak_llm import qlora_upcasts
from core.formulas.precision import EXPERTS_ONLY_ON_MOE, KEEPS_EMBEDDINGS_WIDE, is_gguf
from core.formulas.training import ZERO_REDUCE_BUCKET_ELEMENTS
from core.language.words import note
from core.sizing.accuracy import uncertainty
from core.units import GiB

# Above this p90 |error| of its class (video generation: 35 % over 9 published cases, docs/accuracy.md,
# doubled outside the frames and sizes they cover) a band says little: the answer says how to measure
# one short clip instead.
MEASURE_FIRST_SPREAD = 0.5


def method_notes(
    req: Request, spec: ModelSpec, arch: Arch | None, parts: dict[str, float]
) -> list[Assumption]:
    """How the workload was sized, in plain words (stable codes, listed in docs/estimator.md)."""
    assert req.precision
    notes = [note("overhead", context_bytes=CUDA_CONTEXT_BYTES)]
    notes += _weights_notes(req, spec, arch)
    if req.task is Task.TRAINING:
        notes.extend(_training_notes(req, step_is_peak=parts.get("activations", 0.0) <= 0))
    if spec.kind in (ModelKind.IMAGE, ModelKind.VIDEO):
        if req.task is not Task.TRAINING:
            notes.extend(_diffusion_notes(req, spec))
    elif req.task is Task.INFERENCE and spec.kind not in (ModelKind.SPEECH, ModelKind.TTS):  # own notes
        notes.append(
            note("kv_full_context", concurrency=req.concurrency, context_length=req.context_length or 0)
        )
    return notes + _placement_notes(req, spec, arch)


def _weights_notes(req: Request, spec: ModelSpec, arch: Arch | None) -> list[Assumption]:
    """How the weights were counted: experts, what a format keeps wide, the loading reserve, GGUF."""
    assert req.precision
    notes: list[Assumption] = []
    diffusion = spec.kind in (ModelKind.IMAGE, ModelKind.VIDEO)
    if spec.is_moe and spec.active_params_b:
        notes.append(note("moe_total_params", total_b=spec.params_b, active_b=spec.active_params_b))
    if req.precision in EXPERTS_ONLY_ON_MOE and arch is not None and arch.experts > 1:
        notes.append(note("experts_only_quantized", precision=str(req.precision)))
    elif req.precision in KEEPS_EMBEDDINGS_WIDE and arch is not None and not qlora_upcasts(req):
        # QLoRA through peft casts them to fp32 instead (`qlora_fp32_upcast` says so): one note
        notes.append(note("embeddings_wide", precision=str(req.precision)))
    if arch is not None and not diffusion:
        reserve = loading_reserve_in_flight(req, spec, arch)
        if reserve:
            notes.append(note("loading_reserve", gb=round(reserve / GiB, 2)))
    if is_gguf(req.precision) and not diffusion:
        notes.append(note("gguf_average_bits", precision=str(req.precision)))
    return notes


def _placement_notes(req: Request, spec: ModelSpec, arch: Arch | None) -> list[Assumption]:
    """Where the memory sits: vLLM's preallocation, CPU offload, the split over several cards."""
    notes: list[Assumption] = []
    if req.engine is Engine.VLLM and req.task is Task.INFERENCE:
        notes.append(note("vllm_preallocates"))
    if req.cpu_offload is not CpuOffload.NONE and spec.kind not in (ModelKind.IMAGE, ModelKind.VIDEO):
        code = "cpu_offload_layers" if req.task is Task.INFERENCE else "cpu_offload_zero"
        notes.append(note(code, cpu_offload=str(req.cpu_offload)))
    if req.num_gpus > 1 and arch is not None and not tensor_parallel_divides(req, arch, req.num_gpus):
        notes.append(note("tensor_parallel_heads", heads=arch.a, num_gpus=req.num_gpus))
    if req.num_gpus > 1:
        notes.append(note("multi_gpu_split", num_gpus=req.num_gpus))
    return notes


def _training_notes(req: Request, step_is_peak: bool) -> list[Assumption]:
    notes = _training_precision_notes(req)
    if req.engine is Engine.TORCHTUNE:
        notes.append(note("torchtune_features"))
    if req.torch_compile:
        notes.append(note("torch_compile_recomputes"))
    if req.method is not Method.FULL and req.lora_dropout > 0:
        notes.append(note("lora_dropout_inputs", dropout=req.lora_dropout))
    if req.sharding in (Sharding.ZERO2, Sharding.ZERO3) or (
        req.cpu_offload is not CpuOffload.NONE and req.sharding is not Sharding.FSDP
    ):
        notes.append(note("zero_buckets", bucket_elements=f"{ZERO_REDUCE_BUCKET_ELEMENTS:.0e}"))
    if qlora_upcasts(req):
        notes.append(note("qlora_fp32_upcast"))
    if req.engine is Engine.UNSLOTH:
        notes.append(note("unsloth_features"))
    if req.attention.value == "eager":
        notes.append(note("eager_attention_scores"))
    notes.append(_training_peak_note(req, step_is_peak))
    return notes


def _training_precision_notes(req: Request) -> list[Assumption]:
    """Mixed precision (AMP, or sharded by ZeRO/FSDP) and the adapters' dtype."""
    notes: list[Assumption] = []
    if req.method is Method.FULL and req.mixed_precision is not MixedPrecision.NONE:
        sharded = req.sharding not in (None, Sharding.NONE)
        notes.append(note("mixed_precision_zero" if sharded else "mixed_precision_amp"))
    if req.method is not Method.FULL and req.adapter_dtype is AdapterDtype.BF16:
        if req.engine is not Engine.TORCHTUNE:  # torchtune_features says it
            notes.append(note("lora_adapters_bf16", rank=req.lora_rank))
    elif req.method is not Method.FULL:
        notes.append(note("lora_adapters_fp32", rank=req.lora_rank))
    return notes


def _training_peak_note(req: Request, step_is_peak: bool) -> Assumption:
    """Which phase of the training step is the peak (core.formulas.peak_llm.training_peak)."""
    shape = {"batch_size": req.batch_size, "seq_len": req.seq_len or 0}
    if step_is_peak:
        return note(
            "training_peak_optimizer_step",
            **shape,
        )
    if req.gradient_accumulation_steps > 1:
        return note(
            "training_peak_accumulation",
            steps=req.gradient_accumulation_steps,
            **shape,
        )
    return note(
        "training_peak_backward",
        **shape,
    )


def _diffusion_notes(req: Request, spec: ModelSpec) -> list[Assumption]:
    assert req.resolution
    w, h = req.resolution
    notes = [
        note(
            "vae_decode_fp32",
            width=w,
            height=h,
        ),
        note(
            "cfg_single_pass",
        )
        if spec.family in SINGLE_PASS_FAMILIES
        else note(
            "cfg_double_batch",
        ),
    ]
    if req.cpu_offload is not CpuOffload.NONE:
        notes.append(
            note(
                "cpu_offload_slow",
                cpu_offload=str(req.cpu_offload),
            )
        )
    if req.precision and is_gguf(req.precision) and req.quantized_components is None:
        notes.append(note("gguf_denoiser_only", precision=str(req.precision)))
    if req.text_encoder_on_cpu:
        notes.append(note("text_encoder_cpu"))
    if spec.kind is ModelKind.VIDEO:
        spread = uncertainty(req, spec.params_b).fraction
        if spread >= MEASURE_FIRST_SPREAD:
            notes.append(note("video_measure_first", percent=round(100 * spread)))
    return notes
