"""What the estimator answers for one request: the peak per GPU and its parts, the verdict on each
configuration, the one to rent, the ways to make it fit, the speed and the assumptions made; and
the error response."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field

from core.contract.enums import Precision
from core.contract.extensions import Cost, Latency, LaunchCommand, Offload, Solved, Speculative
from core.contract.request import Request

Component = Literal[
    "weights",
    "kv_cache",
    "activations",
    "gradients",
    "optimizer_states",
    "text_encoders",
    "vae_decode",
    "overhead",
    "extra_models",
    # extension: hybrid models' recurrent state; speculative decoding's draft, its KV and verify scratch
    "recurrent_state",
    "draft_model",
    "draft_kv_cache",
    "speculative_scratch",
    "vision_encoder",  # extension: the image encoder's working set and outputs (vision models)
    "speech_state",  # extension: a speech model's encoder output and decoder caches per window
    "tts_state",  # extension: a text-to-speech model's largest stage (KV cache or one layer's work)
]
"""Breakdown keys. `overhead` is always present (CUDA context + allocator reserve), so a caller
comparing with `torch.cuda.max_memory_allocated` subtracts it."""


VerdictKind = Literal["fits", "tight", "does_not_fit"]


class ResolvedModel(BaseModel):
    id: str | None
    name: str
    kind: str
    params_b: float
    active_params_b: float | None = None
    source: Literal["catalogue", "size", "custom", "huggingface"]


class Range(BaseModel):
    low_bytes: int
    high_bytes: int


class Verdict(BaseModel):
    gpu: str
    gpu_name: str
    count: int
    bytes_per_gpu: int
    usable_bytes: int
    headroom: float = Field(description="(usable - needed) / usable; negative when it does not fit")
    headroom_bytes: int
    verdict: VerdictKind


class Recommendation(BaseModel):
    gpu: str
    gpu_name: str
    count: int
    offer_id: str | None
    url: str | None
    price_per_hour: float | None = Field(description="null: price on request")
    currency: str | None
    price_is_from: bool = Field(default=False, description="extension: price_per_hour is a starting price")
    price_per_month: float | None = Field(
        default=None, description="extension: the offer's monthly price, where the operator gives one"
    )
    prices: dict[str, tuple[float | None, float | None]] = Field(
        default_factory=dict,
        description="extension: the offer's prices in other currencies set by the operator, by currency "
        "code: (per hour, per month); never converted",
    )
    bytes_per_gpu: int
    verdict: VerdictKind
    reason: Literal["cheapest", "fastest", "most_headroom", "fewest_cards"] = "cheapest"
    in_offers: bool = Field(
        default=True,
        description="extension: false when no rental offer fits and this is a catalogue configuration "
        "outside the offers (show it as 'not in our offers, contact us'); offer_id and url are then null",
    )
    breakdown: dict[str, int] = Field(
        default_factory=dict,
        description="extension: the peak per card on `count` cards, as `Result.breakdown` (it sums to "
        "bytes_per_gpu); empty where the configuration is the request's own (`Result.breakdown`)",
    )


class Mitigation(BaseModel):
    action: str = Field(description="machine id, e.g. quantize_int4, shorten_context, use_qlora")
    saves_bytes: int
    total_bytes: int
    fits: bool = Field(description="whether the result then fits the target configuration")
    fits_on: str | None = Field(
        default=None,
        description="e.g. '1x rtx4090-48gb', when it fits somewhere; with `fits` false, on more cards "
        "than requested (the fewest of 2, 4, 8)",
    )
    fits_gpu: str | None = Field(default=None, description="the smallest target GPU it then fits (id)")
    fits_gpu_name: str | None = None
    fits_count: int | None = Field(default=None, description="cards of `fits_gpu`")
    params: dict[str, str | int | float] = Field(default_factory=dict)


class Throughput(BaseModel):
    gpu: str
    count: int
    tokens_per_s: float = Field(description="decode, per sequence, memory-bandwidth bound")
    aggregate_tokens_per_s: float = Field(description="all concurrent sequences together")
    # extension (core.advice.latency): the prompt's prefill at the card's compute, then one decode step
    ttft_s: float | None = Field(
        default=None, description="extension: time to first token of one request alone, seconds"
    )


class ServingCapacity(BaseModel):
    """What vLLM would log at start-up on one configuration: the KV pool it pre-allocates in its
    budget and how many requests of the requested context that pool holds."""

    gpu: str
    count: int
    gpu_memory_utilization: float
    budget_bytes: int = Field(description="per card: ceil(usable_bytes × gpu_memory_utilization)")
    kv_cache_bytes: int = Field(description="per card: the budget minus weights, activations, runtime")
    kv_cache_tokens: int = Field(description="'GPU KV cache size: N tokens' (whole blocks of 16)")
    context_length: int
    max_concurrency: float = Field(
        description="'Maximum concurrency for <context> tokens per request': KV blocks / blocks per request"
    )


class HostAdvice(BaseModel):
    ram_min_bytes: int
    ram_recommended_bytes: int
    disk_bytes: int
    disk_kind: str = "nvme"


class Assumption(BaseModel):
    code: str = Field(description="stable id, for translation")
    text: str = Field(description="plain English")
    params: dict[str, str | int | float] = Field(default_factory=dict)


class StackPart(BaseModel):
    """extension: one model of `Request.extra_models`, sized."""

    model: ResolvedModel
    role: Literal["embedding", "reranker", "llm"]
    precision: Precision
    context_length: int
    batch_size: int
    total_bytes: int = Field(description="its peak on the card that serves it, its own CUDA context included")
    breakdown: dict[str, int]


class Result(BaseModel):
    request: Request = Field(description="the request with every default filled in")
    model: ResolvedModel
    total_bytes: int = Field(description="peak per GPU for the requested configuration")
    breakdown: dict[str, int]
    range: Range
    verdicts: list[Verdict]
    recommendation: Recommendation | None
    alternatives: list[Recommendation] = Field(
        default_factory=list,
        description="the fastest offer that fits (reason 'fastest'), when it is not the recommendation",
    )
    target: Verdict | None = Field(
        default=None,
        description="extension: the verdict for the configuration the request names — gpus[0] × "
        "num_gpus — when gpus is given (the user's own card); null otherwise",
    )
    mitigations: list[Mitigation]
    without_checkpointing_bytes: int | None = Field(
        default=None,
        description="extension: training with gradient checkpointing on (and optional): the peak per "
        "GPU without it, faster by the recomputed forward; null otherwise",
    )
    throughput: list[Throughput]
    host: HostAdvice
    assumptions: list[Assumption]
    serving_capacity: ServingCapacity | None = Field(
        default=None,
        description="extension: vLLM only — the KV-cache tokens and maximum concurrency of the target "
        "configuration (gpus[0] × num_gpus) or else the recommended one",
    )
    solved: Solved | None = Field(default=None, description="extension: the inverse answer (solve_for)")
    cost: Cost | None = Field(
        default=None, description="extension: time and cost (dataset, requests, outputs)"
    )
    stack: list[StackPart] = Field(
        default_factory=list,
        description="extension: the extra models, each sized (their sum: breakdown.extra_models)",
    )
    # extension: speculative decoding (Request.speculative)
    speculative: Speculative | None = Field(
        default=None, description="extension: the draft's memory, with and without it, and the speed-up"
    )
    offload: Offload | None = Field(
        default=None,
        description="extension: llama.cpp offload to RAM (gpu_layers, n_cpu_moe, offload): the split, "
        "the RAM it needs and the decode speed with it",
    )
    # --- extension: the launch command and latency (core.advice.launch, core.advice.latency) ----------------
    launch_commands: list[LaunchCommand] = Field(
        default_factory=list,
        description="extension: the commands that run what was sized, by engine (LLMs only)",
    )
    latency: Latency | None = Field(
        default=None, description="extension: time to first token, and the servers a load takes"
    )


class ErrorResponse(BaseModel):
    error: str
    field: str | None = None
