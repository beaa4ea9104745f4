"""Text to speech (Bark, XTTS-v2, F5-TTS): the weights, the largest stage's working set, the runtime.

A TTS model here is a few transformers run one after another (`ModelSpec.tts`), all loaded at once.
What a stage holds beside the weights (`stage_bytes`): an autoregressive stage keeps the keys and
values of every layer for its whole context, 2 × L × positions × kv_dim × e per sequence; a stage
that runs every position at once holds one layer's working set for all positions
(`prefill_activation_bytes`). The stages run in sequence, so the peak is the largest, not their sum.
"""

from __future__ import annotations

from core.catalogue.models import ModelSpec, TtsStage
from core.contract import Request
from core.formulas.activations import prefill_activation_bytes
from core.formulas.overhead import overhead_bytes
from core.formulas.params import Arch
from core.formulas.precision import bits_per_weight, compute_bytes
from core.formulas.weights import weight_bytes

Breakdown = dict[str, float]


# All stages are loaded at once: Bark's `preload_models` keeps its three GPTs and EnCodec on the GPU
# unless SUNO_OFFLOAD_CPU; XTTS's GPT and HiFi-GAN decoder are one module; F5-TTS's DiT and its Vocos
# vocoder are loaded together. Autoregressive (cached) stages: Bark's semantic and coarse GPTs, XTTS's
# GPT. All-positions stages: Bark's non-causal fine GPT, F5-TTS's diffusion transformer (every flow
# step); F5-TTS runs the conditional and unconditional passes of classifier-free guidance as a batch
# of two (`TtsStage.batch`).
def stage_bytes(stage: TtsStage, arch: Arch, e: int, sequences: int) -> float:
    """What one stage holds beside the weights for `sequences` texts spoken at once."""
    batch = stage.batch * sequences
    if stage.cached:
        return 2 * stage.layers * stage.positions * arch.kv_dim * e * batch
    return prefill_activation_bytes(stage.positions, batch, arch, e)


def tts_inference(req: Request, spec: ModelSpec, arch: Arch) -> Breakdown:
    """Weights at their precision, the largest stage and the CUDA context, for one GPU."""
    assert req.precision and req.engine
    e = compute_bytes(req.precision)
    state = max(stage_bytes(stage, arch, e, req.concurrency) for stage in spec.tts)
    parts: Breakdown = {
        "weights": weight_bytes(arch.params, bits_per_weight(req.precision)),
        "tts_state": state,
    }
    parts["overhead"] = overhead_bytes(state, req.engine, 1)
    return parts
