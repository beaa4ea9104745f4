"""Vision-language models: image tokens, the image encoder's working set and what vLLM reserves for it.

Image tokens (`image_tokens`): a patch model's processor resizes the image to at most `max_pixels` and
merges merge² patches into one LLM token; a tile model cuts up to `max_tiles` tiles of a fixed size,
each a fixed token count. Those tokens take KV cache like text. The encoder runs over every patch
of the images encoded at once; its working set is one layer's (`encoder_working_bytes`). vLLM v1
sizes this at start-up: it encodes a dummy batch of as many largest-size images as its encoder budget
holds and keeps their outputs in the encoder cache while the text model's dummy forward runs
(`vllm_profiled_images`, `vllm_encoder_cache_tokens`; sources cited there).
"""

from __future__ import annotations

import math

from core.catalogue.models import VisionTower
from core.formulas.activations import VLLM_MAX_BATCHED_TOKENS, prefill_activation_bytes
from core.formulas.params import Arch


# Processors: transformers `Qwen2VLImageProcessor` `smart_resize` (14-px patches, 2×2 merged, 28 px a
# token side; `max_pixels` a multiple of patch × merge px a side); Qwen3-VL 16-px patches: 32 px;
# Pixtral 16-px patches and one [IMG_BREAK] token per row (`PixtralImageProcessor`). Tile models:
# Gemma 3: one 896-px image → 256 tokens; InternVL: 448-px tiles → 256 each, plus a thumbnail;
# Llama 4: 336-px tiles → 144 each, plus a global tile.
def image_tokens(tower: VisionTower, pixels: int) -> int:
    """LLM tokens of one square image of `pixels` after the processor's resize (clamped to
    [min_pixels, max_pixels] for a patch model; tiles capped at `max_tiles` for a tile model)."""
    if tower.tile_size is not None and tower.tokens_per_tile is not None:
        return _tiles(tower, pixels) * tower.tokens_per_tile
    side = tower.patch_size * tower.merge_size  # px per token side
    pixels = min(max(pixels, tower.min_pixels), tower.max_pixels)
    per_side = max(math.floor(math.sqrt(pixels) / side), 1)
    return per_side * per_side + (per_side if tower.row_break_tokens else 0)


def _tiles(tower: VisionTower, pixels: int) -> int:
    assert tower.tile_size is not None
    tiles = min(max(math.ceil(pixels / tower.tile_size**2), 1), tower.max_tiles)
    return tiles + 1 if tiles > 1 and tower.thumbnail else tiles


def image_patches(tower: VisionTower, pixels: int) -> int:
    """Patches the encoder's layers see for one image (before merging or pooling)."""
    if tower.tile_size is not None:
        return _tiles(tower, pixels) * (tower.tile_size // tower.patch_size) ** 2
    if tower.row_break_tokens:  # the break tokens are added after the encoder
        side = tower.patch_size * tower.merge_size
        per_side = max(math.floor(math.sqrt(min(max(pixels, tower.min_pixels), tower.max_pixels)) / side), 1)
        return per_side * per_side * tower.merge_size**2
    return image_tokens(tower, pixels) * tower.merge_size**2


def tower_arch(tower: VisionTower) -> Arch:
    """The tower's widths as the activation formula reads them (full multi-head attention)."""
    a = tower.attention_heads
    return Arch(
        L=tower.layers,
        h=tower.hidden_size,
        a=a,
        k=a,
        d=tower.hidden_size // a,
        i=tower.intermediate_size,
        V=0,
        experts=1,
        active_experts=1,
        tied=False,
        gated=tower.gated_ffn,
        params=tower.params_b * 1e9,
        dropout=0.0,
        attention_dropout=0.0,
    )


def encoder_working_bytes(tower: VisionTower, patches: int, e: int) -> float:
    """One encoder layer's working set for `patches` patches encoded at once (no autograd)."""
    return prefill_activation_bytes(patches, 1, tower_arch(tower), e)


# vLLM v1's start-up profile: the encoder budget is max(max_num_batched_tokens, the largest item's
# tokens) (`compute_encoder_budget`, vllm/v1/core/encoder_cache_manager.py), and `profile_run`
# (gpu_model_runner.py) encodes a dummy batch of as many largest-size images as that budget holds (at
# least one, at most the per-prompt limit × max sequences) and keeps their outputs in the encoder
# cache while the text model's dummy forward runs.
def vllm_profiled_images(tower: VisionTower, pixels: int, images_per_prompt: int, max_seqs: int) -> int:
    """Images `profile_run` encodes at once: as many of the largest as the encoder budget holds."""
    tokens = image_tokens(tower, pixels)
    budget = max(VLLM_MAX_BATCHED_TOKENS, tokens)
    return max(1, min(max(images_per_prompt, 1) * max_seqs, budget // tokens))


def vllm_encoder_cache_tokens(tower: VisionTower, pixels: int) -> int:
    """vLLM's encoder cache size in tokens: max(max_num_batched_tokens, the largest item's tokens)."""
    return max(VLLM_MAX_BATCHED_TOKENS, image_tokens(tower, pixels))


def unquantized_tower_bytes(tower: VisionTower, weight_bytes_per_param: float) -> float:
    """What the tower adds beyond the model's weights at a quantized format: it stays 16-bit
    (llama.cpp's mmproj GGUF is f16; AWQ/GPTQ checkpoints of Qwen-VL leave `visual` unquantized;
    vLLM's quantized VLMs skip the vision tower), while the weights counted it at the format's bits."""
    return max(2.0 - weight_bytes_per_param, 0.0) * tower.params_b * 1e9
