"""Compose the component formulas into the peak-memory breakdown of one GPU.

Input is a request whose defaults are already filled (core.sizing.defaults.fill_defaults). The breakdown
always sums to the total and always has `overhead`.
"""

from __future__ import annotations

from core.catalogue.models import ModelKind, ModelSpec
from core.contract import Request, Task
from core.errors import EstimateError
from core.formulas import Breakdown
from core.formulas.multimodal import speech_inference
from core.formulas.params import Arch
from core.formulas.peak_diffusion import diffusion_inference, diffusion_training
from core.formulas.peak_llm import llm_inference, llm_training
from core.formulas.tts import tts_inference


def peak_breakdown(req: Request, spec: ModelSpec, arch: Arch | None) -> Breakdown:
    if spec.kind in (ModelKind.IMAGE, ModelKind.VIDEO):
        if req.task is Task.TRAINING:
            return diffusion_training(req, spec)
        return diffusion_inference(req, spec)
    if arch is None:
        raise EstimateError(f"model {spec.id!r} has no transformer architecture", field="model")
    if req.task is Task.TRAINING:
        return llm_training(req, spec, arch)
    if req.task is not Task.INFERENCE:
        raise EstimateError(f"{spec.name} is a language model: task must be inference or training", "task")
    if spec.kind is ModelKind.SPEECH:
        return speech_inference(req, spec, arch)
    if spec.kind is ModelKind.TTS:
        return tts_inference(req, spec, arch)
    return llm_inference(req, spec, arch)
