"""How long and how much: a training run, a day of serving, a thousand images — on the recommended
configuration and one or two alternatives, as ranges (`Result.cost`).

Training: FLOPs = factor × N × tokens, N the parameters each token passes through (MoE: the active
ones), tokens = dataset tokens (or examples × typical length) × epochs.
- Full training: 6 (forward 2·N per token, backward 4·N: gradients of the activations and of the
  weights, 2·N each; Kaplan et al. 2020, "Scaling Laws for Neural Language Models", §2.1, C ≈ 6NBS).
- LoRA / QLoRA: 4. The frozen base still runs the forward (2·N) and the backward through the
  activations (2·N) to reach every adapter, but computes no weight gradients for frozen weights
  (autograd skips `requires_grad=False` weights); the adapters' own FLOPs are r·(d_in + d_out) per
  matrix against d_in·d_out, under 1% at rank 16 — left out.
- Gradient checkpointing recomputes the forward in the backward: +2 (Narayanan et al. 2021,
  "Efficient Large-Scale Language Model Training on GPU Clusters", §5: 4 passes instead of 3).
Hours = FLOPs / (cards × peak bf16 TFLOPS × MFU), peak from the catalogue (`fp16_tflops`, dense; equal
to bf16 on bf16 cards), MFU a range (`MFU_*`, each with its source). More cards are assumed to scale
linearly (data parallel), which is optimistic across PCIe cards.

Serving: each request decodes `tokens_per_request` tokens at the configuration's aggregate decode
speed (core.advice.speed, memory-bandwidth bound, at the request's concurrency) and prefills
`prompt_tokens` compute-bound (2·N FLOPs per token at `PREFILL_MFU`). A day's requests take that many
busy hours; servers needed = busy hours / 24, rounded up.

Generation: seconds per image or clip only where a published figure exists for that model, card and
resolution (`core/data/throughput.toml`, each row with its source); each card of a server renders on
its own. No figure: no time, said so — never a guess.
"""

from __future__ import annotations

import math
from functools import lru_cache
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field

from core.catalogue.catalog import Catalog, default_catalog
from core.catalogue.load import DATA_DIR, load_rows
from core.contract import Assumption, Cost, CostOption, Method, Recommendation, Request, Result, Task
from core.language.words import note

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
SECONDS_AN_HOUR = 3600


class Figure(BaseModel):
    """A published generation time (one row of throughput.toml)."""

    model_config = ConfigDict(extra="forbid")

    id: str
    model: str
    gpus: list[str] = Field(min_length=1)
    resolution: tuple[int, int]
    frames: int | None = Field(default=None, gt=0, description="video: the clip length measured")
    steps: int = Field(gt=0)
    borrowed: dict[str, str] = Field(
        default_factory=dict,
        description="set by `figures`: card → the card measured (gpus.toml same_compute_as)",
    )
    seconds_low: float = Field(gt=0)
    seconds_high: float = Field(gt=0)
    source: str = Field(min_length=1)


def figures(catalog: Catalog | None = None) -> tuple[Figure, ...]:
    """The published figures, each extended to the cards whose catalogue row says `same_compute_as`
    a card measured; `borrowed` says, for the answer's note, which card was measured (the row keeps
    its own source)."""
    same = {
        g.id: g.same_compute_as for g in (catalog or default_catalog()).gpus.values() if g.same_compute_as
    }
    extended = []
    for row in _published():
        more = {
            card: measured for card, measured in same.items() if measured in row.gpus and card not in row.gpus
        }
        extended.append(
            row.model_copy(update={"gpus": [*row.gpus, *more], "borrowed": more}) if more else row
        )
    return tuple(extended)


@lru_cache(maxsize=1)
def _published(path: Path = DATA_DIR / "throughput.toml") -> tuple[Figure, ...]:
    return tuple(load_rows(path, "figure", Figure))


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


# --- the configurations priced ---------------------------------------------------------------------


def _configs(result: Result, catalog: Catalog) -> list[tuple[Recommendation, str]]:
    """The recommendation, the fastest offer, and the recommended card with twice the cards where an
    offer has them: at most three."""
    rec = result.recommendation
    if rec is None:
        return []
    out = [(rec, "recommended")]
    out += [(a, a.reason) for a in result.alternatives if (a.gpu, a.count) != (rec.gpu, rec.count)][:1]
    more = next(
        (
            o
            for o in catalog.offers
            if o.gpu == rec.gpu and o.count == rec.count * 2 and o.availability == "available"
        ),
        None,
    )
    if more is not None and all((r.gpu, r.count) != (more.gpu, more.count) for r, _ in out):
        out.append(
            (
                rec.model_copy(
                    update={
                        "count": more.count,
                        "offer_id": more.id,
                        "url": more.url,
                        "price_per_hour": more.price_per_hour,
                        "currency": more.currency,
                        "price_is_from": more.price_is_from,
                        "prices": {k: (p.price_per_hour, p.price_per_month) for k, p in more.prices.items()},
                    }
                ),
                "more_cards",
            )
        )
    return out


def _costs(hours: tuple[float, float] | None, hourly: float) -> tuple[float | None, float | None]:
    return (_round(hours[0] * hourly), _round(hours[1] * hourly)) if hours else (None, None)


def _option(
    rec: Recommendation, reason: str, hours: tuple[float, float] | None, **extra: float | int
) -> CostOption:
    price = rec.price_per_hour if rec.in_offers else None
    return CostOption(
        gpu=rec.gpu,
        gpu_name=rec.gpu_name,
        count=rec.count,
        reason=reason,
        offer_id=rec.offer_id,
        url=rec.url,
        price_per_hour=price,
        currency=rec.currency if price is not None else None,
        price_is_from=rec.price_is_from,
        hours_low=_round(hours[0]) if hours else None,
        hours_high=_round(hours[1]) if hours else None,
        gpu_hours_low=_round(hours[0] * rec.count) if hours else None,
        gpu_hours_high=_round(hours[1] * rec.count) if hours else None,
        cost_low=_round(hours[0] * price) if hours and price is not None else None,
        cost_high=_round(hours[1] * price) if hours and price is not None else None,
        prices={
            code: (hourly, *_costs(hours, hourly))
            for code, (hourly, _) in rec.prices.items()
            if hourly is not None and price is not None
        },
        **extra,
    )


def _round(x: float) -> float:
    """Three significant digits: ranges, not false precision."""
    return float(f"{x:.3g}")


def _peak_flops(catalog: Catalog, gpu: str) -> float | None:
    spec = catalog.gpus.get(gpu)
    return spec.fp16_tflops * 1e12 if spec is not None and spec.fp16_tflops else None


def _active_params(result: Result) -> float:
    return (result.model.active_params_b or result.model.params_b) * 1e9


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


# --- generation ----------------------------------------------------------------------------------


def figure_for(
    model: str | None,
    gpu: str,
    resolution: tuple[int, int] | None,
    frames: int | None = None,
    catalog: Catalog | None = None,
) -> Figure | None:
    """The figure for that model on that card at that resolution (and, for a clip, that length)."""
    return next(
        (
            f
            for f in figures(catalog)
            if f.model == model
            and gpu in f.gpus
            and (resolution is None or tuple(resolution) == f.resolution)
            and (f.frames is None or frames is None or frames == f.frames)
        ),
        None,
    )


def _generation(result: Result, catalog: Catalog) -> tuple[Cost, list[Assumption]]:
    req = result.request
    assert req.outputs is not None
    model = result.model.id
    options = []
    sources: list[str] = []
    configs = _configs(result, catalog)
    priced = {(r.gpu, r.count) for r, _ in configs}
    for offer in catalog.offers:  # cards with a published figure that fit, when ours have none
        fits = any(
            v.gpu == offer.gpu and v.count <= offer.count and v.verdict != "does_not_fit"
            for v in result.verdicts
        )
        published = figure_for(model, offer.gpu, req.resolution, req.frames, catalog)
        if fits and (offer.gpu, offer.count) not in priced and published:
            gpu = catalog.gpus[offer.gpu]
            rec = Recommendation(
                gpu=gpu.id,
                gpu_name=gpu.name,
                count=offer.count,
                offer_id=offer.id,
                url=offer.url,
                price_per_hour=offer.price_per_hour,
                currency=offer.currency,
                price_is_from=offer.price_is_from,
                prices={k: (p.price_per_hour, p.price_per_month) for k, p in offer.prices.items()},
                bytes_per_gpu=result.total_bytes,
                verdict="fits",
            )
            configs.append((rec, "published_figure"))
            priced.add((offer.gpu, offer.count))
            break
    borrowed: list[Assumption] = []
    video = req.task is Task.VIDEO_GENERATION
    for rec, reason in configs:
        fig = figure_for(model, rec.gpu, req.resolution, req.frames, catalog)
        if fig is None:
            options.append(_option(rec, reason, None))
            continue
        if fig.source not in sources:
            sources.append(fig.source)
        measured = fig.borrowed.get(rec.gpu)
        if measured is not None and not borrowed:
            borrowed.append(
                note(
                    "cost_figure_same_compute",
                    card=rec.gpu_name,
                    measured=catalog.gpus[measured].name,
                )
            )
        hours = tuple(
            req.outputs * s / rec.count / SECONDS_AN_HOUR for s in (fig.seconds_low, fig.seconds_high)
        )
        options.append(
            _option(
                rec,
                reason,
                (hours[0], hours[1]),
                seconds_per_output_low=fig.seconds_low,
                seconds_per_output_high=fig.seconds_high,
            )
        )
    notes = (
        [note("cost_generation_figures_video" if video else "cost_generation_figures"), *borrowed]
        if sources
        else [note("cost_no_figure", model=result.model.name)]
    )
    cost = Cost(kind="generation", outputs=req.outputs, source="; ".join(sources) or None, options=options)
    return cost, notes
