"""Compose the vision and speech formulas into the per-GPU breakdown (called by `core.formulas.peak`).

Vision (`vision_encoder`): the tower's bytes beyond what the weights counted (it stays 16-bit when the
text model is quantized), the encoder outputs waiting for the text model, and whatever of the
encoder's one-layer working set exceeds the text model's own (the two run one after the other). How
many images are encoded at once is the engine's: vLLM's start-up profiling (`core.formulas.vision`),
transformers every image of every prompt in one forward (Qwen2.5-VL `get_image_features` concatenates
`pixel_values`), llama.cpp one image at a time (mtmd `mtmd_helper_eval_chunks` encodes chunk by
chunk, its embeddings in fp32).

Speech (`speech_state`): `core.formulas.speech` per window, the larger of the encoding and decoding
phases.
"""

from __future__ import annotations

from dataclasses import replace

from core.catalogue.models import ModelSpec
from core.contract import Engine, Precision, Request, Task
from core.formulas import FP32
from core.formulas import speech as sp
from core.formulas import vision as vi
from core.formulas.activations import inference_logits_bytes
from core.formulas.overhead import overhead_bytes
from core.formulas.params import Arch
from core.formulas.precision import bits_per_weight, bytes_per_weight, compute_bytes
from core.formulas.weights import weight_bytes

Breakdown = dict[str, float]
VLLM_MAX_NUM_SEQS = 256  # vllm EngineArgs max_num_seqs default (v1, most GPUs)
LLAMA_CPP_EMBD_BYTES = 4  # mtmd_get_output_embd: float32 image embeddings


def prompt_image_tokens(req: Request, spec: ModelSpec) -> int:
    """Image tokens in each prompt: they take KV cache (and prefill) like text tokens."""
    tower = spec.vision
    if tower is None or req.task is not Task.INFERENCE or not req.images_per_prompt:
        return 0
    return req.images_per_prompt * vi.image_tokens(tower, req.max_pixels or tower.max_pixels)


def vision_encoder_bytes(req: Request, spec: ModelSpec, llm_activations: float) -> float:
    """What the image encoder adds to one GPU's peak (all of it when not split), 0 without one."""
    tower = spec.vision
    if tower is None or req.task is not Task.INFERENCE or req.precision is None:
        return 0.0
    images = req.images_per_prompt or 0
    # the tower is loaded with the model: 16-bit beside quantized text weights (llama.cpp: only with
    # --mmproj, i.e. when images are asked)
    wide = vi.unquantized_tower_bytes(tower, bytes_per_weight(req.precision))
    if req.engine is not Engine.VLLM and images == 0:
        return 0.0 if req.engine is Engine.LLAMA_CPP else wide  # text only: the encoder never runs
    pixels = req.max_pixels or tower.max_pixels
    e = FP32 if req.precision is Precision.FP32 else 2
    tokens, patches = vi.image_tokens(tower, pixels), vi.image_patches(tower, pixels)
    h = spec.hidden_size or tower.hidden_size
    if req.engine is Engine.VLLM:
        at_once = vi.vllm_profiled_images(tower, pixels, images, VLLM_MAX_NUM_SEQS)
        outputs = at_once * tokens * h * e
    elif req.engine is Engine.LLAMA_CPP:
        at_once, outputs = 1, tokens * h * LLAMA_CPP_EMBD_BYTES
    else:
        at_once = images * req.concurrency
        outputs = at_once * tokens * h * e
    working = vi.encoder_working_bytes(tower, at_once * patches, e)
    return wide + outputs + max(working - llm_activations, 0.0)


def speech_inference(req: Request, spec: ModelSpec, arch: Arch) -> Breakdown:
    """Weights, the windows' state (`core.formulas.speech`) and the runtime, for one GPU."""
    assert req.precision and req.engine and spec.speech and spec.encoder_layers and req.beam_size
    shape = spec.speech
    e = compute_bytes(req.precision)  # int8 runs as CTranslate2's int8_float16: 16-bit activations
    # windows transcribed together: the batch (faster-whisper / pipeline `batch_size`); the parser
    # reads "batch 8" of an inference question as concurrency, so either counts
    d, L_dec, windows, beams = arch.h, spec.layers or 1, max(req.batch_size, req.concurrency), req.beam_size
    ct2 = req.engine is Engine.CTRANSLATE2
    # faster-whisper's sequential transcribe conditions on the previous text (a prompt of up to
    # max_target_positions // 2 - 1 tokens); its batched pipeline and transformers do not. Either
    # way a window generates at most max_target_positions // 2 (openai whisper `sample_len`).
    conditioned = ct2 and windows == 1
    tokens = shape.decoder_positions if conditioned else shape.decoder_positions // 2 + 4
    n = shape.encoder_positions
    out = sp.encoder_output_bytes(windows * (1 if ct2 else beams), n, d, e)
    cross = sp.cross_kv_bytes(windows, 1 if ct2 else beams, L_dec, n, d, e)
    own = sp.self_kv_bytes(windows, beams, L_dec, tokens, d, e)
    logits = inference_logits_bytes(windows * beams, arch.V)
    encoder = replace(arch, L=spec.encoder_layers)
    encoding = sp.encoder_working_bytes(windows, n, encoder, e) + sp.encoder_output_bytes(windows, n, d, e)
    state = max(encoding, out + cross + own + logits)
    weights = weight_bytes(arch.params, bits_per_weight(req.precision))
    # several GPUs hold whole replicas (faster-whisper `device_index=[0, 1]`, a pipeline per card)
    parts: Breakdown = {"weights": weights, "speech_state": state}
    parts["overhead"] = overhead_bytes(state, req.engine, 1)
    return parts
