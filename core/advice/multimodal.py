"""Mitigations of vision-language requests: smaller images (the processor's `max_pixels`, vLLM
--mm-processor-kwargs '{"max_pixels": …}', the fix vLLM's maintainers give for Qwen-VL start-up OOM:
vllm-project/vllm#16570) and fewer images per prompt (--limit-mm-per-prompt)."""

from __future__ import annotations

from typing import Any

from core.catalogue.models import ModelSpec
from core.contract import Engine, Request, Task

ONE_MEGAPIXEL = 1024 * 1024  # qwen-vl-utils' and vLLM's examples: max_pixels 1024*1024 (or 1280*28*28)


def image_mitigations(req: Request, spec: ModelSpec) -> list[tuple[str, dict[str, Any], dict[str, Any]]]:
    """(action, request changes, label params) for each that applies."""
    tower = spec.vision
    if tower is None or req.task is not Task.INFERENCE:
        return []
    images = req.images_per_prompt or 0
    pixels = req.max_pixels or tower.max_pixels
    out: list[tuple[str, dict[str, Any], dict[str, Any]]] = []
    runs = images > 0 or req.engine is Engine.VLLM  # vLLM profiles the encoder even for text
    if runs and pixels > ONE_MEGAPIXEL and tower.tile_size is None:
        out.append(("shrink_images", {"max_pixels": ONE_MEGAPIXEL}, {"max_pixels": ONE_MEGAPIXEL}))
    if images > 1:
        out.append(("fewer_prompt_images", {"images_per_prompt": 1}, {"images": 1}))
    return out
