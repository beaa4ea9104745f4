"""The documented defaults of a request: what each engine, trainer and model kind does when the request
says nothing (`fill_defaults`), and the notes saying what was assumed."""

from __future__ import annotations

from typing import Any

from core.catalogue.catalog import default_catalog
from core.catalogue.models import ModelKind, ModelSpec
from core.contract import (
    Assumption,
    Engine,
    KvPrecision,
    Method,
    MixedPrecision,
    Precision,
    Request,
    Sharding,
    SpeculativeMethod,
    Task,
)
from core.errors import EstimateError
from core.formulas.precision import is_gguf
from core.formulas.vllm import VLLM_GPU_MEMORY_UTILIZATION
from core.language.words import note
from core.sizing.defaults_multimodal import fill_multimodal
from core.sizing.defaults_training import default_adapter_dtype, default_checkpointing
from core.sizing.speculative import fill_speculative

DEFAULT_CONTEXT = 4096
DEFAULT_SEQ_LEN = 2048
DEFAULT_RESOLUTION = (1024, 1024)
DEFAULT_FRAMES = 49  # CogVideoX / HunyuanVideo-style clip when a video model states none
_LLM_TASKS = (Task.INFERENCE, Task.TRAINING)
# Mixtures of experts this large are served, not run with transformers `generate()`: their model
# cards deploy them with vLLM / SGLang (DeepSeek-V3/R1 "How to Run Locally": "Hugging Face's
# Transformers has not been directly supported yet"; Kimi K2 "Deployment": vLLM, SGLang,
# KTransformers, TensorRT-LLM; GLM-4.5/4.6 and Qwen3-235B-A22B: vLLM and SGLang; gpt-oss-120b:
# "vLLM" for serving). The smallest of these, GLM-4.5-Air (106B) and Llama 4 Scout (109B),
# set the bound; 30B-class MoE (Qwen3-30B-A3B, gpt-oss-20b) run on one card in transformers.
SERVING_CLASS_MIN_PARAMS_B = 100.0


def fill_defaults(
    req: Request, spec: ModelSpec, no_bf16: bool = False, no_fp8: bool = False
) -> tuple[Request, list[Assumption]]:
    """The request with every documented default filled in, and what was assumed.

    `no_bf16`: the cards the request names have no bf16 (T4, V100: compute capability below 8.0);
    a 16-bit default is then fp16, as torch_dtype=float16 is what runs there.
    `no_fp8`: the cards the request names have no fp8 (A100, A6000, T4: compute capability below
    8.9); an fp8 checkpoint then loads as transformers loads it there (`fp8_fallback`)."""
    diffusion = spec.kind in (ModelKind.IMAGE, ModelKind.VIDEO)
    _check_task(req, spec)
    mm_update, notes = fill_multimodal(req, spec)  # vision and speech models (issue 22)
    req = req.model_copy(update=mm_update)
    update: dict[str, Any] = dict(mm_update)

    precision = _precision(req, spec, diffusion, no_bf16, notes)
    update["precision"] = precision
    engine = req.engine
    if engine is None:
        engine = _default_engine(req, diffusion, precision, spec)
        update["engine"] = engine
        notes += _default_vllm_notes(req, engine, spec)
    if no_fp8 and precision is Precision.FP8 and req.task is Task.INFERENCE:
        precision, fallback = fp8_fallback(engine)
        update["precision"] = precision
        notes.append(note(fallback))
    if engine is Engine.VLLM and req.gpu_memory_utilization is None:
        update["gpu_memory_utilization"] = VLLM_GPU_MEMORY_UTILIZATION

    if not diffusion:
        update.update(_sequence_defaults(req, spec, precision, engine, notes))
    update.update(fill_speculative(req, spec, default_catalog()))  # extension: speculative decoding
    update.update(_sharding(req, notes))
    update.update(_training_defaults(req, spec, precision, engine, notes))
    if diffusion:
        update.update(_picture_defaults(req, spec))
    return req.model_copy(update=update), notes


def _precision(
    req: Request, spec: ModelSpec, diffusion: bool, no_bf16: bool, notes: list[Assumption]
) -> Precision:
    """The weight precision: the one asked for (a QLoRA base made 4-bit), else the default."""
    precision = req.precision
    if precision is None:
        return _default_precision(req, spec, diffusion, no_bf16, notes)
    if (
        req.task is Task.TRAINING
        and req.method is Method.QLORA
        and precision
        not in (Precision.NF4, Precision.INT4, Precision.GPTQ_INT4, Precision.AWQ_INT4, Precision.INT8)
    ):  # an int8 base (bitsandbytes load_in_8bit + LoRA, peft's 8-bit recipe) stays int8
        notes.append(note("qlora_base_nf4", compute=str(precision)))
        return Precision.NF4
    return precision


def _default_precision(
    req: Request, spec: ModelSpec, diffusion: bool, no_bf16: bool, notes: list[Assumption]
) -> Precision:
    """The denoiser's precision, nf4 for QLoRA, the checkpoint's for inference, else bf16."""
    if diffusion:
        precision = next(c.precision for c in spec.components if c.role == "denoiser")
    elif req.task is Task.TRAINING and req.method is Method.QLORA:
        precision = Precision.NF4
    elif req.task is Task.INFERENCE and spec.native_precision is not None:
        precision = spec.native_precision
    else:
        precision = Precision.BF16  # training dequantizes a quantized checkpoint to bf16
    if no_bf16 and precision is Precision.BF16:
        precision = Precision.FP16
        notes.append(note("no_bf16_fp16"))
    if precision is spec.native_precision and req.task is Task.INFERENCE:
        notes.append(note("native_precision", precision=str(precision)))
    else:
        notes.append(note("default_precision", precision=str(precision)))
    return precision


def _sequence_defaults(
    req: Request, spec: ModelSpec, precision: Precision, engine: Engine, notes: list[Assumption]
) -> dict[str, Any]:
    """A language model's context length, KV cache precision and training sequence length."""
    update: dict[str, Any] = {"context_length": _context_length(req, spec, notes)}
    if req.kv_cache_precision is None:
        update["kv_cache_precision"] = (
            KvPrecision.FP32
            if precision is Precision.FP32
            else KvPrecision.FP16
            if engine is Engine.LLAMA_CPP
            else KvPrecision.BF16
        )
    if req.seq_len is None:
        seq = default_seq_len(spec)
        update["seq_len"] = seq
        if req.task is Task.TRAINING:
            notes.append(note("default_seq_len", seq_len=seq))
    return update


def default_context(spec: ModelSpec | None) -> int:
    """The context a request sizes when it states none: `DEFAULT_CONTEXT`, or the model's own
    maximum where that is shorter (Falcon 40B: 2048). None: a model not known yet (a Hugging Face
    id before it is looked up). Every front end offers this one default."""
    return _within_model(DEFAULT_CONTEXT, spec)


def default_seq_len(spec: ModelSpec | None) -> int:
    """The training sequence length a request sizes when it states none: `DEFAULT_SEQ_LEN`, or the
    model's own maximum where that is shorter (BERT: 512). None as for `default_context`."""
    return _within_model(DEFAULT_SEQ_LEN, spec)


def _within_model(tokens: int, spec: ModelSpec | None) -> int:
    max_context = spec.max_context if spec is not None else None
    return min(tokens, max_context or tokens)


def _context_length(req: Request, spec: ModelSpec, notes: list[Assumption]) -> int:
    context = req.context_length
    if context is None:
        context = default_context(spec)
        if req.task is Task.INFERENCE and spec.kind not in (ModelKind.SPEECH, ModelKind.TTS):
            notes.append(note("default_context", context_length=context))
    elif spec.max_context and context > spec.max_context:
        notes.append(note("context_beyond_model", max_context=spec.max_context))
    return context


def _sharding(req: Request, notes: list[Assumption]) -> dict[str, Any]:
    if req.sharding is not None:
        return {}
    # training on several cards is launched sharded (FSDP FULL_SHARD / ZeRO-3): plain replicas
    # would need the one-card memory on every card. The rule `Sizer.count_changes` applies to
    # every other count, so the cards asked for and those recommended are sized alike.
    if req.task is Task.TRAINING and req.num_gpus > 1:
        notes.append(note("named_count_fsdp", num_gpus=req.num_gpus))
        return {"sharding": Sharding.FSDP}
    return {"sharding": Sharding.NONE}


def _training_defaults(
    req: Request, spec: ModelSpec, precision: Precision, engine: Engine, notes: list[Assumption]
) -> dict[str, Any]:
    """Mixed precision, the adapter's dtype and gradient checkpointing."""
    update: dict[str, Any] = {}
    if req.mixed_precision is None:
        update["mixed_precision"] = _mixed_precision(req, precision)
    if req.task is Task.TRAINING and req.method is not Method.FULL and req.adapter_dtype is None:
        update["adapter_dtype"] = default_adapter_dtype(engine)
    if req.gradient_checkpointing is None:
        # what the common trainer does (core/sizing/defaults_training.py cites each one)
        checkpointing, why = default_checkpointing(req.task, req.method, spec.kind, engine)
        update["gradient_checkpointing"] = checkpointing
        if why:
            notes.append(note(why))
    return update


def _mixed_precision(req: Request, precision: Precision) -> MixedPrecision:
    if req.method is not Method.FULL or req.task is not Task.TRAINING:
        return MixedPrecision.NONE
    if precision in (Precision.FP32, Precision.BF16):
        return MixedPrecision.BF16
    if precision is Precision.FP16:  # fp16 weights ask for fp16 AMP (pre-Ampere cards)
        return MixedPrecision.FP16
    return MixedPrecision.NONE


def _picture_defaults(req: Request, spec: ModelSpec) -> dict[str, Any]:
    """An image or video pipeline's resolution, and a video's frame count."""
    update: dict[str, Any] = {}
    if req.resolution is None:
        update["resolution"] = spec.default_resolution or DEFAULT_RESOLUTION
    if spec.kind is ModelKind.VIDEO and req.frames is None:
        update["frames"] = spec.default_frames or DEFAULT_FRAMES
    return update


def _default_engine(req: Request, diffusion: bool, precision: Precision, spec: ModelSpec) -> Engine:
    """Several users of a language model mean a server: sized as vLLM (continuous batching, chunked
    prefill), not as one transformers `generate` that prefills every user's context at once. So is a
    serving-class model (`is_serving_class`) for one user. The one place this default lives, so the
    dialog, free text, the CLI and inline mode size it alike."""
    if diffusion:
        return Engine.DIFFUSERS
    if is_gguf(precision):
        return Engine.LLAMA_CPP
    serving = req.concurrency > 1 or req.requests_per_second is not None  # a load is a server too
    if req.task is Task.INFERENCE and (serving or is_serving_class(spec)):
        return Engine.VLLM
    # transformers' generate() speculates with an assistant model or prompt lookup only
    # (`assistant_model`, `prompt_lookup_num_tokens`); EAGLE heads and MTP layers run in vLLM / SGLang
    if req.speculative in (SpeculativeMethod.EAGLE, SpeculativeMethod.EAGLE3, SpeculativeMethod.MTP):
        return Engine.VLLM
    return Engine.TRANSFORMERS


def _default_vllm_notes(req: Request, engine: Engine, spec: ModelSpec) -> list[Assumption]:
    """Why vLLM was the default engine: several users, a serving-class model, or a speculative head."""
    if engine is not Engine.VLLM:
        return []
    if req.concurrency > 1:
        return [note("parse_serving_vllm", concurrency=req.concurrency)]
    if not is_serving_class(spec):  # an EAGLE head or MTP layer (`_default_engine`)
        return [note("speculative_vllm", method=str(req.speculative))]
    return [note("serving_class_vllm", params_b=round(spec.params_b))]


def is_serving_class(spec: ModelSpec) -> bool:
    """A mixture of experts of `SERVING_CLASS_MIN_PARAMS_B` or more: what its publishers deploy
    with a serving engine, not transformers `generate()` (see the constant)."""
    return spec.is_moe and spec.params_b >= SERVING_CLASS_MIN_PARAMS_B


def fp8_fallback(engine: Engine) -> tuple[Precision, str]:
    """How an fp8 checkpoint loads on a card without fp8 tensor cores (compute capability < 8.9):
    (the weight precision in memory, the note saying so).

    transformers: `FineGrainedFP8HfQuantizer.validate_environment`
    (transformers/quantizers/quantizer_finegrained_fp8.py) checks `torch.cuda.get_device_capability()`:
    below (8, 9) older releases refuse ("FP8 quantized models is only supported on GPUs with compute
    capability >= 8.9") and current ones dequantize the checkpoint to bf16 (`dequantize=True`,
    `Fp8Dequantize`): either way the weights that run there take 16 bits. vLLM runs fp8 checkpoints
    on such cards through its Marlin kernel ("For GPUs that lack FP8 hardware support, we can
    leverage the Marlin kernel for fast weight-only FP8 quantization": `self.use_marlin = not
    current_platform.has_device_capability(89)`, vllm/model_executor/layers/quantization/fp8.py):
    the weights stay 8-bit. Other engines take fp8 on such cards as vLLM does."""
    if engine is Engine.TRANSFORMERS:
        return Precision.BF16, "fp8_dequantized_bf16"
    return Precision.FP8, "fp8_weight_only_marlin"


def _check_task(req: Request, spec: ModelSpec) -> None:
    diffusion = spec.kind in (ModelKind.IMAGE, ModelKind.VIDEO)
    if not diffusion and req.task not in _LLM_TASKS:
        raise EstimateError(f"{spec.name} is a language model: task must be inference or training", "task")
    if spec.kind is ModelKind.IMAGE and req.task is Task.VIDEO_GENERATION:
        raise EstimateError(f"{spec.name} generates images, not video", "task")
    if spec.kind is ModelKind.VIDEO and req.task is Task.IMAGE_GENERATION:
        raise EstimateError(f"{spec.name} generates video: use task video_generation", "task")
    if diffusion and req.task is Task.INFERENCE:
        raise EstimateError(
            f"{spec.name} is a diffusion pipeline: task must be image_generation, "
            "video_generation or training",
            "task",
        )
    if req.precision and is_gguf(req.precision) and req.task is Task.TRAINING:
        raise EstimateError("GGUF formats are for llama.cpp inference, not training", "precision")
    if (
        req.engine is Engine.LLAMA_CPP
        and req.precision
        and not is_gguf(req.precision)
        # MXFP4: gpt-oss's GGUF keeps its experts so (ggml-org/gpt-oss-*-GGUF, GGML_TYPE_MXFP4)
        and req.precision not in (Precision.FP32, Precision.FP16, Precision.BF16, Precision.MXFP4)
    ):
        raise EstimateError(f"llama.cpp runs GGUF formats, not {req.precision}", "precision")
