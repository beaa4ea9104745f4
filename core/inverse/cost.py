"""How long and how much: a training run, a day of serving, a thousand images — on the recommended
configuration and one or two alternatives, as ranges (`Result.cost`).

Training: FLOPs = factor × N × tokens (`flops_factor`: 6 full, 4 LoRA/QLoRA, +2 with gradient
checkpointing, sources at `FULL_FLOPS_FACTOR`); hours = FLOPs / (cards × peak bf16 TFLOPS × MFU), MFU
a range (`MFU_*`, each with its source), more cards scaling linearly (data parallel: optimistic
across PCIe cards). Serving (`_serving`): each request's decode at the configuration's aggregate
decode speed plus its compute-bound prefill; servers = a day's busy hours / 24, rounded up.
Generation: seconds per image or clip only where a published figure exists for that model, card and
resolution (`core/data/throughput.toml`, each row with its source; `core.inverse.cost_generation`:
each card of a server renders on its own); no figure: no time, said so — never a guess.
"""

from __future__ import annotations

import math

from core.catalogue.catalog import Catalog
from core.contract import Assumption, Cost, Method, Request, Result, Task
from core.inverse.cost_generation import Figure, _generation, figure_for, figures
from core.inverse.cost_options import SECONDS_AN_HOUR, _active_params, _configs, _option, _peak_flops
from core.language.words import note

__all__ = [  # figures and figure_for live in core.inverse.cost_generation, and are still read from here
    "BATCH_FILL",
    "DEFAULT_OUTPUTS",
    "DEFAULT_PROMPT_TOKENS",
    "DEFAULT_TOKENS_PER_REQUEST",
    "FROZEN_BASE_FLOPS_FACTOR",
    "FULL_FLOPS_FACTOR",
    "HOURS_A_DAY",
    "MFU_FULL",
    "MFU_LORA",
    "MFU_QLORA",
    "PREFILL_MFU",
    "RECOMPUTE_FLOPS",
    "SECONDS_AN_HOUR",
    "Figure",
    "attach_cost",
    "cost_of",
    "figure_for",
    "figures",
    "flops_factor",
    "mfu_range",
    "training_tokens",
    "wants_cost",
]

# Training FLOPs = factor × N × tokens, N the parameters each token passes through (MoE: the active
# ones), tokens = dataset tokens (or examples × typical length) × epochs.
# - Full training: 6 (forward 2·N per token, backward 4·N: gradients of the activations and of the
#   weights, 2·N each; Kaplan et al. 2020, "Scaling Laws for Neural Language Models", §2.1, C ≈ 6NBS).
# - LoRA / QLoRA: 4. The frozen base still runs the forward (2·N) and the backward through the
#   activations (2·N) to reach every adapter, but computes no weight gradients for frozen weights
#   (autograd skips `requires_grad=False` weights); the adapters' own FLOPs are r·(d_in + d_out) per
#   matrix against d_in·d_out, under 1% at rank 16 — left out.
# - Gradient checkpointing recomputes the forward in the backward: +2 (Narayanan et al. 2021,
#   "Efficient Large-Scale Language Model Training on GPU Clusters", §5: 4 passes instead of 3).
# Hours = FLOPs / (cards × peak × MFU), the peak from the catalogue (`fp16_tflops`, dense; equal to
# bf16 on bf16 cards).
FULL_FLOPS_FACTOR = 6.0  # Kaplan et al. 2020 §2.1
FROZEN_BASE_FLOPS_FACTOR = 4.0  # LoRA/QLoRA: forward + activation gradients, no weight gradients
RECOMPUTE_FLOPS = 2.0  # gradient checkpointing: one more forward (Narayanan et al. 2021 §5)
# Model-FLOPs utilisation, a range. Full training: Llama 3 reports 38–43% BF16 MFU on H100s
# (Dubey et al. 2024, "The Llama 3 Herd of Models", Table 4); PaLM 46.2% (Chowdhery et al. 2022,
# §4); a single node without that tuning lands lower: 30–50%.
MFU_FULL = (0.30, 0.50)
# LoRA runs the same GEMMs through the base plus many small adapter matmuls (rank 16) that use the
# tensor cores poorly: our assumption, a step below full training (no published MFU found).
MFU_LORA = (0.25, 0.45)
# QLoRA dequantizes every NF4 weight to bf16 before each matmul (bitsandbytes `dequantize_4bit`),
# memory-bound work on top: our assumption, lower again (no published MFU found).
MFU_QLORA = (0.15, 0.35)
# Prefill is one large matmul per layer over the prompt: compute-bound, like training's forward.
PREFILL_MFU = (0.30, 0.60)
# Continuous batching rarely keeps every slot busy: the share of the modelled aggregate decode speed
# reached, from half (bursty traffic) to all of it (a full batch all day). Our assumption.
BATCH_FILL = (0.5, 1.0)
DEFAULT_TOKENS_PER_REQUEST = 500  # a chat answer of a few paragraphs
DEFAULT_PROMPT_TOKENS = 1000  # a question with some context or a short system prompt
DEFAULT_OUTPUTS = 1000  # "the cost of 1,000 images"
HOURS_A_DAY = 24


def wants_cost(req: Request) -> bool:
    return any(v is not None for v in (req.dataset_tokens, req.examples, req.requests_per_day, req.outputs))


def attach_cost(result: Result, catalog: Catalog) -> Result:
    cost, notes = cost_of(result, catalog)
    return result.model_copy(update={"cost": cost, "assumptions": [*result.assumptions, *notes]})


def cost_of(result: Result, catalog: Catalog) -> tuple[Cost | None, list[Assumption]]:
    req = result.request
    if req.task is Task.TRAINING and (req.dataset_tokens or req.examples):
        return _training(result, catalog)
    if req.task is Task.INFERENCE and req.requests_per_day:
        return _serving(result, catalog)
    if req.task in (Task.IMAGE_GENERATION, Task.VIDEO_GENERATION) and req.outputs:
        return _generation(result, catalog)
    return None, []


# --- training ------------------------------------------------------------------------------------


def training_tokens(req: Request) -> float:
    if req.dataset_tokens:
        per_epoch = float(req.dataset_tokens)
    else:
        assert req.examples is not None
        per_epoch = float(req.examples) * (req.tokens_per_example or req.seq_len or 0)
    return per_epoch * req.epochs


def flops_factor(req: Request) -> float:
    factor = FULL_FLOPS_FACTOR if req.method is Method.FULL else FROZEN_BASE_FLOPS_FACTOR
    return factor + (RECOMPUTE_FLOPS if req.gradient_checkpointing else 0.0)


def mfu_range(req: Request) -> tuple[float, float]:
    return {Method.FULL: MFU_FULL, Method.LORA: MFU_LORA, Method.QLORA: MFU_QLORA}[req.method]


def _training(result: Result, catalog: Catalog) -> tuple[Cost, list[Assumption]]:
    req = result.request
    tokens = training_tokens(req)
    factor = flops_factor(req)
    flops = factor * _active_params(result) * tokens
    mfu = mfu_range(req)
    options = []
    for rec, reason in _configs(result, catalog):
        peak = _peak_flops(catalog, rec.gpu)
        hours = None
        if peak:
            fast, slow = (flops / (rec.count * peak * m) / SECONDS_AN_HOUR for m in (mfu[1], mfu[0]))
            hours = (fast, slow)
        options.append(_option(rec, reason, hours))
    notes = []
    if not req.dataset_tokens and not req.tokens_per_example:
        notes.append(note("cost_example_length", tokens=req.seq_len or 0))
    notes += [
        note("cost_training_flops", factor=factor, method=str(req.method)),
        note("cost_mfu", low=round(mfu[0] * 100), high=round(mfu[1] * 100), method=str(req.method)),
        note("cost_linear_scaling"),
    ]
    cost = Cost(
        kind="training",
        tokens=tokens,
        flops=float(f"{flops:.3g}"),
        flops_factor=factor,
        mfu_low=mfu[0],
        mfu_high=mfu[1],
        options=options,
    )
    return cost, notes


# --- serving -------------------------------------------------------------------------------------


# Each request decodes `tokens_per_request` tokens at the configuration's aggregate decode speed
# (core.advice.speed, memory-bandwidth bound, at the request's concurrency) and prefills
# `prompt_tokens` compute-bound (2·N FLOPs per token at `PREFILL_MFU`). A day's requests take that
# many busy hours; servers needed = busy hours / 24, rounded up.
def _serving(result: Result, catalog: Catalog) -> tuple[Cost, list[Assumption]]:
    req = result.request
    assert req.requests_per_day is not None
    out_tokens = req.tokens_per_request or DEFAULT_TOKENS_PER_REQUEST
    prompt = req.prompt_tokens if req.prompt_tokens is not None else DEFAULT_PROMPT_TOKENS
    n = req.requests_per_day
    options = []
    for rec, reason in _configs(result, catalog):
        speed = next((s for s in result.throughput if (s.gpu, s.count) == (rec.gpu, rec.count)), None)
        peak = _peak_flops(catalog, rec.gpu)
        if speed is None or peak is None:
            continue
        prefill_s = [n * 2 * _active_params(result) * prompt / (rec.count * peak * m) for m in PREFILL_MFU]
        decode_s = [n * out_tokens / (speed.aggregate_tokens_per_s * f) for f in BATCH_FILL]
        low = (decode_s[1] + prefill_s[1]) / SECONDS_AN_HOUR
        high = (decode_s[0] + prefill_s[0]) / SECONDS_AN_HOUR
        options.append(_option(rec, reason, (low, high), servers=max(1, math.ceil(high / HOURS_A_DAY))))
    notes = [
        note(
            "cost_serving",
            fill_low=round(BATCH_FILL[0] * 100),
            prefill_low=round(PREFILL_MFU[0] * 100),
            prefill_high=round(PREFILL_MFU[1] * 100),
        ),
    ]
    if req.tokens_per_request is None or req.prompt_tokens is None:
        notes.append(note("cost_default_request", tokens=out_tokens, prompt=prompt))
    cost = Cost(
        kind="serving",
        requests_per_day=n,
        tokens_per_request=out_tokens,
        prompt_tokens=prompt,
        options=options,
    )
    return cost, notes
