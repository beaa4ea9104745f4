"""A model given by its architecture instead of a name (`Request.model` as an object): the bounds of
each number, checked against the stated parameters, and how many GPUs such a model splits across."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field, ValidationInfo, field_validator
from pydantic_core import PydanticCustomError

from core.contract.enums import Engine, Task

# Upper bounds of an architecture given in a request: well past every published model (hidden
# 25 600, 128 heads, FFN 53 248, vocabulary 262 144, 384 experts), far below what overflows the formulas.
MAX_LAYERS = 1000
MAX_HIDDEN_SIZE = 65_536
MAX_HEADS = 1024
MAX_HEAD_DIM = 1024
MAX_INTERMEDIATE_SIZE = 1_048_576
MAX_VOCAB_SIZE = 4_194_304
MAX_EXPERTS = 4096
# The architecture must not imply far more parameters than `params_b` says: each layer holds at least
# hidden² weights (attention q/o projections alone are 2·hidden²), the embedding vocab × hidden.
# Twice params_b is the tolerance (shared or factorised weights, rounding in what the caller copied).
ARCH_PARAMS_TOLERANCE = 2.0


def field_error(kind: str, message: str) -> PydanticCustomError:
    """A validation error with `message` as is (no "Value error, " prefix); braces are not allowed."""
    return PydanticCustomError(kind, message)


def too_many_params(field: str, what: str, implied: float, params_b: float) -> PydanticCustomError:
    return field_error(
        "architecture_exceeds_params",
        f"{what} = {implied / 1e9:.3g}B parameters, far more than params_b = {params_b:g}B; "
        f"check {field} and params_b",
    )


class CustomModel(BaseModel):
    """A model described by its architecture instead of a catalogue id.

    Each number is bounded, and what is given is checked against `params_b`: `layers × hidden_size²`
    and `vocab_size × hidden_size` may not exceed twice the stated parameters; `kv_heads` may not
    exceed `attention_heads`, nor `active_experts` `experts`.
    """

    model_config = ConfigDict(extra="forbid", allow_inf_nan=False)

    params_b: float = Field(gt=0, le=20_000, description="total parameters, billions")
    layers: int | None = Field(default=None, gt=0, le=MAX_LAYERS)
    hidden_size: int | None = Field(default=None, gt=0, le=MAX_HIDDEN_SIZE)
    attention_heads: int | None = Field(default=None, gt=0, le=MAX_HEADS)
    kv_heads: int | None = Field(default=None, gt=0, le=MAX_HEADS)
    head_dim: int | None = Field(default=None, gt=0, le=MAX_HEAD_DIM)
    intermediate_size: int | None = Field(default=None, gt=0, le=MAX_INTERMEDIATE_SIZE)
    vocab_size: int | None = Field(default=None, gt=0, le=MAX_VOCAB_SIZE)
    tied_embeddings: bool = False
    gated_mlp: bool | None = Field(
        default=None,
        description="extension: True for a gated MLP of three matrices (SwiGLU: Llama, Qwen, Mistral), "
        "False for two (OPT, BLOOM, BERT, StarCoder, GPT-2); default: the variant whose parameter "
        "count is closer to params_b when layers, hidden_size and intermediate_size are given, "
        "else the typical model's",
    )
    experts: int | None = Field(default=None, gt=0, le=MAX_EXPERTS)
    active_experts: int | None = Field(default=None, gt=0, le=MAX_EXPERTS)

    # Field validators see the fields declared before theirs (info.data): the error names the field.
    @field_validator("hidden_size")
    @classmethod
    def _layers_fit_params(cls, value: int | None, info: ValidationInfo) -> int | None:
        params_b, layers = info.data.get("params_b"), info.data.get("layers")
        if value is not None and params_b and layers:
            implied = float(layers) * value * value
            if implied > ARCH_PARAMS_TOLERANCE * params_b * 1e9:
                raise too_many_params("layers, hidden_size", "layers × hidden_size²", implied, params_b)
        return value

    @field_validator("kv_heads")
    @classmethod
    def _kv_heads_within_heads(cls, value: int | None, info: ValidationInfo) -> int | None:
        heads = info.data.get("attention_heads")
        if value is not None and heads and value > heads:
            raise field_error(
                "kv_heads_above_heads", f"kv_heads ({value}) cannot exceed attention_heads ({heads})"
            )
        return value

    @field_validator("vocab_size")
    @classmethod
    def _vocab_fits_params(cls, value: int | None, info: ValidationInfo) -> int | None:
        params_b, hidden = info.data.get("params_b"), info.data.get("hidden_size")
        if value is not None and params_b and hidden:
            implied = float(value) * hidden
            if implied > ARCH_PARAMS_TOLERANCE * params_b * 1e9:
                raise too_many_params(
                    "vocab_size, hidden_size", "vocab_size × hidden_size", implied, params_b
                )
        return value

    @field_validator("active_experts")
    @classmethod
    def _active_within_experts(cls, value: int | None, info: ValidationInfo) -> int | None:
        experts = info.data.get("experts")
        if value is not None and experts and value > experts:
            raise field_error(
                "active_experts_above_experts", f"active_experts ({value}) cannot exceed experts ({experts})"
            )
        return value


def max_model_split(task: Task, engine: Engine | None, layers: int | None, heads: int | None) -> int | None:
    """The most GPUs one model can be split across for `task`; None when nothing limits it.

    Inference spreads whole layers over the GPUs (transformers `device_map`, llama.cpp; the default
    engines) or splits the attention heads across tensor-parallel ranks (vLLM): more GPUs than
    layers (heads) would hold nothing. Training shards tensors (ZeRO/FSDP) or replicates the model
    (data parallel), and the diffusion pipelines run on one card: no limit.
    """
    if task is not Task.INFERENCE:
        return None
    return heads if engine is Engine.VLLM else layers
