"""Compose the component formulas into the peak-memory breakdown of one GPU.

Input is a request whose defaults are already filled (core.estimate.fill_defaults). The breakdown
always sums to the total and always has `overhead`.
"""

from __future__ import annotations

from core.contract import (
    AdapterDtype,
    Attention,
    CpuOffload,
    Engine,
    LoraTargets,
    Method,
    MixedPrecision,
    Precision,
    QuantBackend,
    Request,
    Sharding,
    Task,
)
from core.errors import EstimateError
from core.formulas import activations as act
from core.formulas import diffusion as dif
from core.formulas import offload
from core.formulas import training as tr
from core.formulas.kv_cache import model_kv_cache_bytes
from core.formulas.multimodal import prompt_image_tokens, speech_inference, vision_encoder_bytes
from core.formulas.overhead import ALLOCATOR_RESERVE_FRACTION, overhead_bytes
from core.formulas.params import (
    Arch,
    attention_params_per_layer,
    embedding_params,
    linear_params,
    mlp_params_per_layer,
)
from core.formulas.recurrent import recurrent_state_bytes, state_bytes
from core.formulas.tts import tts_inference
from core.formulas.weights import model_weight_bytes, weight_bytes
from core.precision import (
    QUANTIZED_ON_LOAD,
    bits_per_weight,
    bytes_per_weight,
    compute_bytes,
    is_gguf,
    kv_bytes_per_element,
)
from core.specs import ModelKind, ModelSpec, PipelineComponent
from core.speculative import speculative_parts

Breakdown = dict[str, float]
BILLION = 1e9
FP32 = 4

# Text encoders at least this large (T5-XXL 4.7B, UMT5-XXL, Llama in HunyuanVideo) are quantized
# along with the denoiser, as in the diffusers quantization recipes; CLIP encoders and VAEs are not.
QUANTIZED_TEXT_ENCODER_MIN_PARAMS_B = 1.0
# Blocks of a denoiser without a layer count, for sequential offload (FLUX has 57, SDXL's UNet ~70).
DEFAULT_DENOISER_BLOCKS = 50
# Decoder layers whose 16-bit tensors are in flight (or cached for reuse) while a checkpoint is
# quantized on load: one (see `loading_reserve_bytes`).
ONE_LAYER_IN_FLIGHT = 1
# Head width of a DiT whose head count is not in the catalogue (FLUX, SD3, Wan, CogVideoX: 128).
DIT_HEAD_DIM = 128


def peak_breakdown(req: Request, spec: ModelSpec, arch: Arch | None) -> Breakdown:
    if spec.kind in (ModelKind.IMAGE, ModelKind.VIDEO):
        if req.task is Task.TRAINING:
            return _diffusion_training(req, spec)
        return _diffusion_inference(req, spec)
    if arch is None:
        raise EstimateError(f"model {spec.id!r} has no transformer architecture", field="model")
    if req.task is Task.TRAINING:
        return _llm_training(req, spec, arch)
    if req.task is not Task.INFERENCE:
        raise EstimateError(f"{spec.name} is a language model: task must be inference or training", "task")
    if spec.kind is ModelKind.SPEECH:
        return speech_inference(req, spec, arch)
    if spec.kind is ModelKind.TTS:
        return tts_inference(req, spec, arch)
    return _llm_inference(req, spec, arch)


def _with_overhead(
    parts: Breakdown, dynamic: float, req: Request, quantized_on_load: float = 0.0
) -> Breakdown:
    assert req.engine is not None
    parts["overhead"] = overhead_bytes(dynamic, req.engine, req.num_gpus, quantized_on_load)
    return parts


def _quantized_on_load(precision: Precision, spec: ModelSpec, arch: Arch, n: int) -> float:
    """Parameters per GPU that a 16-bit checkpoint quantizes while loading (the linear layers);
    none when the checkpoint already ships in that format (DeepSeek V3/R1 in fp8)."""
    if precision not in QUANTIZED_ON_LOAD or precision is spec.native_precision:
        return 0.0
    return linear_params(arch) / n


def loading_reserve_bytes(arch: Arch, dynamic_bytes: float) -> float:
    """What bitsandbytes NF4 quantizing a 16-bit checkpoint through transformers' loader
    (`load_in_4bit`) adds to a language model's peak at inference: one decoder layer's linear
    weights in 16 bits, less what runs afterwards reuses.

    In flight while loading: transformers hands the quantizer one tensor at a time
    (`create_quantized_param`, quantizers/quantizer_bnb_4bit.py, called per parameter by
    `_load_state_dict_into_meta_model`), and bitsandbytes `Params4bit._quantize` copies that 16-bit
    tensor to the GPU (`self.data.contiguous().to(device)`), writes the packed 4-bit output and frees
    the copy. PyTorch's caching allocator keeps the freed block and hands it to the next tensor of
    that size: the next layer's same projection. So what it holds beyond the quantized weights is
    about the blocks of one layer's tensors (`ONE_LAYER_IN_FLIGHT`), and, once loading is done, those
    free blocks serve the KV cache and activations first (best fit from cached blocks,
    CUDACachingAllocator): only what they do not fill adds to the peak. QLoRA (Dettmers et al. 2023,
    sec. 1 and 5) fine-tuned 33B models in 4 bit on 24 GB cards, which a 5 GB residue would forbid.
    Loaders that first hold the whole 16-bit model (torchao's own scripts, torchtune) keep the
    measured share (`core.formulas.overhead.quantize_on_load_residue_bytes`; cases c043, c085-c088).
    """
    return max(_one_layer_16bit_bytes(arch) - (1 + ALLOCATOR_RESERVE_FRACTION) * dynamic_bytes, 0.0)


def _one_layer_16bit_bytes(arch: Arch) -> float:
    """One decoder layer's attention and MLP tensors in 16 bits. An MoE layer's experts are separate
    tensors of one shape each (transformers' per-expert `nn.Linear`s), quantized one after another
    into the same cached blocks: one expert counts."""
    params = attention_params_per_layer(arch.h, arch.q_dim, arch.kv_dim) + mlp_params_per_layer(
        arch.h, arch.i, arch.gated
    )
    return ONE_LAYER_IN_FLIGHT * 2 * params


def loading_reserve_in_flight(req: Request, spec: ModelSpec, arch: Arch) -> float:
    """Bytes in flight while bitsandbytes NF4 quantizes `spec` through transformers' loader (one
    layer's 16-bit linear weights, `loading_reserve_bytes`); 0 when nothing is quantized so."""
    assert req.precision
    on_load = _quantized_on_load(req.precision, spec, arch, 1)
    if not (req.task is Task.INFERENCE and on_load and _bnb_through_transformers(req)):
        return 0.0
    return _one_layer_16bit_bytes(arch)


def _bnb_through_transformers(req: Request) -> bool:
    return req.precision is Precision.NF4 and req.engine is Engine.TRANSFORMERS


def _with_loading_reserve(
    parts: Breakdown, dynamic: float, req: Request, spec: ModelSpec, arch: Arch, on_load: float
) -> Breakdown:
    """`_with_overhead` plus what quantizing `on_load` parameters per GPU while loading leaves:
    bitsandbytes NF4 through transformers as `loading_reserve_bytes`, other loaders the measured share."""
    if on_load and _bnb_through_transformers(req):
        parts = _with_overhead(parts, dynamic, req)
        parts["overhead"] += loading_reserve_bytes(arch, dynamic)
        return parts
    return _with_overhead(parts, dynamic, req, on_load)


def _llm_inference(req: Request, spec: ModelSpec, arch: Arch) -> Breakdown:
    assert req.precision and req.context_length and req.kv_cache_precision and req.engine
    n = req.num_gpus  # tensor-parallel split (vLLM) or layers spread over GPUs (transformers, llama.cpp)
    e = compute_bytes(req.precision)
    weights = model_weight_bytes(arch.params, req.precision, arch) / n
    if req.cpu_offload is not CpuOffload.NONE:  # accelerate offload: one layer's weights at a time
        weights /= arch.L
    kv_e = kv_bytes_per_element(req.kv_cache_precision)
    # vLLM: KV heads are split across tensor-parallel ranks; fewer heads than GPUs are replicated.
    # MLA's compressed latent is one vector per token shared by every head: each rank keeps all of
    # it (vLLM/SGLang MLA backends; why SGLang added data-parallel attention for DeepSeek).
    # transformers (device_map) and llama.cpp spread whole layers: each GPU caches its layers only.
    kv_heads = 1 if spec.kv_lora_rank else arch.k
    tensor_parallel = req.engine is Engine.VLLM
    kv_share = (max(1 / n, 1 / kv_heads) if tensor_parallel else 1 / n) if n > 1 else 1.0
    tokens = req.context_length + prompt_image_tokens(req, spec)  # image tokens take KV cache as text does
    kv = model_kv_cache_bytes(spec, tokens, req.concurrency, kv_e) * kv_share
    if req.engine is Engine.LLAMA_CPP and (req.gpu_layers is not None or req.n_cpu_moe):
        # offload to RAM (-ngl, --n-cpu-moe): the GPU part of the weights and KV (core.formulas.offload)
        weights = offload.split(arch, req.precision, req.gpu_layers, req.n_cpu_moe).gpu_bytes / n
        kv *= offload.kv_gpu_share(arch, req.gpu_layers)
    if req.engine is Engine.VLLM:
        s, b = act.VLLM_MAX_BATCHED_TOKENS, 1
    elif req.engine is Engine.LLAMA_CPP:
        s, b = min(act.LLAMA_CPP_UBATCH, tokens), 1
    else:
        s, b = tokens, req.concurrency
    eager = req.attention is Attention.EAGER and req.engine is not Engine.VLLM
    activations = act.prefill_activation_bytes(s, b, arch, e, eager)
    if spec.kind is not ModelKind.ENCODER:  # an encoder pools its hidden states: no vocabulary logits
        activations += act.inference_logits_bytes(req.concurrency, arch.V)
    parts = {"weights": weights, "kv_cache": kv, "activations": activations}
    if spec.recurrent is not None:  # hybrid: the recurrent layers' state, fixed per sequence
        tp = n if tensor_parallel else 1
        conv_e, ssm_e = state_bytes(req.engine, req.precision, spec.recurrent)
        parts["recurrent_state"] = recurrent_state_bytes(spec, req.concurrency, conv_e, tp, ssm_e) * (tp / n)
    parts["vision_encoder"] = vision_encoder_bytes(req, spec, activations) / n
    activations += parts["vision_encoder"]  # churns like activations (the allocator's reserve)
    if req.engine is Engine.VLLM:
        # vLLM allocates its KV cache in one block per layer, sized exactly (gpu_model_runner
        # `initialize_kv_cache_tensors`): no allocator reserve on it. Nor a quantize-on-load residue:
        # the worker empties the allocator's cache before it profiles (`torch.cuda.empty_cache()` in
        # vllm/worker/worker.py `determine_num_available_blocks`, gpu_worker's memory_profiling).
        return {**_with_overhead(parts, activations, req), **speculative_parts(req, spec, arch)}
    on_load = _quantized_on_load(req.precision, spec, arch, n)
    parts = _with_loading_reserve(parts, kv + activations, req, spec, arch, on_load)
    # speculative decoding adds its parts on top, so the total is the plain one plus them
    return {**parts, **speculative_parts(req, spec, arch)}


def _llm_training(req: Request, spec: ModelSpec, arch: Arch) -> Breakdown:
    assert req.precision and req.seq_len and req.mixed_precision and req.engine
    n, sharding, offload = req.num_gpus, req.sharding or Sharding.NONE, req.cpu_offload
    mixed = req.mixed_precision is not MixedPrecision.NONE
    e = compute_bytes(req.precision, req.mixed_precision)
    P = arch.params
    h = arch.h
    unsloth, torchtune = req.engine is Engine.UNSLOTH, req.engine is Engine.TORCHTUNE
    # ZeRO/FSDP (and DeepSpeed's offload) hold 16-bit weights and an fp32 master copy; plain
    # PyTorch AMP keeps fp32 weights and casts them in forward.
    zero_layout = sharding is not Sharding.NONE or offload is not CpuOffload.NONE
    autocast_copy = 0.0
    adapter_inputs = 0.0
    if req.method is Method.FULL:
        if bits_per_weight(req.precision) < 16:
            raise EstimateError("full training needs 16- or 32-bit weights; use method qlora", "precision")
        if mixed and not zero_layout:
            # PyTorch AMP: fp32 parameters (they are the master), fp32 grads, autocast 16-bit copies.
            weights = weight_bytes(P, 32)
            autocast_copy = tr.autocast_weight_copy_bytes(P, e)
            grad_bytes: float = FP32
            states = tr.optimizer_state_bytes(P, req.optimizer, FP32, h)
        elif mixed:
            # ZeRO/FSDP mixed precision: 16-bit params and grads, fp32 master + states sharded.
            weights = weight_bytes(P, 16)
            grad_bytes = 2
            states = tr.master_weight_bytes(P) + tr.optimizer_state_bytes(P, req.optimizer, FP32, h)
        else:
            grad_bytes = bytes_per_weight(req.precision)
            weights = weight_bytes(P, bits_per_weight(req.precision))
            states = tr.optimizer_state_bytes(P, req.optimizer, grad_bytes, h)
        grads = tr.gradient_bytes(P, grad_bytes)
        state_bytes = FP32 if mixed else grad_bytes
        largest = tr.largest_tensor_params(arch)
        temporaries = tr.optimizer_step_temporary_bytes(req.optimizer, largest, state_bytes)
        trains_head = True
        layer_bytes = head_bytes = weights / P  # as stored, and so gathered
    else:
        base_precision = req.precision
        weights = model_weight_bytes(P, base_precision, arch)
        head_bytes = 2.0
        if qlora_upcasts(req):
            # peft.prepare_model_for_kbit_training casts every non-quantized parameter (embeddings,
            # LM head, norms) to fp32.
            weights += (P - linear_params(arch)) * (FP32 - 2)
            head_bytes = FP32
        # peft keeps adapter weights in fp32 (autocast_adapter_dtype=True), so grads and states too;
        # torchtune builds the whole model, adapters included, in its dtype (`training.
        # set_default_dtype(self._dtype)` in recipes/lora_finetune_single_device.py): the default
        # `adapter_dtype` (fill_defaults) says which.
        adapter_bytes = 2 if req.adapter_dtype is AdapterDtype.BF16 else FP32
        adapters = tr.lora_params(arch, req.lora_rank, req.lora_targets)
        weights += adapters * adapter_bytes
        grads = tr.gradient_bytes(adapters, adapter_bytes)
        states = tr.optimizer_state_bytes(adapters, req.optimizer, adapter_bytes, h)
        largest_adapter = req.lora_rank * max(arch.h, arch.i)
        temporaries = tr.optimizer_step_temporary_bytes(req.optimizer, largest_adapter, adapter_bytes)
        grad_bytes = adapter_bytes
        trains_head = False
        # QLoRA layers are gathered at their stored 4-bit size (FSDP-QLoRA's bnb quant_storage)
        layer_bytes = bits_per_weight(base_precision) / 8
        if not unsloth:  # Unsloth's LoRA kernels save no adapter inputs of their own
            attention_only = req.lora_targets is LoraTargets.ATTENTION
            # the copy lora_A saves is in the compute dtype: the trainers run LoRA under bf16
            # autocast (TRL's SFTConfig bf16=True), which casts peft's fp32 copy back. peft's
            # 4-bit layers (peft/tuners/lora/bnb.py) skip the cast under autocast
            # (`requires_conversion = not torch.is_autocast_enabled()`): QLoRA saves no copy.
            cast = adapter_bytes != e and req.method is Method.LORA
            adapter_inputs = act.lora_input_bytes_per_layer(
                req.seq_len,
                req.batch_size,
                arch,
                attention_only,
                e,
                cast,
                req.lora_dropout,
                compiled=req.torch_compile,
            )

    weights, grads, states, temporaries, buckets = _distribute(
        req, arch, weights=weights, grads=grads, states=states, temporaries=temporaries,
        layer_bytes=layer_bytes, head_bytes=head_bytes, e=e,
    )
    if offload is CpuOffload.SEQUENTIAL:
        autocast_copy = 0.0

    checkpointing = bool(req.gradient_checkpointing) or unsloth  # Unsloth always checkpoints
    activations = act.training_activation_bytes(
        req.seq_len,
        req.batch_size,
        e,
        arch,
        req.attention is Attention.EAGER,
        checkpointing,
        offload_checkpoints=unsloth,
        adapter_inputs=adapter_inputs,
        compiled=req.torch_compile,
    )
    loss = logits_grad = head_grad = 0.0
    if spec.kind is not ModelKind.ENCODER and not unsloth:  # Unsloth's loss never materialises logits
        if torchtune and req.torch_compile:
            loss = act.compiled_chunked_loss_bytes(req.seq_len, req.batch_size, arch.V, e)
        elif torchtune:
            loss = act.chunked_loss_bytes(req.seq_len, req.batch_size, arch.V, e)
        else:
            loss = act.training_loss_bytes(req.seq_len, req.batch_size, arch.V, e)
            logits_grad = act.logits_gradient_bytes(req.seq_len, req.batch_size, arch.V, e)
        if trains_head:
            head_grad = tr.lm_head_gradient_bytes(arch, grad_bytes)
    parts = training_peak(
        weights=weights,
        autocast_copy=autocast_copy,
        states=states,
        grads=grads,
        buckets=buckets,
        activations=activations,
        loss=loss,
        first_grads=(logits_grad, head_grad),
        temporaries=temporaries,
        accumulation=req.gradient_accumulation_steps,
    )
    # Unsloth loads checkpoints saved already in 4 bit (its `-bnb-4bit` uploads): nothing to quantize.
    # Training keeps the measured share: QLoRA recipes reserve far more than one layer by the end of
    # model init (torchtune 9.13 GB for Llama 2 7B, case c043; ms-swift/bitsandbytes, c192), as
    # peft's `prepare_model_for_kbit_training` re-allocates the unquantized parameters in fp32.
    quantizes = req.method is Method.QLORA and not unsloth
    shard_params = tr.shards(sharding)[2]
    on_load = _quantized_on_load(req.precision, spec, arch, n if shard_params else 1) if quantizes else 0.0
    return _with_overhead(parts, parts["activations"] + parts["gradients"], req, on_load)


def qlora_upcasts(req: Request) -> bool:
    """Whether QLoRA's non-quantized parameters (embeddings, LM head, norms) are cast to fp32:
    peft's prepare_model_for_kbit_training does, and TRL's SFTTrainer calls it except for sharded
    QLoRA (FSDP / ZeRO-3: `is_sharded_qlora`, trl/trainer/sft_trainer.py). Unsloth and torchtune
    keep them in bf16, and so does the reference QLoRA script with bf16 adapters (artidoro/qlora
    qlora.py casts `lm_head` and `embed_tokens` back to bf16; only the norms, a few MB, stay fp32)."""
    return (
        req.method is Method.QLORA
        and req.engine not in (Engine.UNSLOTH, Engine.TORCHTUNE)
        and req.adapter_dtype is not AdapterDtype.BF16
        and not tr.shards(req.sharding)[2]
    )


def _distribute(
    req: Request,
    arch: Arch,
    *,
    weights: float,
    grads: float,
    states: float,
    temporaries: float,
    layer_bytes: float,
    head_bytes: float,
    e: int,
) -> tuple[float, float, float, float, float]:
    """(weights, gradients, optimizer states, step scratch, always-alive buckets) on one GPU after
    sharding and CPU offload.

    - ZeRO-2 shards the optimizer states and gradients, ZeRO-3 and FSDP the parameters too (each
      GPU then holds its shard plus the parameters gathered at the start of backward:
      `zero3_live_bytes`, `fsdp_live_bytes`). A sharding asked for one GPU is sized as run
      (world size 1: the shard is the whole, the gathered copies come on top).
    - DeepSpeed (ZeRO-2/3, and every CPU offload, which is DeepSpeed's) reduces gradients through
      a flat bucket of `reduce_bucket_size` elements in the compute dtype; DDP keeps its buckets
      as a copy of the gradients.
    - `cpu_offload = model`: DeepSpeed offload_optimizer — optimizer states, fp32 master weights,
      their update and the gradients live in CPU RAM (the gradients leave the GPU through the
      bucket); 16-bit weights stay. `sequential`: the parameters too (ZeRO-3 offload_param,
      ZeRO-Infinity; FSDP CPUOffload(offload_params=True), which "offloads gradients to CPU as
      well"): only the gathered parameters are on the GPU.
    """
    n, sharding, offload = req.num_gpus, req.sharding or Sharding.NONE, req.cpu_offload
    shard_states, shard_grads, shard_params = tr.shards(sharding)
    layer = linear_params(arch) / arch.L
    head = arch.V * arch.h
    if sharding is Sharding.FSDP:
        live = tr.fsdp_live_bytes(layer, embedding_params(arch.V, arch.h, arch.tied), layer_bytes, head_bytes)
    else:
        live = tr.zero3_live_bytes(layer, head, arch.L, layer_bytes, head_bytes)
    states = tr.zero_shard(states, n) if shard_states else states
    grads = tr.zero_shard(grads, n) if shard_grads else grads
    buckets = 0.0
    if offload is not CpuOffload.NONE:
        states = temporaries = 0.0
        grads = 0.0
        if sharding is not Sharding.FSDP:
            buckets = tr.zero_reduce_bucket_bytes(e)
        if offload is CpuOffload.SEQUENTIAL:
            return live, grads, states, temporaries, buckets
    elif sharding in (Sharding.ZERO2, Sharding.ZERO3):
        buckets = tr.zero_reduce_bucket_bytes(e)
    elif sharding is Sharding.NONE and n > 1:
        buckets = tr.ddp_bucket_bytes(grads)
    if shard_params:
        weights = tr.zero_shard(weights, n) + live
    return weights, grads, states, temporaries, buckets


def training_peak(
    *,
    weights: float,
    autocast_copy: float,
    states: float,
    grads: float,
    buckets: float,
    activations: float,
    loss: float,
    first_grads: tuple[float, float],
    temporaries: float,
    accumulation: int,
) -> Breakdown:
    """The training step's peak, phase by phase, as PyTorch allocates it with
    `zero_grad(set_to_none=True)` (the default since PyTorch 2.0, and HF Trainer's):

    - start of backward: weights (+ AMP's autocast copies, saved by each layer until its backward)
      + optimizer states + every layer's activations + the loss buffers (`loss`), then, once those
      are freed, the logits' gradient and the first parameter gradient (the LM head's), given as
      `first_grads` = (logits gradient, LM head gradient);
    - optimizer step, after the backward has freed the activations: weights + states + all
      gradients + the step's scratch (`temporaries`).

    Phases are compared with the allocator reserve their churning memory (activations and
    gradients) adds in `overhead`, so the total never drops when a phase grows past the other.

    With gradient accumulation (> 1) gradients persist across micro-batches, so the whole of
    `grads` is also alive at the start of every backward. DDP's `buckets` are allocated once and
    always alive. Returns the breakdown of the larger phase (`activations` 0 when it is the step).
    """
    held = buckets + (grads if accumulation > 1 else 0.0)
    logits_grad, head_grad = first_grads
    backward_extra, backward_grads = max((loss, held), (logits_grad, held + head_grad), key=sum)
    backward = {
        "weights": weights + autocast_copy,
        "gradients": backward_grads,
        "optimizer_states": states,
        "activations": activations + backward_extra,
    }
    step = {
        "weights": weights,
        "gradients": grads + buckets,
        "optimizer_states": states + temporaries,
        "activations": 0.0,
    }
    return max(backward, step, key=_with_reserve)


def _with_reserve(phase: Breakdown) -> float:
    return sum(phase.values()) + ALLOCATOR_RESERVE_FRACTION * (phase["activations"] + phase["gradients"])


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


def _diffusion_inference(req: Request, spec: ModelSpec) -> Breakdown:
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
        return _with_overhead(parts, dynamic, req, on_load)
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
    run = _with_overhead(run, run.get("activations", 0.0) + run.get("vae_decode", 0.0), req)
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
    load = _with_overhead(load, 0.0, req, on_load)
    return max(run, load, key=lambda s: sum(s.values()))


def _diffusion_training(req: Request, spec: ModelSpec) -> Breakdown:
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
    return _with_overhead(parts, parts["activations"] + parts["gradients"], req)
