"""Defaults of vision-language and speech requests (called by `core.sizing.defaults.fill_defaults`).

Vision: images per prompt 0 unless asked (a text-only prompt; vLLM still reserves its encoder budget,
`core.formulas.vision`), the processor's own `max_pixels`. Speech: faster-whisper (CTranslate2) fp16,
its `transcribe` defaults (beam_size 5), one 30-second window at a time; transformers decodes
greedily (`generate` num_beams 1). A speech model has no text context to size.
"""

from __future__ import annotations

from typing import Any

from core.catalogue.models import ModelKind, ModelSpec
from core.contract import Assumption, Engine, Precision, Request, Task
from core.errors import EstimateError
from core.formulas.vision import image_tokens
from core.language.words import note
from core.sizing.defaults_tts import fill_tts

FASTER_WHISPER_BEAM = 5  # faster_whisper.WhisperModel.transcribe(beam_size=5)
TRANSFORMERS_BEAM = 1  # GenerationConfig num_beams=1 in Whisper's generation_config.json

SPEECH_ENGINES = (Engine.CTRANSLATE2, Engine.TRANSFORMERS)
# What the speech engines run, the default first: CTranslate2's compute_type float16 / bfloat16 /
# int8 (int8_float16) / float32 (faster-whisper `WhisperModel(compute_type=...)`), transformers'
# torch_dtype; no GGUF, AWQ or 4-bit Whisper in either.
SPEECH_PRECISIONS = (Precision.FP16, Precision.BF16, Precision.INT8, Precision.FP32)
# The request fields a speech answer is sized by besides the model (and engine, beams): Whisper's
# windows are fixed (`chunk_seconds` of audio, `max_target_positions` tokens), so there is no text
# context to choose; how many windows are transcribed at once is the batch (faster-whisper's
# `BatchedInferencePipeline.transcribe(batch_size=...)`, a transformers pipeline's `batch_size`).
SPEECH_SIZED_BY = ("precision", "batch_size")


def speech_engine(req: Request) -> Engine:
    return req.engine or Engine.CTRANSLATE2


def fill_multimodal(req: Request, spec: ModelSpec) -> tuple[dict[str, Any], list[Assumption]]:
    """The fields a vision or speech request leaves open, and what was assumed."""
    if spec.kind is ModelKind.SPEECH:
        return _speech(req, spec)
    if spec.kind is ModelKind.TTS:
        return fill_tts(req, spec)
    if req.engine is Engine.CTRANSLATE2:
        raise EstimateError("ctranslate2 (faster-whisper) runs speech models only", "engine")
    if spec.vision is None:
        if req.images_per_prompt:
            raise EstimateError(f"{spec.name} reads no images: it has no vision encoder", "images_per_prompt")
        return {}, []
    if req.task is not Task.INFERENCE:
        return {}, []
    update: dict[str, Any] = {}
    notes: list[Assumption] = []
    pixels = req.max_pixels or spec.vision.max_pixels
    if req.max_pixels is None:
        update["max_pixels"] = pixels
    images = req.images_per_prompt
    if images is None:
        images = 0
        update["images_per_prompt"] = 0
    tokens = image_tokens(spec.vision, pixels)
    code = "vision_images" if images else "vision_text_only"
    notes.append(note(code, images=images, tokens=tokens, megapixels=round(pixels / 1e6, 1)))
    if req.engine is Engine.VLLM:  # its start-up profiling encodes the largest image(s) anyway
        notes.append(note("vision_vllm_profile", tokens=tokens, megapixels=round(pixels / 1e6, 1)))
    return update, notes


def _speech(req: Request, spec: ModelSpec) -> tuple[dict[str, Any], list[Assumption]]:
    if req.task is not Task.INFERENCE:
        return {}, []  # fine-tuning: sized as the encoder-decoder it is (core.formulas.peak training)
    engine = speech_engine(req)
    if engine not in SPEECH_ENGINES:
        raise EstimateError(f"{spec.name} runs under ctranslate2 (faster-whisper) or transformers", "engine")
    precision = req.precision or Precision.FP16
    if precision not in SPEECH_PRECISIONS:
        raise EstimateError(f"{spec.name} is sized in fp32, fp16, bf16 or int8, not {precision}", "precision")
    if req.images_per_prompt:
        raise EstimateError(f"{spec.name} reads no images", "images_per_prompt")
    default_beam = FASTER_WHISPER_BEAM if engine is Engine.CTRANSLATE2 else TRANSFORMERS_BEAM
    beams = req.beam_size or default_beam
    assert spec.speech is not None
    update: dict[str, Any] = {"engine": engine, "precision": precision, "beam_size": beams}
    notes = [
        note(
            "speech_windows",
            windows=max(req.batch_size, req.concurrency),
            beams=beams,
            seconds=spec.speech.chunk_seconds,
            tokens=spec.speech.decoder_positions,
        )
    ]
    return update, notes
