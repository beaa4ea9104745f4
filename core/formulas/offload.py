"""llama.cpp offload to host RAM: which weights and KV cache stay on the GPU at `-ngl` / `--n-cpu-moe`.

As llama.cpp's `llama_model::load_tensors` places them (the sources are cited at `split`): `-ngl k`
puts the output layer on the GPU first, then the last k − 1 blocks (`total_layers` = n_layer + 1 is
the whole model); the input embedding stays in RAM; each layer's K and V go with the layer;
`--n-cpu-moe N` keeps the routed experts of the first N blocks in RAM.
Not modelled: the per-tensor bit mix inside a block (every block is counted at the file's average),
llama.cpp's own `--fit`.
"""

from __future__ import annotations

from dataclasses import dataclass

from core.contract import Precision
from core.formulas.params import Arch, linear_params, mlp_params_per_layer
from core.formulas.precision import bits_per_weight, embedding_bits, is_gguf
from core.formulas.weights import model_weight_bytes, weight_bytes

# The output matrix of a GGUF file: Q6_K whatever the mix (llama-quant.cpp `llama_tensor_get_type_impl`,
# `name == tn(LLM_TENSOR_OUTPUT)`: Q6_K unless the file type is Q8_0 or wider).
GGUF_OUTPUT_BITS = 210 * 8 / 256


@dataclass(frozen=True, slots=True)
class Split:
    """Where the weights of a GGUF model sit at one `-ngl` / `--n-cpu-moe` (bytes, whole model)."""

    gpu_bytes: float
    ram_bytes: float
    gpu_blocks: int  # blocks blk.N on the GPU
    output_on_gpu: bool
    cpu_moe_blocks: int  # GPU blocks whose routed experts are in RAM
    total_layers: int  # n_layer + 1, as llama.cpp counts -ngl


def total_layers(arch: Arch) -> int:
    """What `-ngl` counts: the blocks and the output layer (llama.cpp's "offloaded k/(n_layer+1)")."""
    return arch.L + 1


def head_bytes(arch: Arch, precision: Precision) -> float:
    """One V × h matrix: the input embedding, or the output layer (tied: the same tensor duplicated to
    the output's device, llama-model.cpp `TENSOR_DUPLICATED`)."""
    bits = (
        GGUF_OUTPUT_BITS
        if is_gguf(precision) and precision is not Precision.Q8_0
        else embedding_bits(precision)
    )
    return weight_bytes(arch.V * arch.h, bits)


def routed_expert_bytes_per_block(arch: Arch, precision: Precision) -> float:
    """The routed experts of one block (`ffn_{gate,up,down}_exps`), at the format's bits (MXFP4:
    the experts' own 4.25); 0 for a dense model."""
    if arch.experts <= 1:
        return 0.0
    experts = min(
        arch.L * mlp_params_per_layer(arch.h, arch.i, arch.gated, arch.experts), linear_params(arch)
    )
    return weight_bytes(experts, bits_per_weight(precision)) / arch.L


def block_bytes(arch: Arch, precision: Precision) -> float:
    """One block `blk.N` at the file's average: the whole model less input embedding and output layer."""
    whole = model_weight_bytes(arch.params, precision, arch)
    return max(whole - 2 * head_bytes(arch, precision), 0.0) / arch.L


# What llama.cpp does (src/llama-model.cpp `llama_model::load_tensors`, current master):
# - `i_gpu_start = max(n_layer + 1 - n_gpu_layers, 0)`, `act_gpu_layers = min(n_gpu_layers, n_layer + 1)`;
#   index `n_layer` is the output layer (`dev_output = get_layer_buft_list(n_layer)`), so `-ngl k`
#   puts the output layer (output norm + `output.weight`) on the GPU first (any k ≥ 1), then the last
#   k − 1 blocks `blk.N`; only k = n_layer + 1 is the whole model. The log says "offloaded
#   k/(n_layer+1) layers to GPU": `total_layers` is that n_layer + 1.
# - the input layer (`token_embd`) always stays in RAM ("there is very little benefit to offloading
#   the input layer, so always keep it on the CPU").
# - each layer's K and V go to that layer's device (llama-kv-cache.cpp, `offload_kqv` true by default).
# - `--n-cpu-moe N` (common/arg.cpp, ggml-org/llama.cpp#15077) overrides
#   `blk.i.ffn_(up|down|gate)_exps` to the CPU for i < N; `--cpu-moe` (= `-ot exps=CPU`) does it for
#   every layer. Shared experts (`ffn_*_shexp`), attention, norms and the router stay with their layer.
# - not modelled: `use_more_bits` layers weigh a little more than the file's average.
def split(arch: Arch, precision: Precision, gpu_layers: int | None, n_cpu_moe: int | None) -> Split:
    """The GPU and RAM shares of the weights at `-ngl gpu_layers` (None: all) and `--n-cpu-moe`."""
    n = total_layers(arch)
    k = n if gpu_layers is None else max(min(gpu_layers, n), 0)
    blocks = max(k - 1, 0)  # the output layer goes first
    output = k >= 1
    first_gpu_block = arch.L - blocks
    cpu_moe = max(min(n_cpu_moe or 0, arch.L) - first_gpu_block, 0)
    whole = model_weight_bytes(arch.params, precision, arch)
    head = head_bytes(arch, precision)
    gpu = blocks * block_bytes(arch, precision) + (head if output else 0.0)
    gpu -= cpu_moe * routed_expert_bytes_per_block(arch, precision)
    gpu = max(gpu, 0.0)
    return Split(
        gpu_bytes=gpu,
        ram_bytes=max(whole - gpu, 0.0),
        gpu_blocks=blocks,
        output_on_gpu=output,
        cpu_moe_blocks=cpu_moe,
        total_layers=n,
    )


def kv_gpu_share(arch: Arch, gpu_layers: int | None) -> float:
    """The share of the KV cache on the GPU: that of its blocks (each layer's K and V on its device)."""
    if gpu_layers is None:
        return 1.0
    return max(min(gpu_layers, total_layers(arch)) - 1, 0) / arch.L
