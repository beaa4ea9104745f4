"""Training state: gradients, optimizer states, master weights, LoRA adapters, ZeRO/FSDP sharding.

Bytes per trainable parameter, the ZeRO paper's accounting (Rajbhandari et al. 2020,
arXiv:1910.02054, sec. 3.1: "2Ψ + 2Ψ + 12Ψ = 16Ψ" for mixed-precision Adam) adapted to what
PyTorch actually allocates, see `mixed_precision_bytes`.
"""

from __future__ import annotations

import math

from core.contract import LoraTargets, Optimizer, Sharding
from core.formulas.params import Arch

FP32 = 4

# States per parameter and their dtype; None = the parameter's dtype.
# AdamW: exp_avg + exp_avg_sq (Loshchilov & Hutter 2019), in the parameter dtype (torch.optim).
# 8-bit AdamW: two uint8 states + one fp32 absmax per 2048-element block (Dettmers et al. 2022,
#   arXiv:2110.02861) = 2 + 8/2048 bytes. Paged variants allocate the same on the GPU in unified
#   memory, evictable to CPU under pressure (bitsandbytes docs); we count them resident.
# Lion: one momentum (Chen et al. 2023, arXiv:2302.06675). SGD: torch default momentum 0, no state.
_ADAM8_BYTES = 2 + 2 * FP32 / 2048


def optimizer_state_bytes(params: float, optimizer: Optimizer, param_bytes: float, h: int | None) -> float:
    """Optimizer states for `params` trainable parameters stored at `param_bytes` each."""
    match optimizer:
        case Optimizer.ADAMW | Optimizer.PAGED_ADAMW:
            return params * 2 * param_bytes
        case Optimizer.ADAMW_8BIT | Optimizer.PAGED_ADAMW_8BIT:
            return params * _ADAM8_BYTES
        case Optimizer.LION:
            return params * param_bytes
        case Optimizer.SGD:
            return 0.0
        case Optimizer.ADAFACTOR:
            return adafactor_state_bytes(params, param_bytes, h)


def adafactor_state_bytes(params: float, param_bytes: float, h: int | None) -> float:
    """Adafactor factors the second moment of an n×m matrix into n + m numbers and keeps no first
    moment by default (Shazeer & Stern 2018, arXiv:1804.04235; transformers' beta1=None): about
    (1/n + 1/m) ≈ 2/h states per parameter for h-wide matrices."""
    width = h or 4096
    return params * param_bytes * 2 / width


def optimizer_step_temporary_bytes(
    optimizer: Optimizer, largest_tensor_params: float, param_bytes: float
) -> float:
    """Scratch memory `optimizer.step()` allocates on top of the states, for the largest tensor.

    AdamW (fused: HF Trainer's default `adamw_torch_fused` since PyTorch 2.8, DeepSpeed FusedAdam),
    bitsandbytes' 8-bit and paged kernels and SGD update in place: nothing. (The `foreach`
    implementation of torch.optim.AdamW, its default when neither flag is given, would add one
    state-sized copy for `_foreach_sqrt`; not counted.) transformers' Adafactor loops over tensors
    and holds `grad**2 + eps` and the factored estimate (`_approx_sq_grad`) in fp32, plus fp32
    copies of a 16-bit gradient and parameter. lion-pytorch's update clones the momentum and adds
    the gradient: two tensors in the parameter dtype.
    """
    match optimizer:
        case Optimizer.ADAFACTOR:
            copies = 2 + (2 if param_bytes < FP32 else 0)
            return copies * largest_tensor_params * FP32
        case Optimizer.LION:
            return 2 * largest_tensor_params * param_bytes
        case _:
            return 0.0


def largest_tensor_params(arch: Arch) -> int:
    """Elements of the largest weight tensor: the embedding (V × h) or one MLP matrix (h × i)."""
    return max(arch.V * arch.h, arch.h * arch.i)


def lm_head_gradient_bytes(arch: Arch, grad_bytes: float) -> float:
    """The first parameter gradient backward produces in a causal LM: the LM head's (V × h), tied
    to the token embeddings or not."""
    return arch.V * arch.h * grad_bytes


def gradient_bytes(params: float, grad_bytes: float) -> float:
    """One gradient per trainable parameter, in the parameter's dtype (PyTorch autograd)."""
    return params * grad_bytes


def autocast_weight_copy_bytes(params: float, compute_bytes: int) -> float:
    """torch.autocast caches a 16-bit copy of every fp32 weight used in forward, alive until backward
    ends (torch/amp docs: the cast cache); the gpu-measure README measures these 2 bytes/param."""
    return params * compute_bytes


def master_weight_bytes(params: float) -> float:
    """fp32 master copy of 16-bit weights (ZeRO/DeepSpeed/Megatron mixed precision)."""
    return params * FP32


def lora_params(arch: Arch, rank: int, targets: LoraTargets) -> float:
    """LoRA adds A (r × d_in) and B (d_out × r) to each targeted linear (Hu et al. 2021,
    arXiv:2106.09685): r·(d_in + d_out) per matrix. `attention` = q_proj and v_proj, the paper's
    choice; `all-linear` = q, k, v, o and the MLP's two or three matrices (per expert for MoE)."""
    h = arch.h
    q = h + arch.q_dim
    kv = h + arch.kv_dim
    if targets is LoraTargets.ATTENTION:
        per_layer = q + kv
    else:
        mlp = (3 if arch.gated else 2) * (h + arch.i) * max(arch.experts, 1)
        per_layer = q + 2 * kv + (arch.q_dim + h) + mlp
    return rank * per_layer * arch.L


def zero_shard(state_bytes: float, world: int) -> float:
    """ZeRO partitions a state evenly over the data-parallel world (Rajbhandari et al. 2020)."""
    return state_bytes / world


def shards(sharding: Sharding | None) -> tuple[bool, bool, bool]:
    """What is partitioned: (optimizer states, gradients, parameters); None (not filled in): nothing.

    ZeRO-2 = optimizer + gradients; ZeRO-3 and FSDP FULL_SHARD = all three."""
    if sharding is Sharding.ZERO2:
        return True, True, False
    if sharding in (Sharding.ZERO3, Sharding.FSDP):
        return True, True, True
    return False, False, False


# DeepSpeed ZeRO defaults, in elements (DeepSpeed config docs, "ZeRO Optimizations";
# deepspeed/runtime/zero/config.py).
ZERO_REDUCE_BUCKET_ELEMENTS = 5e8  # reduce_bucket_size
ZERO3_MAX_REUSE_DISTANCE = 1e9  # stage3_max_reuse_distance


def zero_reduce_bucket_bytes(grad_bytes: float) -> float:
    """The flat gradient bucket DeepSpeed keeps on the GPU: with `contiguous_gradients` (default on)
    deepspeed/runtime/zero/stage3.py allocates `__ipg_bucket_flat_buffer = torch.empty(
    reduce_bucket_size, dtype=self.dtype)` up front, stage_1_and_2.py its `ipg_buffer` of the
    same size at the first backward; gradients pass through it to be reduced (and, under
    offload_optimizer, copied to CPU RAM)."""
    return ZERO_REDUCE_BUCKET_ELEMENTS * grad_bytes


def zero3_live_bytes(layer: float, head: float, layers: int, layer_bytes: float, head_bytes: float) -> float:
    """Parameters ZeRO-3 holds gathered at the start of backward (`layer`, `head`: elements of one
    decoder layer and of the LM head).

    deepspeed/runtime/zero/partitioned_param_coordinator.py (`__params_to_release`) keeps a
    module's parameters gathered when the recorded trace uses them again within
    `stage3_max_reuse_distance` elements. Forward ends with the LM head, backward starts with it:
    the head stays. The j-th layer from the end is used again after the j − 1 layers behind it
    and the head, forward and backward (2·(j−1)·layer + 2·head elements): it stays while that is
    under the distance. Plus the layer being computed (or prefetched).
    """
    room = ZERO3_MAX_REUSE_DISTANCE - 2 * head
    kept_layers = min(layers, math.ceil(room / (2 * layer))) if room > 0 and layer > 0 else 0
    return head * head_bytes + (kept_layers + 1) * layer * layer_bytes


def fsdp_live_bytes(layer: float, root: float, layer_bytes: float, root_bytes: float) -> float:
    """Parameters FSDP (FULL_SHARD) holds unsharded at the start of backward (`root`: elements of
    the root module's own parameters: embeddings, final norm, LM head). FSDP does not reshard the
    root after forward, "with the intention that they are immediately used for backward
    computation" (torch/distributed/fsdp/_runtime_utils.py `_post_forward_reshard`; FSDP2
    `fully_shard` sets the root's reshard_after_forward to False); and two units: the one computed
    and the next, prefetched (BackwardPrefetch.BACKWARD_PRE, the default)."""
    return root * root_bytes + 2 * layer * layer_bytes


def ddp_bucket_bytes(grad_bytes_total: float) -> float:
    """DistributedDataParallel keeps gradient buckets as a separate copy of all gradients unless
    `gradient_as_bucket_view=True` (torch.nn.parallel.DistributedDataParallel docs)."""
    return grad_bytes_total
