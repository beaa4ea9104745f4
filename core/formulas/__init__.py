"""One small documented function per memory component, each citing its source.

params      architecture numbers (L, h, a, k, d, i, V) and parameter counts
weights     parameters × true bits per weight
kv_cache    MHA/GQA, sliding-window and MLA caches
activations inference working set, training activations (Korthikanti et al.), logits
training    gradients, optimizer states, master weights, LoRA, ZeRO/FSDP sharding
diffusion   denoiser working set, VAE decode, offload
overhead    CUDA context, allocator reserve, engine runtime, NCCL buffers
peak        composes them into the per-GPU breakdown of a request
"""
