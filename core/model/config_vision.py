"""The vision tower of a Hugging Face vision-language model, read from its config.json `vision_config`
(not only `text_config`): the same facts `core/data/vision.toml` gives catalogue models.

Keys differ by family: Qwen2/2.5/3-VL `depth`, `num_heads`, `spatial_merge_size` (Qwen2-VL `embed_dim`,
`mlp_ratio`); SigLIP/CLIP-style towers (Gemma 3, Llama 4, InternVL, Pixtral) `num_hidden_layers`,
`num_attention_heads`, `image_size`. A fixed token count per image (`mm_tokens_per_image`, Gemma 3)
makes it a one-tile model. The per-image pixel cap is the processor's (preprocessor_config.json),
which config.json lacks: Qwen-VL's published preprocessors set max_pixels 12845056 (16384 tokens of
28 px), Qwen3-VL 16777216; other towers take their `image_size` square.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pydantic import ValidationError

from core.catalogue.models import VisionTower

QWEN_VL_MAX_PIXELS = {
    "qwen2_vl": 12845056,
    "qwen2_5_vl": 12845056,
    "qwen3_vl": 16777216,
    "qwen3_vl_moe": 16777216,
}
QWEN_VL_MIN_PIXELS = 3136


def _int(cfg: Mapping[str, Any], *keys: str) -> int | None:
    for key in keys:
        value = cfg.get(key)
        if isinstance(value, int | float) and not isinstance(value, bool) and value > 0:
            return int(value)
    return None


def vision_tower(config: Mapping[str, Any], model_id: str) -> VisionTower | None:
    """The tower a config.json describes, or None (no `vision_config`, or one this does not read)."""
    vision = config.get("vision_config")
    if not isinstance(vision, Mapping):
        return None
    model_type = str(config.get("model_type") or "")
    layers = _int(vision, "depth", "num_hidden_layers")
    hidden = _int(vision, "hidden_size", "embed_dim")
    heads = _int(vision, "num_heads", "num_attention_heads")
    patch = _int(vision, "patch_size")
    if not (layers and hidden and heads and patch):
        return None
    ratio = vision.get("mlp_ratio")
    inter = _int(vision, "intermediate_size") or (
        int(hidden * ratio) if isinstance(ratio, int | float) else 4 * hidden
    )
    gated = "silu" in str(vision.get("hidden_act", "")) and model_type != "qwen2_vl"
    merge = _int(vision, "spatial_merge_size") or 1
    image = _int(vision, "image_size")
    tokens = _int(config, "mm_tokens_per_image")
    params = layers * (4 * hidden * hidden + (3 if gated else 2) * hidden * inter) / 1e9
    fields: dict[str, Any] = {
        "model": model_id,
        "params_b": round(params, 3),
        "layers": layers,
        "hidden_size": hidden,
        "attention_heads": heads,
        "intermediate_size": inter,
        "gated_ffn": gated,
        "patch_size": patch,
        "merge_size": merge,
        "source": f"https://huggingface.co/{model_id}/blob/main/config.json vision_config",
    }
    if model_type in QWEN_VL_MAX_PIXELS:
        fields |= {"max_pixels": QWEN_VL_MAX_PIXELS[model_type], "min_pixels": QWEN_VL_MIN_PIXELS}
    elif image and tokens:
        fields |= {
            "max_pixels": image * image,
            "tile_size": image,
            "tokens_per_tile": tokens,
            "merge_size": 1,
        }
    elif image:
        fields |= {"max_pixels": image * image}
    else:
        return None
    try:
        return VisionTower.model_validate(fields)
    except ValidationError:
        return None
