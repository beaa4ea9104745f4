"""The result's extension blocks, each filled by one feature and absent otherwise: an inverse answer
(Solved), time and cost, llama.cpp offload, the models of a stack, speculative decoding, the launch
commands and the latency."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field

from core.contract.enums import OffloadMode, SolveFor, SpeculativeMethod

SolveLimit = Literal["memory", "model_max", "contract_max", "nothing_fits", "catalogue"]


class Solved(BaseModel):
    """The answer to `solve_for`: the largest value that fits the target with the recommended headroom
    (else the largest that fits at all), a larger one that fits only tight, and the next that does not.

    `value` null: nothing fits (even the smallest value, the lowest precision, the smallest model);
    `next_value` null: everything up to `max_value` fits (`limit` says which bound stopped it).
    Precision and model are steps of a list (quality first, largest first): `next_value` is the step
    just above `value` that does not fit."""

    solve_for: SolveFor
    value: int | str | None
    next_value: int | str | None
    max_value: int | str | None = Field(
        description="the search's bound (the model's context, the list's top)"
    )
    limit: SolveLimit
    gpu: str | None = Field(description="target GPU id; null for a bare memory size")
    gpu_name: str
    count: int
    usable_bytes: int = Field(description="per card")
    bytes_per_gpu: int | None = Field(description="need at `value`, per card")
    margin_bytes: int | None = Field(description="usable - need at `value`, per card")
    margin: float | None = Field(description="margin_bytes / usable_bytes")
    next_bytes_per_gpu: int | None = Field(description="need at `next_value`, per card")
    grows: str | None = Field(
        default=None, description="the breakdown component that grows most from value to next_value"
    )
    family: str | None = Field(
        default=None, description="solve_for model: the family searched; null: every catalogue model"
    )
    comfortable_value: int | None = Field(
        default=None,
        description="counts: the largest value leaving 10% of the card free (what the recommender asks "
        "of an offer); null when even the smallest does not, or for precision and model",
    )
    tight_value: int | str | None = Field(
        default=None,
        description="a larger value (a larger model, a better precision) that fits only tight (verdict "
        "'tight'); `value` is then the best that fits with the recommended headroom, which the answer "
        "leads with; null when `value` is the largest that fits at all",
    )
    tight_bytes_per_gpu: int | None = Field(default=None, description="need at `tight_value`, per card")
    precision: str | None = Field(
        default=None,
        description="solve_for model without a precision asked: the best weight format `value` fits in "
        "(every format of 4 bits or more the card and engine run is tried)",
    )
    tight_precision: str | None = Field(default=None, description="the same, for `tight_value`")
    tokens_per_s: float | None = Field(default=None, description="decode per sequence at `value`")
    aggregate_tokens_per_s: float | None = Field(default=None, description="all sequences at `value`")
    estimates: int = Field(description="estimator runs the search took")


CostKind = Literal["training", "serving", "generation"]


class CostOption(BaseModel):
    """Time and price of the job on one configuration; ranges follow the utilisation range."""

    gpu: str
    gpu_name: str
    count: int
    reason: str = Field(description="recommended, fastest, more_cards")
    offer_id: str | None
    url: str | None = None
    price_per_hour: float | None
    currency: str | None
    price_is_from: bool = False
    hours_low: float | None = Field(description="wall-clock hours (serving: busy hours a day)")
    hours_high: float | None
    gpu_hours_low: float | None
    gpu_hours_high: float | None
    cost_low: float | None = Field(description="hours × price_per_hour; null: price on request")
    cost_high: float | None
    prices: dict[str, tuple[float, float | None, float | None]] = Field(
        default_factory=dict,
        description="extension: in the offer's other currencies (Recommendation.prices), by code: "
        "(price_per_hour, cost_low, cost_high)",
    )
    seconds_per_output_low: float | None = None  # generation: one image or clip
    seconds_per_output_high: float | None = None
    servers: int | None = Field(default=None, description="serving: servers busy around the clock")


class Cost(BaseModel):
    kind: CostKind
    tokens: float | None = Field(default=None, description="training: tokens over all epochs")
    flops: float | None = Field(default=None, description="training: FLOPs (flops_factor × N × tokens)")
    flops_factor: float | None = None
    mfu_low: float | None = None
    mfu_high: float | None = None
    requests_per_day: int | None = None
    tokens_per_request: int | None = None
    prompt_tokens: int | None = None
    outputs: int | None = None
    source: str | None = Field(default=None, description="generation: the published figure used")
    options: list[CostOption]


class Offload(BaseModel):
    """extension (issue 22): llama.cpp with part of the model in host RAM, on `gpu` x `count`."""

    mode: OffloadMode
    gpu: str | None
    gpu_name: str
    count: int
    gpu_layers: int = Field(description="-ngl: layers on the GPU(s), the output layer first")
    total_layers: int = Field(description="blocks + the output layer (llama.cpp's 'offloaded k/N')")
    n_cpu_moe: int = Field(description="--n-cpu-moe: blocks whose routed experts are in RAM")
    moe_layers: int = Field(description="blocks with routed experts (0: a dense model)")
    fits: bool = Field(description="whether the GPU part fits the cards (the tight band)")
    bytes_per_gpu: int = Field(description="the need per card with the offload (= Result.total_bytes)")
    full_gpu_bytes_per_gpu: int = Field(description="the need per card with everything on the GPU")
    usable_bytes: int = Field(description="per card")
    ram_bytes: int = Field(description="weights (input embedding included) and KV cache in host RAM")
    ram_gb: float | None = Field(description="the offered server's RAM, GB; null: not known")
    ram_bandwidth_gb_s: float
    ram_bandwidth_source: Literal["request", "offer", "assumed"]
    gpu_bytes_per_token: int = Field(description="bytes a decode step reads from GPU memory")
    ram_bytes_per_token: int = Field(description="bytes a decode step reads from host RAM")
    tokens_per_s: float = Field(description="decode, one sequence")
    full_gpu_tokens_per_s: float | None = Field(description="decode with everything on the GPU")
    prefill_tokens_per_s: float | None = Field(
        description="prompt processing: RAM weights cross PCIe once per micro-batch"
    )
    speed_source: str = Field(description="the published measurement the RAM-side speed is fitted to")


class Speculative(BaseModel):
    """extension: speculative decoding, sized. `total_bytes` of the result = `without_bytes` +
    `draft_bytes` + `draft_kv_bytes` + `scratch_bytes` (per card)."""

    method: SpeculativeMethod
    draft_model: str | None = Field(description="the draft's catalogue id (draft_model), else null")
    num_speculative_tokens: int
    without_bytes: int = Field(description="per card, the same request without speculative decoding")
    draft_bytes: int = Field(description="per card: the draft model's or head's weights")
    draft_kv_bytes: int = Field(description="per card: the draft's KV cache")
    scratch_bytes: int = Field(description="per card: logits and probabilities of the k + 1 verified tokens")
    acceptance_low: float = Field(description="per-token acceptance rate assumed, low end")
    acceptance_high: float
    speedup_low: float = Field(description="expected decode speed-up, low end (batch 1)")
    speedup_high: float
    source: str = Field(description="the published figures the acceptance range comes from")
    cite: str = Field(default="", description="the same, short, as the answers name it")


class LaunchArg(BaseModel):
    """extension: one option of a launch command, as the engine documents it (core/data/engine_flags.toml)."""

    flag: str = Field(description="a CLI flag, a Modelfile PARAMETER, an environment variable or a keyword")
    value: str | None = Field(default=None, description="null: a switch without a value")


class LaunchCommand(BaseModel):
    """extension: the command that runs what was sized (core.advice.launch);
    `core.advice.launch.command_text` lays it out. `model` is the Hugging Face id, or a GGUF file name
    to replace (`model_is_placeholder`)."""

    engine: Literal["vllm", "llama.cpp", "ollama", "transformers", "accelerate"]
    kind: Literal["shell", "modelfile", "python"]
    program: str
    model: str
    model_is_placeholder: bool = False
    args: list[LaunchArg] = Field(default_factory=list)
    env: list[LaunchArg] = Field(default_factory=list, description="environment variables to set first")


class Latency(BaseModel):
    """extension: time to first token on the shown configuration (the user's card, else the
    recommended one) and, with `requests_per_second`, the servers of it that load takes (core.advice.latency).

    Prefill is compute-bound: FLOPs = 2 x active parameters x prompt tokens + the causal attention
    term 2 x layers x tokens^2 x attention width, at `mfu` of the card's dense peak (`mfu_source`).
    Under load each server prefills one prompt at a time: a queue of Poisson arrivals with a fixed
    service time (M/D/1), mean wait rho x S / (2 (1 - rho))."""

    gpu: str
    gpu_name: str
    count: int
    prompt_tokens: int
    prefill_flops: float
    peak_tflops: float = Field(description="per card, dense, of the precision the prefill computes in")
    mfu: float
    mfu_source: str = Field(description="id of the row of core/data/prefill.toml")
    prefill_s: float
    ttft_s: float = Field(description="prefill + one decode step, one request alone")
    tokens_per_s: float | None = Field(description="decode, per sequence")
    burst_wait_s: float | None = Field(
        default=None,
        description="`concurrency` users sending at once: the last one's wait for the prefills ahead of "
        "it, (users - 1) x prefill_s (one prompt at a time); null for one user",
    )
    requests_per_second: float | None = None
    ttft_target_s: float | None = None
    output_tokens: int | None = Field(default=None, description="tokens generated per request (load)")
    servers: int | None = Field(default=None, description="servers of `count` cards the load takes")
    cards: int | None = Field(default=None, description="servers x count")
    utilization: float | None = Field(default=None, description="share of each server's prefill time busy")
    wait_s: float | None = Field(default=None, description="mean wait for a server's prefill, M/D/1")
    ttft_under_load_s: float | None = None
    in_flight: float | None = Field(default=None, description="requests at once per server (Little's law)")
    max_in_flight: int | None = Field(default=None, description="sequences one server's memory holds")
    limit: Literal["prefill", "target", "memory"] | None = Field(
        default=None, description="what set the server count: prefill capacity, the TTFT target, the KV cache"
    )
    met: bool | None = Field(
        default=None, description="false: no server count up to the search's bound meets it"
    )
