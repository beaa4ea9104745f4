"""Diffusion pipelines (image and video): denoiser working set and the VAE decode.

The pipeline runs in stages: text encoders, then the denoiser for every step, then the VAE
decoder. Weights of resident components add up; activations peak in one stage at a time.
"""

from __future__ import annotations

import math

# The VAE decoder upsamples latents back to pixels; at full resolution it holds several feature
# maps of 128-256 channels (diffusers AutoencoderKL: block_out_channels 128/256/512/512) plus the
# mid-block attention over (H/8)·(W/8) tokens. Fitted constant: elements alive at the decode peak
# per output pixel, calibrated on SDXL (4 images at 1024², fp32 and fp16 pipelines) and FLUX.1-dev
# (1 image at 1024²), docs/estimator.md. Counted in fp32: SDXL's pipeline upcasts its VAE
# (`force_upcast`) and diffusers' Upsample2D runs bf16 in fp32.
VAE_DECODE_ELEMENTS_PER_PIXEL = 1000
VAE_DECODE_BYTES = 4

# diffusers tiles: AutoencoderKL `tile_sample_min_size` 512 px (SD 1.x config), video VAEs
# `tile_sample_min_height/width` 256 px (AutoencoderKLHunyuanVideo, AutoencoderKLCogVideoX).
IMAGE_VAE_TILE = 512
VIDEO_VAE_TILE = 256

# Causal video VAEs decode a clip a slice of latent frames at a time, with a cache of the previous
# slice. Wan, HunyuanVideo: one latent frame (the temporal factor's frames) per pass. CogVideoX
# (diffusers AutoencoderKLCogVideoX `_decode` and `tiled_decode`): `num_latent_frames_batch_size =
# 2` latent frames per pass, the first pass taking the remainder too (13 latent frames: (0, 1, 2),
# then pairs), and "If you decode X latent frames together, the number of output frames is ...
# X + 6 frames" (its own comment: conv cache and the two temporal upsamplings). 49 frames: 9
# frames at once, not 4; at 720x480 the decode peaks near 12 GiB whatever the transformer's
# precision, as measured.
FRAME_BATCH_LATENT_FRAMES: dict[str, int] = {"cogvideox": 2}
FRAME_BATCH_EXTRA_FRAMES: dict[str, int] = {"cogvideox": 6}

# DiT denoisers patchify latents 2×2 (DiT, Peebles & Xie 2023; FLUX, SD3, Wan, HunyuanVideo).
PATCH = 2
# A denoiser given only by its parameter count (the UNets of SD 1.x/SDXL, whose widths vary by
# stage): a DiT block holds ~12h² parameters (4h² attention, 8h² MLP; Peebles & Xie 2023), so
# h ≈ sqrt(P / (12 · depth)) at a typical depth of 40 blocks, a proxy width. Every DiT in the
# catalogue gives its real width and depth from its transformer/config.json instead.
DIT_TYPICAL_DEPTH = 40
# DiT MLPs are 4× wide unless the config says otherwise (DiT `mlp_ratio` 4; Wan's `ffn_dim` is not).
DIT_MLP_RATIO = 4
# Classifier-free guidance runs conditional and unconditional passes as one batch of 2
# (Ho & Salimans 2022) in the SD/SDXL/SD3, CogVideoX and LTX pipelines of diffusers.
CFG_BATCH = 2
# Families that run one pass per step: FLUX and HunyuanVideo are guidance-distilled; Wan's pipeline
# runs the unconditional pass as a separate call (diffusers WanPipeline).
SINGLE_PASS_FAMILIES = frozenset({"flux", "hunyuan", "hunyuanvideo", "wan"})


def latent_tokens(width: int, height: int, spatial_factor: int, latent_frames: int = 1) -> int:
    """Tokens the denoiser attends over: latent pixels / patch², × latent frames for video."""
    return (
        latent_frames * math.ceil(width / spatial_factor / PATCH) * math.ceil(height / spatial_factor / PATCH)
    )


def latent_frame_count(frames: int, temporal_factor: int) -> int:
    """Causal video VAEs keep the first frame and compress the rest by the temporal factor."""
    return (frames - 1) // temporal_factor + 1


def denoiser_activation_bytes(tokens: int, batch: int, h: int, e: int, i: int | None = None) -> float:
    """One transformer block's working set at a time (inference frees activations per block):
    residual, normed, attention output and projection (4h) plus the MLP's hidden tensor before and
    after its activation, counted 4i (16h at the usual i = 4h). Attention itself runs through
    SDPA/flash, so no tokens² term."""
    mlp = i if i is not None else DIT_MLP_RATIO * h
    return tokens * batch * (4 * h + 4 * mlp) * e


def dit_params(
    layers: int,
    h: int,
    i: int | None = None,
    *,
    dual_stream_layers: int = 0,
    parallel_single: bool = False,
    cross_attention: bool = False,
    adaln_dim: int | None = None,
    adaln_sets: int = 1,
) -> float:
    """Parameters of a DiT's blocks from its config (biases, norms, patch and text embedders left
    out: under 2 % in FLUX.1, Wan 2.1, CogVideoX).

    - attention 4h² (q, k, v, out); cross-attention to the text another 4h²; MLP 2·h·i;
    - a dual-stream block (FLUX double block, SD3 MMDiT) has both for the image and the text stream,
      and adaLN-Zero per stream: Linear(adaln_dim, 6h) (diffusers AdaLayerNormZero);
    - a parallel single-stream block (FLUX/HunyuanVideo single block) fuses q, k, v and the MLP's
      up projection into one Linear(h, 3h + i) and projects [attention, MLP] back with
      Linear(h + i, h); its adaLN gives 3h (AdaLayerNormZeroSingle);
    - any other block: attention (+ cross) + MLP, with `adaln_sets` × 6h modulation
      (CogVideoXLayerNormZero modulates video and text: 2 sets, from a 512-wide time embedding);
      `adaln_dim` None means one adaLN shared by all blocks (PixArt-α `adaln_single`: Wan, LTX,
      Allegro), negligible per block.
    """
    i = i if i is not None else DIT_MLP_RATIO * h
    attn = 4 * h * h + (4 * h * h if cross_attention else 0)
    mlp = 2 * h * i
    mod = 6 * h * adaln_dim if adaln_dim else 0
    dual = 2 * (attn + mlp + mod)
    parallel = h * (3 * h + i) + (h + i) * h + mod // 2
    single = parallel if parallel_single else attn + mlp + adaln_sets * mod
    return float(dual_stream_layers * dual + (layers - dual_stream_layers) * single)


def vae_decode_bytes(width: int, height: int, images_at_once: int, tiled: bool, tile: int) -> float:
    """Peak of the VAE decoder for `images_at_once` outputs of width × height pixels."""
    pixels = min(width, tile) * min(height, tile) if tiled else width * height
    return images_at_once * pixels * VAE_DECODE_ELEMENTS_PER_PIXEL * VAE_DECODE_BYTES


def video_frames_decoded_at_once(family: str, frames: int, latent_frames: int, temporal_factor: int) -> int:
    """Output frames alive in one pass of the video VAE's decoder (see FRAME_BATCH_LATENT_FRAMES)."""
    batch = FRAME_BATCH_LATENT_FRAMES.get(family)
    if batch is None:
        return min(temporal_factor, frames)
    first = min(batch + latent_frames % batch, latent_frames)
    return min(first + FRAME_BATCH_EXTRA_FRAMES[family], frames)


def denoiser_width(params: float) -> int:
    """Hidden size of a DiT of `params` parameters at the typical depth."""
    return round(math.sqrt(params / (12 * DIT_TYPICAL_DEPTH)))


def sequential_offload_resident(component_bytes: float, blocks: int) -> float:
    """Sequential CPU offload (accelerate hooks) keeps one submodule on the GPU at a time."""
    return component_bytes / max(blocks, 1)


# A pipeline launched over several GPUs with FSDP and sequence parallelism (Wan 2.1's multi-GPU
# command: `torchrun --nproc_per_node=N generate.py --dit_fsdp --t5_fsdp --ulysses_size N`):
# wan/distributed/fsdp.py `shard_model` wraps every DiT block (and, `--t5_fsdp`, the T5) in FSDP
# FULL_SHARD, so each GPU keeps 1/N of their parameters and all-gathers one block at a time in the
# compute dtype (`MixedPrecision(param_dtype=bfloat16)`); torch FSDP's `limit_all_gathers=True`
# (default) lets "only two consecutive FSDP instances" hold gathered parameters at once. xDiT's USP
# (Ulysses × ring = N, generate.py asserts it) splits the tokens N ways, so each GPU holds 1/N of
# the activations. The VAE decodes on rank 0 alone (wan/text2video.py `if self.rank == 0`), whole.
FSDP_UNITS_IN_FLIGHT = 2


def sharded_block_working_set(
    block_params: float, compute_bytes: int, activation_bytes: float, gpus: int
) -> float:
    """Per GPU while the denoiser runs sharded over `gpus`: the blocks FSDP holds gathered in the
    compute dtype plus this GPU's share of the sequence's activations (see the constant)."""
    return FSDP_UNITS_IN_FLIGHT * block_params * compute_bytes + activation_bytes / gpus
