"""Speech recognition (Whisper): what one batch of audio windows holds beside the weights.

Whisper pads or cuts audio to 30-second windows of `max_source_positions` = 1500 encoder positions,
whatever the chunk length asked, and writes at most `max_target_positions` = 448 tokens per window
(sources at `encoder_output_bytes`). Per window of the batch: the encoder's output
(`encoder_output_bytes`), the decoder's cross-attention keys and values over it (`cross_kv_bytes`:
once per window under CTranslate2, once per beam under transformers) and its self-attention cache
(`self_kv_bytes`, per beam, a full window). The encoder's working set for the batch
(`encoder_working_bytes`) is freed before decoding: the peak is the larger of the two phases.
"""

from __future__ import annotations

from core.formulas.activations import prefill_activation_bytes
from core.formulas.params import Arch


# Whisper pads or cuts audio to 30-second windows: 3000 log-mel frames, halved by the encoder's
# stride-2 convolution to `max_source_positions` = 1500 positions (Radford et al. 2022, sec. 2.2;
# config.json `max_source_positions`), whatever the chunk length asked (transformers' pipeline
# `chunk_length_s` and faster-whisper's `chunk_length` only decide where the audio is cut). The
# decoder writes at most `max_target_positions` = 448 tokens per window, the prompt of previous text
# included. `windows` is the batch (faster-whisper `batch_size`, the transformers pipeline's).
def encoder_output_bytes(windows: int, positions: int, d: int, e: float) -> float:
    return windows * positions * d * e


def cross_kv_bytes(windows: int, beams_sharing: int, L_dec: int, positions: int, d: int, e: float) -> float:
    """Keys and values of every decoder layer over the encoder output, 2 × L_dec × 1500 × d per window;
    `beams_sharing` copies each: 1 under CTranslate2 (beams share the encoder memory), the beams under
    transformers (`generate` repeats the encoder output for every beam, `_expand_inputs_for_generation`)."""
    return 2 * L_dec * positions * d * e * windows * beams_sharing


def self_kv_bytes(windows: int, beams: int, L_dec: int, tokens: int, d: int, e: float) -> float:
    """The decoder's self-attention cache, 2 × L_dec × tokens × d per beam (the worst case: a full
    window, 448 tokens)."""
    return 2 * L_dec * tokens * d * e * windows * beams


def encoder_working_bytes(windows: int, positions: int, arch: Arch, e: int) -> float:
    """One encoder layer over every window of the batch at once (no autograd)."""
    return prefill_activation_bytes(positions, windows, arch, e)
