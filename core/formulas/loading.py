"""What loading a model adds to its peak beyond the tensors it keeps: the CUDA context and allocator
reserve (`with_overhead`), and the 16-bit tensors in flight while a checkpoint is quantized on load."""

from __future__ import annotations

from core.catalogue.models import ModelSpec
from core.contract import Engine, Precision, Request, Task
from core.formulas import Breakdown
from core.formulas.overhead import ALLOCATOR_RESERVE_FRACTION, overhead_bytes
from core.formulas.params import Arch, attention_params_per_layer, linear_params, mlp_params_per_layer
from core.formulas.precision import QUANTIZED_ON_LOAD

# Decoder layers whose 16-bit tensors are in flight (or cached for reuse) while a checkpoint is
# quantized on load: one (see `loading_reserve_bytes`).
ONE_LAYER_IN_FLIGHT = 1


def with_overhead(
    parts: Breakdown, dynamic: float, req: Request, quantized_on_load: float = 0.0
) -> Breakdown:
    assert req.engine is not None
    parts["overhead"] = overhead_bytes(dynamic, req.engine, req.num_gpus, quantized_on_load)
    return parts


def quantized_on_load(precision: Precision, spec: ModelSpec, arch: Arch, n: int) -> float:
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
    return max(one_layer_16bit_bytes(arch) - (1 + ALLOCATOR_RESERVE_FRACTION) * dynamic_bytes, 0.0)


def one_layer_16bit_bytes(arch: Arch) -> float:
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
    on_load = quantized_on_load(req.precision, spec, arch, 1)
    if not (req.task is Task.INFERENCE and on_load and bnb_through_transformers(req)):
        return 0.0
    return one_layer_16bit_bytes(arch)


def bnb_through_transformers(req: Request) -> bool:
    return req.precision is Precision.NF4 and req.engine is Engine.TRANSFORMERS


def with_loading_reserve(
    parts: Breakdown, dynamic: float, req: Request, spec: ModelSpec, arch: Arch, on_load: float
) -> Breakdown:
    """`with_overhead` plus what quantizing `on_load` parameters per GPU while loading leaves:
    bitsandbytes NF4 through transformers as `loading_reserve_bytes`, other loaders the measured share."""
    if on_load and bnb_through_transformers(req):
        parts = with_overhead(parts, dynamic, req)
        parts["overhead"] += loading_reserve_bytes(arch, dynamic)
        return parts
    return with_overhead(parts, dynamic, req, on_load)
