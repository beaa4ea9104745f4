"""The peak of a diffusion pipeline on one GPU (image and video, inference and training): its
components at their precisions, the denoiser working set, the VAE decode, classifier-free guidance."""

from __future__ import annotations

from core.catalogue.models import ModelKind, ModelSpec, PipelineComponent
from core.contract import (
    Attention,
    CpuOffload,
    Method,
    MixedPrecision,
    Precision,
    QuantBackend,
    Request,
    Sharding,
)
from core.formulas import BILLION, FP32, Breakdown
from core.formulas import activations as act
from core.formulas import diffusion as dif
from core.formulas import training as tr
from core.formulas.loading import with_overhead
from core.formulas.params import Arch
from core.formulas.peak_llm import training_peak
from core.formulas.precision import (
    QUANTIZED_ON_LOAD,
    bits_per_weight,
    bytes_per_weight,
    compute_bytes,
    is_gguf,
)
from core.formulas.weights import weight_bytes

# Text encoders at least this large (T5-XXL 4.7B, UMT5-XXL, Llama in HunyuanVideo) are quantized
# along with the denoiser, as in the diffusers quantization recipes; CLIP encoders and VAEs are not.
QUANTIZED_TEXT_ENCODER_MIN_PARAMS_B = 1.0
# Blocks of a denoiser without a layer count, for sequential offload (FLUX has 57, SDXL's UNet ~70).
DEFAULT_DENOISER_BLOCKS = 50
# Head width of a DiT whose head count is not in the catalogue (FLUX, SD3, Wan, CogVideoX: 128).
DIT_HEAD_DIM = 128


def _component_precision(req: Request, spec: ModelSpec, c: PipelineComponent) -> Precision:
    """A float `precision` is the pipeline's torch_dtype (every component); a quantized one applies
    to the components `quantized_components` names, by default the denoiser and the big text
    encoders (bitsandbytes/torchao recipes) or, for a GGUF precision, the denoiser alone: a GGUF
    checkpoint holds the transformer only and the text encoders load from the 16-bit repo
    (diffusers GGUFQuantizationConfig, city96's FLUX/Wan GGUFs). The shipped precision leaves
    everything as shipped."""
    assert req.precision
    denoiser = _denoiser(spec)
    if req.precision is denoiser.precision:
        return c.precision
    if req.precision in (Precision.FP32, Precision.FP16, Precision.BF16):
        return req.precision
    if req.quantized_components is not None:
        return req.precision if c.role in req.quantized_components else c.precision
    if c.role == "denoiser" or (
        c.role == "text_encoder"
        and c.params_b >= QUANTIZED_TEXT_ENCODER_MIN_PARAMS_B
        and not is_gguf(req.precision)
    ):
        return req.precision
    return c.precision


def pipeline_download_bytes(req: Request, spec: ModelSpec) -> float:
    """A diffusion pipeline's files as downloaded: each component in the format it runs in when that
    format is a file of its own (a GGUF transformer, an fp8 checkpoint), else as shipped: 16-bit
    files that a float dtype casts or bitsandbytes/torchao quantize while loading. A GGUF request
    thus counts the GGUF transformer plus the 16-bit text encoders and VAE it loads beside it
    (diffusers `from_single_file` + the base repo; city96's FLUX.1-dev Q8_0 is 12.7 GB, with T5-XXL,
    CLIP and the VAE 22.5 GB in all; Q4_K_M 17 GB; not the 16-bit pipeline's 33.7 GB)."""
    total = 0.0
    for c in spec.components:
        precision = _component_precision(req, spec, c)
        if precision in QUANTIZED_ON_LOAD or precision in (Precision.FP32, Precision.FP16, Precision.BF16):
            precision = c.precision
        total += weight_bytes(c.params_b * BILLION, bits_per_weight(precision))
    return total


def _denoiser(spec: ModelSpec) -> PipelineComponent:
    return next(c for c in spec.components if c.role == "denoiser")


def denoiser_shape(spec: ModelSpec) -> tuple[int, int, int, int]:
    """(blocks, hidden, heads, MLP width) of the denoiser: from its config where the catalogue has
    it (every DiT), else the typical-depth proxy of its parameter count (the UNets)."""
    den = _denoiser(spec)
    h = den.hidden_size or spec.hidden_size or dif.denoiser_width(den.params_b * BILLION)
    layers = den.layers or spec.layers or dif.DIT_TYPICAL_DEPTH
    heads = den.attention_heads or spec.attention_heads or max(1, h // DIT_HEAD_DIM)
    return layers, h, heads, den.intermediate_size or dif.DIT_MLP_RATIO * h


def _component_bytes(req: Request, spec: ModelSpec, role: str) -> list[float]:
    if role == "text_encoder" and req.text_encoder_on_cpu:
        return []  # encoded on the CPU; only the embeddings reach the GPU
    return [
        weight_bytes(c.params_b * BILLION, bits_per_weight(_component_precision(req, spec, c)))
        for c in spec.components
        if c.role == role
    ]


def _quantized_on_load_params(req: Request, spec: ModelSpec) -> float:
    """Parameters that bitsandbytes/torchao quantize on the GPU while the pipeline loads."""
    return sum(
        c.params_b * BILLION
        for c in spec.components
        if _component_precision(req, spec, c) in QUANTIZED_ON_LOAD
        and not (c.role == "text_encoder" and req.text_encoder_on_cpu)
    )


def _latent_tokens(req: Request, spec: ModelSpec) -> int:
    assert req.resolution
    w, hgt = req.resolution
    if spec.kind is ModelKind.VIDEO:
        assert req.frames
        frames = dif.latent_frame_count(req.frames, spec.vae_temporal_factor or 4)
        return dif.latent_tokens(w, hgt, spec.vae_spatial_factor or 8, frames)
    return dif.latent_tokens(w, hgt, spec.vae_spatial_factor or 8)


def _vae_decode(req: Request, spec: ModelSpec) -> float:
    assert req.resolution
    w, hgt = req.resolution
    outputs = 1 if req.vae_slicing else req.images  # slicing decodes the batch one output at a time
    if spec.kind is ModelKind.VIDEO:  # causal video VAEs decode a slice of latent frames at a time
        assert req.frames
        factor = spec.vae_temporal_factor or 4
        latent = dif.latent_frame_count(req.frames, factor)
        at_once = outputs * dif.video_frames_decoded_at_once(spec.family, req.frames, latent, factor)
        return dif.vae_decode_bytes(w, hgt, at_once, req.vae_tiling, dif.VIDEO_VAE_TILE)
    return dif.vae_decode_bytes(w, hgt, outputs, req.vae_tiling, dif.IMAGE_VAE_TILE)


def _cfg_batch(spec: ModelSpec) -> int:
    return 1 if spec.family in dif.SINGLE_PASS_FAMILIES else dif.CFG_BATCH


def diffusion_inference(req: Request, spec: ModelSpec) -> Breakdown:
    denoisers = _component_bytes(req, spec, "denoiser")  # Wan 2.2 A14B: two experts, both loaded
    te = _component_bytes(req, spec, "text_encoder")
    vae_w = sum(_component_bytes(req, spec, "vae"))
    den_precision = _component_precision(req, spec, _denoiser(spec))
    # fp32 weights under autocast (Wan's generate.py: `amp.autocast(dtype=bfloat16)`) compute in 16 bits
    autocast = req.mixed_precision in (MixedPrecision.BF16, MixedPrecision.FP16)
    e = 4 if den_precision is Precision.FP32 and not autocast else 2
    blocks, h, _, i = denoiser_shape(spec)
    den_act = dif.denoiser_activation_bytes(_latent_tokens(req, spec), req.images * _cfg_batch(spec), h, e, i)
    if req.num_gpus > 1 and req.sharding in (Sharding.FSDP, Sharding.ZERO3):
        # FSDP shards the transformers of the pipeline, sequence parallelism the tokens
        # (dif.FSDP_UNITS_IN_FLIGHT); the VAE stays whole on the rank that decodes
        block_params = _denoiser(spec).params_b * BILLION / blocks
        den_act = dif.sharded_block_working_set(block_params, e, den_act, req.num_gpus)
        denoisers = [d / req.num_gpus for d in denoisers]
        te = [t / req.num_gpus for t in te]
    vae_dec = _vae_decode(req, spec)
    on_load = _quantized_on_load_params(req, spec)
    if req.cpu_offload is CpuOffload.NONE:
        parts = {"weights": sum(denoisers) + vae_w, "text_encoders": sum(te)}
        peak_act = {"activations": den_act} if den_act >= vae_dec else {"vae_decode": vae_dec}
        parts |= peak_act
        dynamic = parts.get("activations", 0.0) + parts.get("vae_decode", 0.0)
        return with_overhead(parts, dynamic, req, on_load)
    if req.cpu_offload is CpuOffload.SEQUENTIAL:
        denoisers = [dif.sequential_offload_resident(d, blocks) for d in denoisers]
        te = [dif.sequential_offload_resident(t, blocks) for t in te]
    # model offload: one component on the GPU at a time; the peak is the largest stage
    stages = [
        {"text_encoders": max(te, default=0.0)},
        *({"weights": d, "activations": den_act} for d in denoisers),
        {"weights": vae_w, "vae_decode": vae_dec},
    ]
    run = max(stages, key=lambda s: sum(s.values()))
    run = with_overhead(run, run.get("activations", 0.0) + run.get("vae_decode", 0.0), req)
    if not on_load or req.quant_backend is QuantBackend.TORCHAO:
        # torchao quantizes where the weights load (diffusers TorchAoHfQuantizer
        # `create_quantized_param`: `.to(target_device)` then `quantize_`), the CPU for a pipeline
        # offloaded afterwards: its peak is the offloaded run (diffusers blog: torchao int8 with
        # model offload, 0.000 GB after loading, 12.19 GiB peak; case c175).
        return run
    # bitsandbytes quantizes on the GPU as each component loads ("A GPU is needed for
    # quantization", diffusers quantizers/bitsandbytes/bnb_quantizer.py); the quantized components
    # stay there until the offload hooks move them to the CPU: the peak is max(load, run).
    quantized = [c for c in spec.components if _component_precision(req, spec, c) in QUANTIZED_ON_LOAD]
    load: Breakdown = {"weights": 0.0, "text_encoders": 0.0}
    for c in quantized:
        if c.role == "text_encoder" and req.text_encoder_on_cpu:
            continue
        key = "text_encoders" if c.role == "text_encoder" else "weights"
        load[key] += weight_bytes(c.params_b * BILLION, bits_per_weight(_component_precision(req, spec, c)))
    load = with_overhead(load, 0.0, req, on_load)
    return max(run, load, key=lambda s: sum(s.values()))


def diffusion_training(req: Request, spec: ModelSpec) -> Breakdown:
    """Fine-tuning the denoiser (DreamBooth, LoRA); text encoders and VAE frozen and resident.
    Across GPUs as LLM training: DDP replicas keep gradient buckets, ZeRO/FSDP shard the denoiser's
    states, gradients and (ZeRO-3/FSDP) parameters; the frozen components stay whole on every GPU."""
    assert req.precision and req.mixed_precision
    den = _denoiser(spec)
    P = den.params_b * BILLION
    L, h, a, i = denoiser_shape(spec)
    arch = Arch(
        L=L,
        h=h,
        a=a,
        k=a,
        d=h // a,
        i=i,
        V=0,
        experts=1,
        active_experts=1,
        tied=True,
        gated=False,
        params=P,
        dropout=0.0,
        attention_dropout=0.0,
    )
    n, sharding = req.num_gpus, req.sharding or Sharding.NONE
    mixed = req.mixed_precision is not MixedPrecision.NONE
    e = compute_bytes(_component_precision(req, spec, den), req.mixed_precision)
    autocast_copy = 0.0
    if req.method is Method.FULL:
        pb = FP32 if mixed else bytes_per_weight(req.precision)
        weights = P * pb
        grad_bytes = pb
        states = tr.optimizer_state_bytes(P, req.optimizer, pb, h)
        if mixed and sharding is Sharding.NONE:
            autocast_copy = tr.autocast_weight_copy_bytes(P, e)
        elif mixed:  # ZeRO/FSDP mixed precision: 16-bit params and grads, fp32 master in the states
            weights, grad_bytes = P * 2, 2
            states += tr.master_weight_bytes(P)
        grads = tr.gradient_bytes(P, grad_bytes)
        temporaries = tr.optimizer_step_temporary_bytes(req.optimizer, h * arch.i, pb)
    else:
        base = _component_precision(req, spec, den)
        if req.method is Method.QLORA:  # an int8 or 4-bit base as asked, else NF4
            base = req.precision if bits_per_weight(req.precision) < 16 else Precision.NF4
        adapters = tr.lora_params(arch, req.lora_rank, req.lora_targets)
        weights = weight_bytes(P, bits_per_weight(base)) + weight_bytes(adapters, 32)
        grads = tr.gradient_bytes(adapters, FP32)
        states = tr.optimizer_state_bytes(adapters, req.optimizer, FP32, h)
        temporaries = tr.optimizer_step_temporary_bytes(req.optimizer, req.lora_rank * arch.i, FP32)
    shard_states, shard_grads, shard_params = tr.shards(sharding)
    buckets = tr.ddp_bucket_bytes(grads) if n > 1 and sharding is Sharding.NONE else 0.0
    if n > 1:
        states = tr.zero_shard(states, n) if shard_states else states
        grads = tr.zero_shard(grads, n) if shard_grads else grads
        if shard_params:  # a DiT has no LM head: only its blocks are gathered
            layer = P / arch.L
            live = (
                tr.fsdp_live_bytes(layer, 0.0, e, e)
                if sharding is Sharding.FSDP
                else tr.zero3_live_bytes(layer, 0.0, arch.L, e, e)
            )
            weights = tr.zero_shard(weights, n) + live
    weights += sum(_component_bytes(req, spec, "vae"))  # frozen, resident
    tokens = _latent_tokens(req, spec)
    activations = act.training_activation_bytes(
        tokens, req.batch_size, e, arch, req.attention is Attention.EAGER, bool(req.gradient_checkpointing)
    )
    # The denoising loss is an MSE on latents: no logits, no LM head.
    parts = training_peak(
        weights=weights,
        autocast_copy=autocast_copy,
        states=states,
        grads=grads,
        buckets=buckets,
        activations=activations,
        loss=0.0,
        first_grads=(0.0, 0.0),
        temporaries=temporaries,
        accumulation=req.gradient_accumulation_steps,
    )
    parts["text_encoders"] = sum(_component_bytes(req, spec, "text_encoder"))
    return with_overhead(parts, parts["activations"] + parts["gradients"], req)
