"""Catalogue rows: GPUs, models and rental offers, as validated from `core/data/*.toml`."""

from __future__ import annotations

import re
from enum import StrEnum
from typing import Annotated, Literal, NamedTuple
from urllib.parse import urlsplit

from pydantic import BaseModel, ConfigDict, Field, StringConstraints, field_validator, model_validator

from core.contract import Precision


class ModelKind(StrEnum):
    LLM = "llm"  # decoder-only language model
    ENCODER = "encoder"  # BERT-style
    ENCODER_DECODER = "encoder_decoder"  # T5-style
    IMAGE = "image"  # diffusion pipeline producing images
    VIDEO = "video"  # diffusion pipeline producing video
    SPEECH = "speech"  # speech recognition: an audio encoder-decoder (Whisper)
    TTS = "tts"  # text to speech: transformer stages run one after another (Bark, XTTS, F5-TTS)


class PipelineComponent(BaseModel):
    """One part of a diffusion pipeline."""

    model_config = ConfigDict(extra="forbid")

    name: str
    role: Literal["denoiser", "text_encoder", "vae"]
    params_b: float = Field(gt=0)
    precision: Precision = Field(description="as shipped / as the pipeline loads it by default")

    # A DiT denoiser's shape, from its transformer/config.json (see core.formulas.diffusion.dit_params)
    layers: int | None = Field(default=None, gt=0, description="all transformer blocks")
    hidden_size: int | None = Field(default=None, gt=0, description="heads × head dim (inner_dim)")
    attention_heads: int | None = Field(default=None, gt=0)
    intermediate_size: int | None = Field(default=None, gt=0, description="MLP width; default 4 × hidden")
    dual_stream_layers: int = Field(
        default=0, ge=0, description="blocks with separate text-stream weights (FLUX double, SD3 MMDiT)"
    )
    parallel_single: bool = Field(
        default=False, description="single-stream blocks fuse attention and MLP (FLUX, HunyuanVideo)"
    )
    cross_attention: bool = Field(default=False, description="blocks cross-attend to the text (Wan, LTX)")
    adaln_dim: int | None = Field(
        default=None,
        gt=0,
        description="width of the vector each block's own adaLN projection reads (FLUX/SD3: hidden, "
        "CogVideoX: 512); None: one adaLN shared by all blocks (PixArt-style: Wan, LTX, Allegro)",
    )
    adaln_sets: int = Field(
        default=1, ge=1, le=2, description="6·hidden modulation sets per single-stream block (CogVideoX: 2)"
    )

    @model_validator(mode="after")
    def _shape(self) -> PipelineComponent:
        if self.layers is not None and self.dual_stream_layers > self.layers:
            raise ValueError("dual_stream_layers exceeds layers")
        if (self.layers is None) != (self.hidden_size is None):
            raise ValueError("give a denoiser's `layers` and `hidden_size` together")
        if self.hidden_size and self.attention_heads and self.hidden_size % self.attention_heads:
            raise ValueError("hidden_size must be a multiple of attention_heads")
        return self


class UnquantizedModules(BaseModel):
    """What a published quantized checkpoint leaves in 16 bits beyond embeddings and LM head: its
    config's `quantization_config.modules_to_not_convert` (transformers) or `ignore`
    (compressed-tensors), counted as decoder layers whose attention / MLP stay unquantized."""

    model_config = ConfigDict(extra="forbid")

    precision: Precision = Field(description="the format of the checkpoint these modules stay wide in")
    attention_layers: int = Field(default=0, ge=0, description="layers whose self-attention stays 16-bit")
    mlp_layers: int = Field(default=0, ge=0, description="layers whose MLP (all experts) stays 16-bit")
    source: str = Field(min_length=1, description="the checkpoint's config or paper that says so")


RecurrentKind = Literal["mamba", "mamba2", "gated_delta"]


class RecurrentLayers(BaseModel):
    """extension (hybrid and linear-attention models): the layers that keep a fixed-size recurrent
    state per sequence instead of a KV cache (Mamba, Mamba-2, gated delta rule). Their shapes follow
    vLLM `MambaStateShapeCalculator` (vllm/model_executor/layers/mamba/mamba_utils.py); the numbers
    are the config.json keys named on each field."""

    model_config = ConfigDict(extra="forbid")

    kind: RecurrentKind
    layers: int = Field(gt=0, description="recurrent layers (`layers_block_type`, `layer_types`)")
    parallel: bool = Field(
        default=False,
        description="each layer runs attention and the recurrent mixer side by side (Falcon-H1): "
        "every layer keeps a KV cache too",
    )
    conv_kernel: int = Field(default=4, gt=0, description="`mamba_d_conv` / `conv_kernel` / "
                             "`linear_conv_kernel_dim`")  # fmt: skip
    # Mamba / Mamba-2
    intermediate_size: int | None = Field(default=None, gt=0, description="`mamba_expand` × hidden")
    state_size: int | None = Field(default=None, gt=0, description="`mamba_d_state` / `ssm_state_size`")
    heads: int | None = Field(default=None, gt=0, description="Mamba-2 `mamba_n_heads` / `mamba_num_heads`")
    head_dim: int | None = Field(default=None, gt=0, description="Mamba-2 `mamba_d_head` / `mamba_head_dim`")
    groups: int = Field(default=1, gt=0, description="Mamba-2 `mamba_n_groups` / `n_groups`")
    # Gated delta rule (Qwen3-Next)
    key_heads: int | None = Field(default=None, gt=0, description="`linear_num_key_heads`")
    value_heads: int | None = Field(default=None, gt=0, description="`linear_num_value_heads`")
    key_head_dim: int | None = Field(default=None, gt=0, description="`linear_key_head_dim`")
    value_head_dim: int | None = Field(default=None, gt=0, description="`linear_value_head_dim`")
    state_fp32: bool = Field(
        default=False,
        description="the SSM (temporal) state is kept in fp32 whatever the model dtype: vLLM "
        "`mamba_ssm_cache_dtype` float32 (NemotronH's default, `mamba_ssm_dtype` in the config)",
    )

    @model_validator(mode="after")
    def _shape(self) -> RecurrentLayers:
        need = {
            "mamba": ("intermediate_size", "state_size"),
            "mamba2": ("intermediate_size", "state_size", "heads", "head_dim"),
            "gated_delta": ("key_heads", "value_heads", "key_head_dim", "value_head_dim"),
        }[self.kind]
        missing = [name for name in need if getattr(self, name) is None]
        if missing:
            raise ValueError(f"{self.kind} layers need {', '.join(missing)}")
        return self


class VisionTower(BaseModel):
    """A vision-language model's image encoder and how its processor turns an image into tokens
    (`core/data/vision.toml`, one row per model; `core.formulas.vision` sizes it).

    Patch models (Qwen2.5-VL, Qwen3-VL, Pixtral): the image is resized to at most `max_pixels`, cut
    into `patch_size` patches, and `merge_size`² neighbours merge into one LLM token. Tile models
    (Gemma 3, Llama 4, InternVL): the image is cut into up to `max_tiles` tiles of `tile_size` px,
    each `tokens_per_tile` tokens, plus a whole-image thumbnail tile where `thumbnail`."""

    model_config = ConfigDict(extra="forbid")

    model: str = Field(description="the catalogue model id (models.toml) this tower belongs to")
    params_b: float = Field(gt=0, le=10, description="the encoder and projector (llama.cpp's mmproj)")
    layers: int = Field(gt=0, le=200)
    hidden_size: int = Field(gt=0, le=16_384)
    attention_heads: int = Field(gt=0, le=256)
    intermediate_size: int = Field(gt=0, le=65_536)
    gated_ffn: bool
    patch_size: int = Field(gt=0, le=64)
    merge_size: int = Field(default=1, ge=1, le=8, description="patches merged per token side (2: 2×2)")
    max_pixels: int = Field(gt=0, le=100_000_000, description="the processor's default cap per image")
    min_pixels: int = Field(default=1, gt=0)
    row_break_tokens: bool = Field(default=False, description="one [IMG_BREAK] token per patch row")
    tile_size: int | None = Field(default=None, gt=0, le=4096)
    max_tiles: int = Field(default=1, ge=1, le=64)
    tokens_per_tile: int | None = Field(default=None, gt=0, le=16_384)
    thumbnail: bool = Field(default=False, description="a whole-image tile is added when tiled")
    source: str = Field(min_length=1)

    @property
    def id(self) -> str:
        """The row's key in its file (a model has one tower)."""
        return self.model

    @model_validator(mode="after")
    def _tiles_or_patches(self) -> VisionTower:
        if (self.tile_size is None) != (self.tokens_per_tile is None):
            raise ValueError("give tile_size and tokens_per_tile together (a tile model) or neither")
        if self.hidden_size % self.attention_heads:
            raise ValueError("hidden_size must be a multiple of attention_heads")
        if self.min_pixels > self.max_pixels:
            raise ValueError("min_pixels exceeds max_pixels")
        return self


class SpeechShape(BaseModel):
    """What a Whisper-style speech model fixes (its config.json): the encoder reads `chunk_seconds`
    of audio as `encoder_positions` frames, the decoder writes at most `decoder_positions` tokens."""

    model_config = ConfigDict(extra="forbid")

    chunk_seconds: int = Field(gt=0, le=600, description="audio per window (Whisper: 30 s, padded)")
    encoder_positions: int = Field(gt=0, le=100_000, description="max_source_positions (1500)")
    decoder_positions: int = Field(gt=0, le=100_000, description="max_target_positions (448)")


class TtsStage(BaseModel):
    """One transformer of a text-to-speech model, run after the one before (Bark's semantic, coarse
    and fine GPTs; XTTS's GPT; F5-TTS's diffusion transformer): `cached` stages generate token by
    token and keep keys and values of `positions` tokens; the others run every position at once
    (`batch` sequences: F5-TTS's classifier-free guidance runs two)."""

    model_config = ConfigDict(extra="forbid")

    name: str
    layers: int = Field(gt=0)
    positions: int = Field(gt=0, le=100_000, description="its context: tokens or mel frames at the most")
    cached: bool = Field(description="autoregressive with a KV cache (True) or all positions at once")
    batch: int = Field(default=1, gt=0, le=16, description="sequences run together (CFG: 2)")


class ModelSpec(BaseModel):
    model_config = ConfigDict(extra="forbid")

    id: str = Field(pattern=r"^[a-z0-9][a-z0-9._-]*$")
    name: str
    family: str
    kind: ModelKind
    hf_id: str | None = None
    aliases: list[str] = Field(default_factory=list)
    popular: bool = Field(default=False, description="offered as a button in the bot")
    popularity: int | None = Field(
        default=None, ge=1, le=1000,
        description="a popular model's rank on the bot's buttons, 1 = asked most (families follow "
        "their best-ranked model); a popular model without one comes after the ranked ones",
    )  # fmt: skip
    source: str = Field(description="where the numbers come from (config.json URL, paper)")

    params_b: float = Field(gt=0, description="total parameters, billions (MoE: all experts)")
    active_params_b: float | None = Field(default=None, gt=0, description="MoE: per token")

    # Transformer architecture (LLM / encoder / encoder-decoder; the denoiser of a DiT may set them too)
    layers: int | None = Field(default=None, gt=0, description="decoder layers (all layers if encoder-only)")
    encoder_layers: int | None = Field(default=None, gt=0, description="encoder-decoder models only")
    hidden_size: int | None = Field(default=None, gt=0)
    attention_heads: int | None = Field(default=None, gt=0)
    kv_heads: int | None = Field(default=None, gt=0)
    head_dim: int | None = Field(default=None, gt=0, description="default hidden_size / attention_heads")
    intermediate_size: int | None = Field(default=None, gt=0)
    gated_ffn: bool | None = Field(
        default=None,
        description="True: gated MLP with 3 matrices (SwiGLU/GeGLU: Llama, Qwen, Gemma, T5 v1.1); "
        "False: plain 2-matrix MLP (BERT, OPT, Falcon, StarCoder2, T5 v1.0); None: not known",
    )
    vocab_size: int | None = Field(default=None, gt=0)
    tied_embeddings: bool = False
    max_context: int | None = Field(default=None, gt=0)
    experts: int | None = Field(default=None, gt=0)
    active_experts: int | None = Field(default=None, gt=0)
    moe_intermediate_size: int | None = Field(default=None, gt=0)
    native_precision: Precision | None = Field(
        default=None,
        description="the precision the published checkpoint ships in when not 16-bit (DeepSeek V3/R1 "
        "fp8, GPT-OSS mxfp4): the default for inference",
    )
    unquantized: UnquantizedModules | None = Field(
        default=None, description="layers the published quantized checkpoint keeps in 16 bits"
    )
    # Training-time dropout adds masks to the stored activations (Korthikanti et al. 2022, sec. 4.1)
    dropout: float = Field(default=0.0, ge=0, lt=1, description="hidden dropout (BERT, OPT, T5: 0.1)")
    attention_dropout: float = Field(default=0.0, ge=0, lt=1, description="dropout on attention probs")
    # Sliding-window attention: `sliding_window_layers` of `layers` keep only the window in KV cache
    sliding_window: int | None = Field(default=None, gt=0)
    sliding_window_layers: int | None = Field(default=None, ge=0)
    # MLA (DeepSeek V2/V3): cache holds kv_lora_rank + qk_rope_head_dim per token per layer
    kv_lora_rank: int | None = Field(default=None, gt=0)
    qk_rope_head_dim: int | None = Field(default=None, gt=0)

    mtp_layers: int | None = Field(
        default=None,
        gt=0,
        description="extension: multi-token-prediction layers the checkpoint ships for speculative "
        "decoding (config `num_nextn_predict_layers`, `mtp_num_hidden_layers`)",
    )
    # extension: hybrid and linear-attention models (Jamba, Qwen3-Next, Mamba-2 hybrids)
    recurrent: RecurrentLayers | None = Field(
        default=None, description="layers that keep a recurrent state instead of a KV cache"
    )

    # Diffusion pipelines
    components: list[PipelineComponent] = Field(default_factory=list)
    default_resolution: tuple[int, int] | None = None
    default_frames: int | None = Field(default=None, gt=0)
    latent_channels: int | None = Field(default=None, gt=0)
    vae_spatial_factor: int | None = Field(default=None, gt=0)
    vae_temporal_factor: int | None = Field(default=None, gt=0)

    # --- vision-language and speech models (issue 22 items 3 and 4) ---------------------------
    vision: VisionTower | None = Field(
        default=None, description="the image encoder: from core/data/vision.toml, joined at load"
    )
    speech: SpeechShape | None = Field(default=None, description="a speech model's windows (kind speech)")
    tts: list[TtsStage] = Field(default_factory=list, description="a text-to-speech model's stages")

    @property
    def is_moe(self) -> bool:
        return (self.experts or 0) > 1

    @property
    def attention_layers(self) -> int:
        """Layers that keep a KV cache: all but the recurrent ones (all of them when the two run side
        by side)."""
        r = self.recurrent
        return (self.layers or 0) - (r.layers if r and not r.parallel else 0)

    @property
    def resolved_head_dim(self) -> int | None:
        if self.head_dim:
            return self.head_dim
        if self.hidden_size and self.attention_heads:
            return self.hidden_size // self.attention_heads
        return None

    @model_validator(mode="after")
    def _ranked_if_popular(self) -> ModelSpec:
        if self.popularity is not None and not self.popular:
            raise ValueError("popularity (a rank on the buttons) is for a model with popular = true")
        return self

    @model_validator(mode="after")
    def _consistent(self) -> ModelSpec:
        if self.kind in (ModelKind.IMAGE, ModelKind.VIDEO):
            if not self.components:
                raise ValueError("a diffusion model needs `components`")
            if not any(c.role == "denoiser" for c in self.components):
                raise ValueError("a diffusion pipeline needs a denoiser component")
            if self.native_precision is not None:
                raise ValueError("a diffusion pipeline gives its precisions per component")
        else:
            for name in ("layers", "hidden_size", "attention_heads", "vocab_size"):
                if getattr(self, name) is None:
                    raise ValueError(f"a {self.kind} model needs `{name}`")
        if self.kv_heads and self.attention_heads and self.attention_heads % self.kv_heads:
            raise ValueError("attention_heads must be a multiple of kv_heads")
        if (self.kind is ModelKind.SPEECH) != (self.speech is not None):
            raise ValueError("a speech model (kind speech) needs [model.speech], and only it")
        if (self.kind is ModelKind.TTS) != bool(self.tts):
            raise ValueError("a text-to-speech model (kind tts) needs [[model.tts]] stages, and only it")
        if self.kind is ModelKind.SPEECH and not self.encoder_layers:
            raise ValueError("a speech model needs `encoder_layers`")
        if (self.experts is None) != (self.active_experts is None):
            raise ValueError("set both `experts` and `active_experts` or neither")
        if self.experts and self.active_experts and self.active_experts > self.experts:
            raise ValueError("active_experts exceeds experts")
        if self.active_params_b and self.active_params_b > self.params_b:
            raise ValueError("active_params_b exceeds params_b")
        if self.sliding_window_layers and self.layers and self.sliding_window_layers > self.layers:
            raise ValueError("sliding_window_layers exceeds layers")
        if self.recurrent and self.layers and self.recurrent.layers > self.layers:
            raise ValueError("recurrent layers exceed layers")
        wide = self.unquantized
        if wide and self.layers and max(wide.attention_layers, wide.mlp_layers) > self.layers:
            raise ValueError("unquantized attention_layers / mlp_layers exceed layers")
        return self


class GpuSpec(BaseModel):
    model_config = ConfigDict(extra="forbid")

    id: str = Field(pattern=r"^[a-z0-9][a-z0-9._-]*$")
    name: str
    short_name: str | None = Field(
        default=None, min_length=1, description="as answers name it; default: name"
    )
    aliases: list[str] = Field(default_factory=list)
    vendor: Literal["nvidia", "amd"] = "nvidia"
    marketing_memory_gb: float = Field(gt=0, description="the number on the box")
    usable_bytes: int = Field(gt=0, description="total memory as the driver reports it (nvidia-smi)")
    bandwidth_gb_s: float = Field(gt=0, description="memory bandwidth, GB/s (10^9)")
    bf16: bool
    fp8: bool
    fp16_tflops: float | None = Field(default=None, gt=0, description="dense tensor-core TFLOPS")
    fp8_tflops: float | None = Field(default=None, gt=0, description="dense FP8 tensor-core TFLOPS")
    interconnect: Literal["nvlink", "pcie", "infinity_fabric"] = "pcie"
    same_compute_as: str | None = Field(
        default=None,
        description="another card with the same chip and clocks (fp16/fp8 TFLOPS and bandwidth equal, "
        "checked at load): compute-bound published figures of that card serve this one (core.cost)",
    )
    datacenter: bool = False
    source: str


MAX_SERVER_RAM_GB = 65_536  # 64 TB: past any server
MAX_RAM_BANDWIDTH_GB_S = 10_000  # 2 sockets × 12 channels of DDR5-8800 is 1.7 TB/s
DEFAULT_OFFER_PRIORITY = 100  # an offer without `priority`: after every offer that sets a smaller one
# Bounds of an offers file's values (the operator's OFFERS_FILE, re-read by `/offers reload`), so that an
# absurd value is refused at load, naming its row and field, instead of breaking every answer: a price
# goes through Fluent's NUMBER (Python's decimal, which gives up on 1e300) and into costs (× hours × servers).
MAX_OFFER_CARDS = 64  # cards in one rented configuration
MAX_PRICE_PER_HOUR = 10_000_000  # in any currency: ten million an hour is no server anyone rents
MAX_PRICE_PER_MONTH = MAX_PRICE_PER_HOUR * 24 * 31
MAX_OFFER_ID = 40  # characters: `/offers` lists up to 40 offers in one Telegram message (4,096 characters)
MAX_OFFER_URL = 2048  # characters: what browsers and Telegram's URL buttons take
MAX_OFFER_NOTE = 500  # characters
MAX_OFFER_PRIORITY = 1_000_000
OFFER_URL_SCHEMES = ("http", "https")
_URL_FORBIDDEN = re.compile(r"[\s\x00-\x1f\x7f]")  # whitespace and control characters: no URL holds them

RankKey = Literal["price", "priority", "cards", "memory"]
Availability = Literal["available", "on_request", "sold_out"]
"""An offer's availability: free to rent; rented only on request (ranked and shown as "price on
request"); taken (`sold_out`: never recommended, marked in the price list)."""
AVAILABILITIES: tuple[Availability, ...] = ("available", "on_request", "sold_out")
DEFAULT_RANK_ORDER: tuple[RankKey, ...] = ("price", "priority", "cards", "memory")
DEFAULT_COMFORTABLE_HEADROOM = 0.10
DEFAULT_CHEAPEST_PRICED_LEADS = True
# Below 3% of a card free a run does not fit reliably: the caching allocator's fragmentation and
# the spikes of a longer prompt or a larger batch commonly take that much (PyTorch CUDA memory
# management notes), so such a run is "does not fit", never "tight".
DEFAULT_TIGHT_HEADROOM = 0.03


class Bands(NamedTuple):
    """The fit bands every verdict uses, as shares of the card left free: at least `comfortable`
    fits; at least `tight` fits tightly; less does not fit reliably."""

    comfortable: float = DEFAULT_COMFORTABLE_HEADROOM
    tight: float = DEFAULT_TIGHT_HEADROOM


DEFAULT_BANDS = Bands()


class RankingPolicy(BaseModel):
    """How the recommender orders the rental offers that fit: the `[ranking]` table of the offers
    file, so an operator's policy travels with their offers (`OFFERS_FILE`). Without the table,
    the defaults below apply.

    The fit bands (`bands`): a configuration with at least `comfortable_headroom` of each card's
    memory free fits; with at least `tight_headroom`, it fits tightly; with less it does not fit
    reliably. Every verdict, offer and mitigation reads these. Only configurations that fit
    comfortably are considered; tight ones only when none does. Among those, `order` compares, key by key:

    - `price`: offers with a price first, by that price per hour (the whole server's);
      "on request" ones after them, equal among themselves;
    - `priority`: the offer's `priority`, lower first (the operator's own preference);
    - `cards`: fewer cards first (one larger card beats two smaller: no inter-card traffic);
    - `memory`: the least memory rented (cards × memory per card) first.

    Keys left out of `order` still break ties, after the listed ones and in the order above; the
    last tie-break is the offer's position in the file.

    `cheapest_priced_leads`: when every comfortable configuration is "on request" and an offer with a
    price fits only tightly (less than `comfortable_headroom` free), the cheapest such still leads — a
    price the user can act on beats "on request" — and the best comfortable configuration is named
    second (`Result.alternatives`, reason "most_headroom"), with what keeps the tight one safe.
    """

    model_config = ConfigDict(extra="forbid")

    comfortable_headroom: float = Field(
        default=DEFAULT_COMFORTABLE_HEADROOM,
        ge=0,
        lt=1,
        description="share of each card's memory left free for a configuration to count as comfortable",
    )
    tight_headroom: float = Field(
        default=DEFAULT_TIGHT_HEADROOM,
        ge=0,
        lt=1,
        description="the least share of each card's memory left free for a configuration to fit at all "
        "(tightly); below it, it does not fit reliably",
    )
    order: list[RankKey] = Field(default_factory=lambda: list(DEFAULT_RANK_ORDER), min_length=1)
    cheapest_priced_leads: bool = Field(
        default=DEFAULT_CHEAPEST_PRICED_LEADS,
        description="a tight priced offer leads before comfortable ones on request; those second",
    )

    @field_validator("order")
    @classmethod
    def _no_repeats(cls, order: list[RankKey]) -> list[RankKey]:
        repeated = next((k for i, k in enumerate(order) if k in order[:i]), None)
        if repeated is not None:
            raise ValueError(f"{repeated!r} is listed twice")
        return order

    @model_validator(mode="after")
    def _tight_below_comfortable(self) -> RankingPolicy:
        if self.tight_headroom > self.comfortable_headroom:
            raise ValueError(
                f"tight_headroom ({self.tight_headroom}) is more than comfortable_headroom "
                f"({self.comfortable_headroom})"
            )
        return self

    @property
    def bands(self) -> Bands:
        return Bands(self.comfortable_headroom, self.tight_headroom)

    @property
    def keys(self) -> list[RankKey]:
        """`order` followed by the keys it leaves out, in the default order."""
        return [*self.order, *(k for k in DEFAULT_RANK_ORDER if k not in self.order)]


CURRENCY_CODE = r"^[A-Z]{3}$"  # ISO 4217: RUB, KZT, USD


class OfferPrice(BaseModel):
    """The offer's price in another currency, as the operator sets it (`[offer.prices.KZT]`): never
    converted from the main one. Bounded as the main price is."""

    model_config = ConfigDict(extra="forbid")

    price_per_hour: float | None = Field(default=None, gt=0, le=MAX_PRICE_PER_HOUR, allow_inf_nan=False)
    price_per_month: float | None = Field(default=None, gt=0, le=MAX_PRICE_PER_MONTH, allow_inf_nan=False)

    @model_validator(mode="after")
    def _some_price(self) -> OfferPrice:
        if self.price_per_hour is None and self.price_per_month is None:
            raise ValueError("a price in another currency needs price_per_hour or price_per_month")
        return self


class RentalOffer(BaseModel):
    model_config = ConfigDict(extra="forbid")

    id: str = Field(pattern=r"^[A-Za-z0-9][A-Za-z0-9._-]*$", max_length=MAX_OFFER_ID)
    gpu: str = Field(description="GpuSpec.id")
    count: int = Field(gt=0, le=MAX_OFFER_CARDS)
    price_per_hour: float | None = Field(
        default=None, gt=0, le=MAX_PRICE_PER_HOUR, allow_inf_nan=False, description="empty: on request"
    )
    currency: str | None = Field(default=None, pattern=CURRENCY_CODE, description="the main currency")
    prices: dict[Annotated[str, StringConstraints(pattern=CURRENCY_CODE)], OfferPrice] = Field(
        default_factory=dict, description="the same offer priced by the operator in other currencies"
    )
    url: str = Field(max_length=MAX_OFFER_URL)
    note: str | None = Field(default=None, max_length=MAX_OFFER_NOTE)
    price_is_from: bool = Field(
        default=False, description="price_per_hour is a starting price: shown as 'from 149 ₽/h'"
    )
    price_per_month: float | None = Field(
        default=None,
        gt=0,
        le=MAX_PRICE_PER_MONTH,
        allow_inf_nan=False,
        description="a monthly price where the operator has one",
    )
    priority: int = Field(
        default=DEFAULT_OFFER_PRIORITY,
        ge=0,
        le=MAX_OFFER_PRIORITY,
        description="the operator's preference, lower first (the `priority` key of `[ranking].order`)",
    )
    availability: Availability = Field(
        default="available", description="free, on request or taken (admins change it: /offers off|on)"
    )
    # issue 22: what llama.cpp offload to RAM runs at; unknown ones are assumed (core/data/offload.toml)
    ram_gb: float | None = Field(
        default=None, gt=0, le=MAX_SERVER_RAM_GB, allow_inf_nan=False, description="the server's RAM, GB"
    )
    ram_bandwidth_gb_s: float | None = Field(
        default=None,
        gt=0,
        le=MAX_RAM_BANDWIDTH_GB_S,
        allow_inf_nan=False,
        description="the server's RAM bandwidth, GB/s (channels × MT/s × 8 bytes)",
    )

    @field_validator("url")
    @classmethod
    def _url_is_well_formed(cls, url: str) -> str:
        """An http(s) URL naming a host, with nothing a link cannot hold (it goes on buttons and in texts)."""
        if _URL_FORBIDDEN.search(url):
            raise ValueError("must not contain spaces or control characters")
        try:
            parts = urlsplit(url)
            host, _ = parts.hostname, parts.port  # the port raises when not a number in 0..65535
        except ValueError as e:
            raise ValueError(f"is not a well-formed URL ({e})") from None
        if parts.scheme not in OFFER_URL_SCHEMES:
            raise ValueError("must start with http:// or https://")
        if not host:
            raise ValueError("must name a host after the scheme")
        return url

    @model_validator(mode="after")
    def _price_has_currency(self) -> RentalOffer:
        if (self.price_per_hour is not None or self.price_per_month is not None) and self.currency is None:
            raise ValueError("a price needs a currency")
        if self.price_is_from and self.price_per_hour is None:
            raise ValueError("price_is_from needs a price_per_hour")
        if self.prices and (self.currency is None or self.currency in self.prices):
            raise ValueError("prices in other currencies need a main price and currency, not repeated")
        return self

    def price_in(self, currency: str | None) -> tuple[float | None, float | None, str | None]:
        """(per hour, per month, currency): in `currency` where the operator gave that price, else
        in the main currency."""
        other = self.prices.get(currency) if currency else None
        if other is not None and currency is not None:
            return other.price_per_hour, other.price_per_month, currency
        return self.price_per_hour, self.price_per_month, self.currency
