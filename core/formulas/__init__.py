"""One small documented function per memory component, each citing its source.

`params`: architecture numbers (L, h, a, k, d, i, V) and parameter counts; `weights`: parameters ×
true bits per weight; `kv_cache`: MHA/GQA, sliding-window and MLA caches; `activations`: inference
working set, training activations (Korthikanti et al.), logits; `training`: gradients, optimizer
states, master weights, LoRA, ZeRO/FSDP sharding; `diffusion`: denoiser working set, VAE decode,
offload; `overhead`: CUDA context, allocator reserve, engine runtime, NCCL buffers; `precision`: bits
per stored weight, bytes per KV element, which layers a format leaves wide; `loading`: what loading
adds (overhead, tensors in flight while quantizing on load); `peak`: composes them into the per-GPU
breakdown of a request (peak_llm, peak_diffusion). One module per further family: gguf, vllm,
offload, recurrent, speculative, speech, vision, multimodal.
"""

Breakdown = dict[str, float]  # component -> bytes on one GPU
BILLION = 1e9
FP32 = 4  # bytes of a float32
