"""Defaults of text-to-speech requests (called by `core.sizing.defaults_multimodal.fill_multimodal`).

Bark, XTTS-v2 and F5-TTS run as their own PyTorch code (sized as the transformers engine: the
CUDA context and no serving runtime), in the dtype their code loads them in (`native_precision` of
the catalogue row: Bark and XTTS fp32, F5-TTS fp16); another 16-bit or fp32 may be asked. They
are inference only here.
"""

from __future__ import annotations

from typing import Any

from core.catalogue.models import ModelSpec
from core.contract import Assumption, Engine, Precision, Request, Task
from core.errors import EstimateError
from core.language.words import note

TTS_PRECISIONS = (Precision.FP32, Precision.FP16, Precision.BF16)


def fill_tts(req: Request, spec: ModelSpec) -> tuple[dict[str, Any], list[Assumption]]:
    if req.task is not Task.INFERENCE:
        raise EstimateError(f"{spec.name} is sized for speaking (inference) only", "task")
    if req.engine not in (None, Engine.TRANSFORMERS):
        raise EstimateError(f"{spec.name} runs as its own PyTorch code, sized as transformers", "engine")
    precision = req.precision or spec.native_precision or Precision.FP32
    if precision not in TTS_PRECISIONS:
        raise EstimateError(f"{spec.name} is sized in fp32, fp16 or bf16, not {precision}", "precision")
    if req.images_per_prompt:
        raise EstimateError(f"{spec.name} reads no images", "images_per_prompt")
    # each stage's context is fixed by the model (ModelSpec.tts), not asked: a number read as a
    # context ("on rtx 3060") changes nothing
    update: dict[str, Any] = {
        "engine": Engine.TRANSFORMERS,
        "precision": precision,
        "context_length": spec.max_context,
    }
    stages = ", ".join(f"{s.name} {s.positions}" for s in spec.tts)
    return update, [note("tts_stages", stages=stages, texts=req.concurrency)]
