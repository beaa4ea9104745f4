"""Text-to-speech models (issue 22 item 4): Bark, XTTS-v2 and F5-TTS against their published
figures, the formula's structure, and free text routed to them."""

from __future__ import annotations

import pytest

from core.errors import EstimateError, ParseError
from core.parse import parse
from core.sizing.estimate import estimate

MiB = 2**20
GB = 10**9


def _run(**request: object) -> dict[str, float]:
    result = estimate({"task": "inference", **request})
    return {**result.breakdown, "total": result.total_bytes}


# --- published figures -----------------------------------------------------------------------------

# SWivid/F5-TTS#197, the maintainer (SWivid, 2024-10-21): "i just tweak the `inference-cli.py` script,
# make sure it is not loading unneeded asr pipeline. it takes 1622M gpu mem for me running it"
# (the whole process as nvidia-smi shows it: compared with the whole estimate). The loader of that day
# (commit 5600d90, model/utils.py load_checkpoint) ran the model in fp16 (`model.half()` on CUDA), as
# today's does (`model.to(torch.float16)`). The estimate is 25% under (1,221 MiB): that loader built
# the model in fp32 on the GPU (`CFM(...).to(device)`) and halved it without
# `torch.cuda.empty_cache()`, so nvidia-smi also showed the fp32 blocks the caching allocator kept
# (~0.67 GB); today's load_checkpoint empties the cache after loading.
F5_MEASURED_MIB, F5_TOLERANCE = 1622, 0.25


def test_f5_tts_meets_the_maintainers_measurement() -> None:
    result = estimate({"task": "inference", "model": "f5-tts"})
    assert result.request.precision == "fp16"  # load_checkpoint's default on CUDA (cc >= 7)
    total = result.total_bytes / MiB
    assert abs(total - F5_MEASURED_MIB) / F5_MEASURED_MIB <= F5_TOLERANCE


def test_f5_tts_under_2_gb() -> None:
    """SWivid/F5-TTS#230, the maintainer: with inference-cli.py and the reference text typed in (no
    Whisper transcription) "只要2G不到" — under 2 GB: a capacity figure, an upper bound."""
    assert _run(model="f5-tts")["total"] < 2 * 2**30


def test_xtts_v2_loaded_matches_the_reported_vram() -> None:
    """coqui-ai/TTS#3976 (torch 2.2.1+cu121): "when model loading the RAM required close to 5 GB and
    VRAM use 2.1 GB" — the model loaded, before generating (the issue's screenshot of GPU usage;
    the unit read as 10^9 bytes): the weights and the runtime (CUDA context) meet it within 16%
    (+16%: 2.43 GB; +8% if the figure is GiB); generating adds the GPT's KV cache on top."""
    parts = _run(model="xtts-v2")
    loaded = (parts["weights"] + parts["overhead"]) / GB
    assert abs(loaded - 2.1) / 2.1 <= 0.16
    assert parts["total"] / GB > 2.1


def test_bark_fits_the_readmes_12_gb() -> None:
    """suno-ai/bark README.md, "Hardware and Inference Speed": "The full version of Bark requires
    around 12GB of VRAM to hold everything on GPU at the same time" — a requirement, an upper bound."""
    assert _run(model="bark")["total"] < 12 * GB


# --- the formula's structure ---------------------------------------------------------------------


def test_bark_stages_are_held_in_sequence_not_summed() -> None:
    """Bark's semantic and coarse GPTs each cache 24 layers × 1024 positions × 1024 keys and values
    in fp32; they run one after the other, so the state is one of them, not both."""
    one_stage = 2 * 24 * 1024 * 1024 * 4
    assert _run(model="bark")["tts_state"] == one_stage


def test_half_precision_halves_the_weights() -> None:
    fp32, fp16 = _run(model="xtts-v2"), _run(model="xtts-v2", precision="fp16")
    assert fp32["weights"] == 2 * fp16["weights"]
    assert fp32["tts_state"] == 2 * fp16["tts_state"]


def test_more_texts_at_once_grow_the_state() -> None:
    one, four = _run(model="f5-tts"), _run(model="f5-tts", concurrency=4)
    assert four["tts_state"] == pytest.approx(4 * one["tts_state"])
    assert four["weights"] == one["weights"]


@pytest.mark.parametrize(
    ("request_", "field"),
    [
        ({"task": "training", "model": "bark"}, "task"),
        ({"task": "inference", "model": "bark", "engine": "vllm"}, "engine"),
        ({"task": "inference", "model": "bark", "precision": "q4_k_m"}, "precision"),
    ],
)
def test_what_is_not_sized(request_: dict[str, object], field: str) -> None:
    with pytest.raises(EstimateError) as caught:
        estimate(request_)
    assert caught.value.field == field


# --- free text -------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "model"),
    [
        ("сколько видеопамяти нужно для xtts v2", "xtts-v2"),
        ("bark tts on rtx 3060", "bark"),
        ("f5-tts на 4060", "f5-tts"),
        ("F5 TTS на 4090", "f5-tts"),  # an alias with a space: its "tts" is not the unsized kind
        ("coqui xtts на 8 гб", "xtts-v2"),
    ],
)
def test_named_tts_models_are_sized(text: str, model: str) -> None:
    assert parse(text).model == model


@pytest.mark.parametrize("text", ["tts на 3060", "озвучка текста на 3060", "silero tts", "синтез речи"])
def test_other_tts_stays_not_sized_yet(text: str) -> None:
    with pytest.raises(ParseError) as caught:
        parse(text)
    assert caught.value.code == "unsized_model"


# --- the answer ------------------------------------------------------------------------------------


def test_the_answer_says_no_context_no_decode_speed_and_only_sized_precisions() -> None:
    """A TTS answer names no text context (each stage's is fixed, in the `tts_stages` note), no token
    speed (audio spoken per second is not modelled) and offers no int8/4-bit it cannot size."""
    result = estimate({"task": "inference", "model": "bark", "context_length": 3060, "gpus": ["t4"]})
    codes = [a.code for a in result.assumptions]
    assert "tts_stages" in codes and "context_beyond_model" not in codes
    assert "decode_bandwidth_bound" not in codes and not result.throughput
    assert result.request.context_length == 1024
    assert all(str(m.params.get("precision", "fp16")) in ("fp16", "bf16") for m in result.mitigations)
    assert not any(m.action.startswith("quantize_int") for m in result.mitigations)
