"""The peak of a language model on one GPU: inference (weights, KV cache, activations, engine
reserves) and training (weights, gradients, optimizer states, activations, sharding across GPUs)."""

from __future__ import annotations

from core.catalogue.models import ModelKind, ModelSpec
from core.contract import (
    AdapterDtype,
    Attention,
    CpuOffload,
    Engine,
    LoraTargets,
    Method,
    MixedPrecision,
    Request,
    Sharding,
)
from core.errors import EstimateError
from core.formulas import FP32, Breakdown, offload
from core.formulas import activations as act
from core.formulas import training as tr
from core.formulas.kv_cache import model_kv_cache_bytes
from core.formulas.loading import quantized_on_load, with_loading_reserve, with_overhead
from core.formulas.multimodal import prompt_image_tokens, vision_encoder_bytes
from core.formulas.overhead import ALLOCATOR_RESERVE_FRACTION
from core.formulas.params import Arch, embedding_params, linear_params
from core.formulas.precision import bits_per_weight, bytes_per_weight, compute_bytes, kv_bytes_per_element
from core.formulas.recurrent import recurrent_state_bytes, state_bytes
from core.formulas.weights import model_weight_bytes, weight_bytes
from core.sizing.speculative import speculative_parts


def llm_inference(req: Request, spec: ModelSpec, arch: Arch) -> Breakdown:
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
        return {**with_overhead(parts, activations, req), **speculative_parts(req, spec, arch)}
    on_load = quantized_on_load(req.precision, spec, arch, n)
    parts = with_loading_reserve(parts, kv + activations, req, spec, arch, on_load)
    # speculative decoding adds its parts on top, so the total is the plain one plus them
    return {**parts, **speculative_parts(req, spec, arch)}


def llm_training(req: Request, spec: ModelSpec, arch: Arch) -> Breakdown:
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
        req,
        arch,
        weights=weights,
        grads=grads,
        states=states,
        temporaries=temporaries,
        layer_bytes=layer_bytes,
        head_bytes=head_bytes,
        e=e,
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
    on_load = quantized_on_load(req.precision, spec, arch, n if shard_params else 1) if quantizes else 0.0
    return with_overhead(parts, parts["activations"] + parts["gradients"], req, on_load)


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
