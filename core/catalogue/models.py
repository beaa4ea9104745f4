"""Model rows of the catalogue (`core/data/models.toml`, `vision.toml`): a model's architecture, its
pipeline components, its recurrent layers and vision tower, as validated at load."""

from __future__ import annotations

from enum import StrEnum
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

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
        problem = next((message for broken, message in self._problems() if broken), None)
        if problem is not None:
            raise ValueError(problem)
        return self

    def _problems(self) -> list[tuple[bool, str]]:
        """Each rule a spec must keep: (broken, what to say), in the order they are checked."""
        diffusion = self.kind in (ModelKind.IMAGE, ModelKind.VIDEO)
        wide = self.unquantized
        return [
            (diffusion and not self.components, "a diffusion model needs `components`"),
            (
                diffusion and not any(c.role == "denoiser" for c in self.components),
                "a diffusion pipeline needs a denoiser component",
            ),
            (
                diffusion and self.native_precision is not None,
                "a diffusion pipeline gives its precisions per component",
            ),
            *(
                (not diffusion and getattr(self, name) is None, f"a {self.kind} model needs `{name}`")
                for name in ("layers", "hidden_size", "attention_heads", "vocab_size")
            ),
            (
                bool(self.kv_heads and self.attention_heads and self.attention_heads % self.kv_heads),
                "attention_heads must be a multiple of kv_heads",
            ),
            (
                (self.kind is ModelKind.SPEECH) != (self.speech is not None),
                "a speech model (kind speech) needs [model.speech], and only it",
            ),
            (
                (self.kind is ModelKind.TTS) != bool(self.tts),
                "a text-to-speech model (kind tts) needs [[model.tts]] stages, and only it",
            ),
            (
                self.kind is ModelKind.SPEECH and not self.encoder_layers,
                "a speech model needs `encoder_layers`",
            ),
            (
                (self.experts is None) != (self.active_experts is None),
                "set both `experts` and `active_experts` or neither",
            ),
            (
                bool(self.experts and self.active_experts and self.active_experts > self.experts),
                "active_experts exceeds experts",
            ),
            (
                bool(self.active_params_b and self.active_params_b > self.params_b),
                "active_params_b exceeds params_b",
            ),
            (
                bool(self.sliding_window_layers and self.layers and self.sliding_window_layers > self.layers),
                "sliding_window_layers exceeds layers",
            ),
            (
                bool(self.recurrent and self.layers and self.recurrent.layers > self.layers),
                "recurrent layers exceed layers",
            ),
            (
                bool(wide and self.layers and max(wide.attention_layers, wide.mlp_layers) > self.layers),
                "unquantized attention_layers / mlp_layers exceed layers",
            ),
        ]
