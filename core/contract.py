"""The JSON contract of the estimator: one request in, one result out.

Fixed by the core issue: fields may be added, never renamed. Every request field but
`task` and `model` has a default, documented on the field. Sizes are bytes everywhere; the human
answers show them in GB as cards are named, 1 GB = 2^30 bytes (an "RTX 4090 48 GB" holds 48 GB).
"""

from __future__ import annotations

from enum import StrEnum
from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationInfo, field_validator
from pydantic_core import PydanticCustomError


class Task(StrEnum):
    INFERENCE = "inference"
    TRAINING = "training"
    IMAGE_GENERATION = "image_generation"
    VIDEO_GENERATION = "video_generation"


class Precision(StrEnum):
    """Weight formats. GGUF types keep llama.cpp's names."""

    FP32 = "fp32"
    FP16 = "fp16"
    BF16 = "bf16"
    FP8 = "fp8"
    INT8 = "int8"
    INT4 = "int4"
    NF4 = "nf4"
    GPTQ_INT4 = "gptq-int4"
    AWQ_INT4 = "awq-int4"
    MXFP4 = "mxfp4"  # extension: OCP microscaling FP4, as GPT-OSS ships its experts
    Q8_0 = "q8_0"
    Q6_K = "q6_k"
    Q5_K_M = "q5_k_m"
    Q4_K_M = "q4_k_m"
    Q4_0 = "q4_0"
    Q4_1 = "q4_1"
    Q3_K_M = "q3_k_m"
    Q2_K = "q2_k"


class KvPrecision(StrEnum):
    FP32 = "fp32"
    FP16 = "fp16"
    BF16 = "bf16"
    FP8 = "fp8"
    INT8 = "int8"
    INT4 = "int4"


class Engine(StrEnum):
    TRANSFORMERS = "transformers"
    VLLM = "vllm"
    LLAMA_CPP = "llama.cpp"
    DIFFUSERS = "diffusers"
    UNSLOTH = "unsloth"  # training: offloaded checkpoints, loss without full logits
    TORCHTUNE = "torchtune"  # training: chunked loss, adapters in the model dtype (bf16)
    CTRANSLATE2 = "ctranslate2"  # extension: faster-whisper's engine (speech models; fp16, int8)


class Method(StrEnum):
    FULL = "full"
    LORA = "lora"
    QLORA = "qlora"


class MixedPrecision(StrEnum):
    NONE = "none"
    BF16 = "bf16"
    FP16 = "fp16"


class Optimizer(StrEnum):
    ADAMW = "adamw"
    ADAMW_8BIT = "adamw_8bit"
    PAGED_ADAMW = "paged_adamw"
    PAGED_ADAMW_8BIT = "paged_adamw_8bit"
    ADAFACTOR = "adafactor"
    SGD = "sgd"
    LION = "lion"


class Attention(StrEnum):
    SDPA = "sdpa"
    EAGER = "eager"


class Sharding(StrEnum):
    NONE = "none"
    ZERO2 = "zero2"
    ZERO3 = "zero3"
    FSDP = "fsdp"


class CpuOffload(StrEnum):
    NONE = "none"
    MODEL = "model"
    SEQUENTIAL = "sequential"


class QuantBackend(StrEnum):
    """The library that quantizes a 16-bit checkpoint to `int8`/`int4` while it loads."""

    BITSANDBYTES = "bitsandbytes"  # quantizes on the GPU only ("A GPU is needed for quantization")
    TORCHAO = "torchao"  # quantizes on the device the weights load to (`quantize_`), the CPU too


class AdapterDtype(StrEnum):
    FP32 = "fp32"  # peft's default (autocast_adapter_dtype=True upcasts the adapters)
    BF16 = "bf16"  # torchtune; the reference QLoRA script casts adapters back to bf16


class LoraTargets(StrEnum):
    ALL_LINEAR = "all-linear"
    ATTENTION = "attention"  # q_proj + v_proj, the original LoRA paper's choice


class OffloadMode(StrEnum):
    """What llama.cpp keeps in host RAM when the model does not fit the cards (issue 22)."""

    LAYERS = "layers"  # -ngl N: whole layers
    EXPERTS = "experts"  # --n-cpu-moe N / -ot exps=CPU: the routed experts of the first N layers
    AUTO = "auto"  # experts on a mixture of experts, layers otherwise ("offload to RAM")


class SolveFor(StrEnum):
    """Inverse questions (core.solve): the largest value of this field that fits the target cards."""

    CONTEXT_LENGTH = "context_length"
    CONCURRENCY = "concurrency"
    BATCH_SIZE = "batch_size"
    SEQ_LEN = "seq_len"
    PRECISION = "precision"  # the highest-quality weight format that fits
    MODEL = "model"  # the largest catalogue model of the family that fits
    GPU_LAYERS = "gpu_layers"  # llama.cpp -ngl: the most layers on the GPU, the rest in RAM (issue 22)


class SpeculativeMethod(StrEnum):
    """extension: speculative decoding (vLLM `--speculative-config` `method`)."""

    DRAFT_MODEL = "draft_model"  # a smaller model of the same tokenizer proposes the tokens
    EAGLE = "eagle"  # an EAGLE head: one decoder layer over the target's features
    EAGLE3 = "eagle3"  # EAGLE-3: one layer over low/mid/high features, its own small vocabulary
    MTP = "mtp"  # the model's own multi-token-prediction layer (DeepSeek-V3, Qwen3-Next, GLM-4.5)
    NGRAM = "ngram"  # prompt lookup: proposes tokens copied from the prompt, no weights


# `model` for solve_for "model" when no model is named: every catalogue model of the task's kind.
ANY_MODEL = "*"


# One side of an image or video frame: latents need at least 8 × 8 of them; 16K is past any model.
Pixels = Annotated[int, Field(ge=64, le=16_384)]


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


def _field_error(kind: str, message: str) -> PydanticCustomError:
    """A validation error with `message` as is (no "Value error, " prefix); braces are not allowed."""
    return PydanticCustomError(kind, message)


def _too_many_params(field: str, what: str, implied: float, params_b: float) -> PydanticCustomError:
    return _field_error(
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
                raise _too_many_params("layers, hidden_size", "layers × hidden_size²", implied, params_b)
        return value

    @field_validator("kv_heads")
    @classmethod
    def _kv_heads_within_heads(cls, value: int | None, info: ValidationInfo) -> int | None:
        heads = info.data.get("attention_heads")
        if value is not None and heads and value > heads:
            raise _field_error(
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
                raise _too_many_params(
                    "vocab_size, hidden_size", "vocab_size × hidden_size", implied, params_b
                )
        return value

    @field_validator("active_experts")
    @classmethod
    def _active_within_experts(cls, value: int | None, info: ValidationInfo) -> int | None:
        experts = info.data.get("experts")
        if value is not None and experts and value > experts:
            raise _field_error(
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


# An embedding server batches inputs of this many tokens by default (text-embeddings-inference's
# --max-client-batch-size 32; 512 tokens is BERT-style encoders' max_position_embeddings).
STACK_DEFAULT_BATCH = 32
STACK_DEFAULT_TOKENS = 512
MAX_EXTRA_MODELS = 8  # models beside the main one: past any RAG stack


class StackModel(BaseModel):
    """extension: a model served beside the request's model on the same card (a RAG stack: an embedding
    model, a reranker). Sized for inference at its own batch, then added to every card's need."""

    model_config = ConfigDict(extra="forbid", allow_inf_nan=False)

    model: str = Field(description="catalogue id, alias or Hugging Face id")
    role: Literal["embedding", "reranker", "llm"] | None = Field(
        default=None, description="default: reranker when the name says so, embedding for encoders"
    )
    precision: Precision | None = Field(default=None, description="default: bf16")
    context_length: int | None = Field(
        default=None, gt=0, le=1_000_000,
        description=f"tokens per input; default {STACK_DEFAULT_TOKENS}, or the model's maximum if shorter",
    )
    batch_size: int = Field(
        default=STACK_DEFAULT_BATCH, gt=0, le=100_000, description="inputs embedded (or pairs scored) at once"
    )


class Request(BaseModel):
    """What to size. `None` means "the documented default for this task and model"."""

    model_config = ConfigDict(extra="forbid", use_enum_values=False, allow_inf_nan=False)

    task: Task
    model: str | CustomModel = Field(
        description="catalogue id, alias, Hugging Face id, a size such as '7B', or an architecture"
    )
    precision: Precision | None = Field(
        default=None,
        description="weights; default: as the checkpoint ships for inference (bf16 for most models, "
        "fp8 for DeepSeek V3/R1, mxfp4 for GPT-OSS; diffusion: the denoiser's), bf16 for training "
        "(nf4 for QLoRA)",
    )
    engine: Engine | None = Field(
        default=None,
        description="default: transformers for LLMs, diffusers for image/video, "
        "llama.cpp when the precision is a GGUF type",
    )
    context_length: int | None = Field(
        default=None, gt=0, le=10_000_000, description="tokens per sequence (inference); default 4096"
    )
    concurrency: int = Field(default=1, gt=0, le=100_000, description="simultaneous sequences")
    kv_cache_precision: KvPrecision | None = Field(
        default=None, description="default: the compute dtype (bf16, fp16 under llama.cpp)"
    )
    method: Method = Field(default=Method.FULL, description="training method")
    mixed_precision: MixedPrecision | None = Field(
        default=None,
        description="compute dtype of mixed-precision training with fp32 master weights; "
        "default bf16 for full training, none for LoRA/QLoRA; image/video generation: the autocast "
        "dtype over fp32 weights (Wan's generate.py), default none",
    )
    optimizer: Optimizer = Optimizer.ADAMW
    batch_size: int = Field(default=1, gt=0, le=100_000, description="micro-batch per GPU")
    seq_len: int | None = Field(default=None, gt=0, le=10_000_000, description="training; default 2048")
    gradient_checkpointing: bool | None = Field(
        default=None,
        description="default: on for decoder language models (TRL's SFTTrainer, LLaMA-Factory, Axolotl "
        "recipes, Unsloth and torchtune turn it on) and for QLoRA (peft's "
        "prepare_model_for_kbit_training); off for encoders, encoder-decoders and diffusion "
        "(transformers' TrainingArguments and the diffusers training scripts leave it off)",
    )
    gradient_accumulation_steps: int = Field(
        default=1,
        ge=1,
        le=100_000,
        description="extension: micro-batches per optimizer step; above 1 the gradients stay allocated "
        "through every forward and backward (they accumulate), default 1",
    )
    attention: Attention = Attention.SDPA
    lora_rank: int = Field(default=16, gt=0, le=4096)
    lora_targets: LoraTargets = LoraTargets.ALL_LINEAR
    adapter_dtype: AdapterDtype | None = Field(
        default=None,
        description="extension: LoRA/QLoRA adapter weights (and so their gradients and optimizer "
        "states); default fp32 as peft keeps them, bf16 under torchtune. bf16 is also what the "
        "reference QLoRA script does (artidoro/qlora qlora.py casts adapters, embeddings and the LM "
        "head back to bf16): with it QLoRA's embeddings and LM head stay bf16; null for full training",
    )
    torch_compile: bool = Field(
        default=False,
        description="extension: training under torch.compile (transformers' TrainingArguments "
        "torch_compile, torchtune `compile`; both off by default): the backward recomputes cheap "
        "elementwise ops instead of saving their outputs",
    )
    lora_dropout: float = Field(
        default=0.0,
        ge=0,
        lt=1,
        description="extension: dropout on the adapters' input (peft LoraConfig, default 0.0); above 0 "
        "every adapted layer saves a dropped-out copy of its input and the mask for backward",
    )
    num_gpus: int = Field(default=1, gt=0, le=1024, description="GPUs of the requested configuration")
    sharding: Sharding | None = Field(
        default=None,
        description="training across GPUs; default: as such a job is launched — none on one GPU, FSDP "
        "full sharding on several (plain replicas would need the one-GPU memory on every GPU); "
        "image/video generation: fsdp/zero3 shard the pipeline's transformers and split the tokens "
        "over num_gpus (Wan's --dit_fsdp --t5_fsdp --ulysses_size), default none",
    )
    resolution: tuple[Pixels, Pixels] | None = Field(
        default=None, description="[w, h], 64 to 16384 px each; default: the model's native resolution"
    )
    images: int = Field(default=1, gt=0, le=1024, description="images per batch")
    frames: int | None = Field(
        default=None, gt=0, le=10_000, description="video frames; default: the model's"
    )
    cpu_offload: CpuOffload = Field(
        default=CpuOffload.NONE,
        description="inference: `model` streams the weights from CPU RAM a layer (diffusion: a "
        "component) at a time, `sequential` a block at a time. Training: `model` = the optimizer in "
        "CPU RAM (DeepSpeed offload_optimizer: fp32 master weights, optimizer states and gradients; "
        "16-bit weights stay on the GPU), `sequential` = parameters too (DeepSpeed ZeRO-3 "
        "offload_param + offload_optimizer, FSDP CPUOffload(offload_params=True), which moves the "
        "gradients with them)",
    )
    vae_tiling: bool = False
    vae_slicing: bool = Field(
        default=False,
        description="extension: decode the outputs one at a time (diffusers enable_vae_slicing); "
        "with several images or video clips the VAE peak is that of one",
    )
    gpus: list[str] | None = Field(
        default=None, description="extension: GPU ids to give verdicts for; default every catalogue GPU"
    )
    quantized_components: list[Literal["denoiser", "text_encoder"]] | None = Field(
        default=None,
        description="extension, diffusion: the components a quantized `precision` applies to; default: "
        "the denoiser and the text encoders of 1B parameters or more (the diffusers bitsandbytes "
        "recipes), the denoiser alone for a GGUF precision (GGUF checkpoints hold the transformer only)",
    )
    text_encoder_on_cpu: bool = Field(
        default=False,
        description="extension, diffusion: the text encoders run on the CPU (Wan's `--t5_cpu`, "
        "HunyuanVideo's CPU-offloaded text encoder); none of their weights on the GPU",
    )
    quant_backend: QuantBackend | None = Field(
        default=None,
        description="extension: the library that quantizes an `int8`/`int4` precision while loading; "
        "default bitsandbytes, which quantizes on the GPU (diffusers/transformers bnb quantizers), so "
        "an offloaded pipeline peaks at max(loading, running); torchao quantizes where the weights "
        "load (diffusers TorchAoHfQuantizer `create_quantized_param`), the CPU when offloaded",
    )
    gpu_memory_utilization: float | None = Field(
        default=None,
        gt=0,
        le=1,
        description="extension: vLLM's share of each card (--gpu-memory-utilization); verdicts compare "
        "with that share and the rest of it becomes KV cache; default 0.9 under vLLM, null otherwise",
    )
    # --- extension: inverse questions and time & cost (core.solve, core.cost; `core.solve.run`) ----
    solve_for: SolveFor | None = Field(
        default=None,
        description="extension: find the largest value of this field that fits gpus[0] × num_gpus "
        "(or memory_gb); the other fields stay as given. Answered by core.solve.run (CLI: estimate "
        "--json), which fills Result.solved",
    )
    memory_gb: float | None = Field(
        default=None,
        gt=0,
        le=100_000,
        description="extension: the target card for solve_for as a bare memory size, GB = 2^30 bytes "
        "per card ('24 GB'), when no catalogue GPU is named",
    )
    dataset_tokens: int | None = Field(
        default=None, gt=0, le=10**15, description="extension: training tokens per epoch (time & cost)"
    )
    examples: int | None = Field(
        default=None, gt=0, le=10**12, description="extension: training examples per epoch (time & cost)"
    )
    tokens_per_example: int | None = Field(
        default=None, gt=0, le=10_000_000, description="extension: typical example length; default seq_len"
    )
    epochs: float = Field(default=1, gt=0, le=10_000, description="extension: passes over the dataset")
    requests_per_day: int | None = Field(
        default=None, gt=0, le=10**10, description="extension: inference requests a day to price"
    )
    tokens_per_request: int | None = Field(
        default=None, gt=0, le=10_000_000, description="extension: tokens generated per request; default 500"
    )
    prompt_tokens: int | None = Field(
        default=None, ge=0, le=10_000_000, description="extension: prompt tokens per request; default 1000"
    )
    outputs: int | None = Field(
        default=None, gt=0, le=10**9, description="extension: images (clips) to price; default 1000"
    )
    extra_models: list[StackModel] = Field(
        default_factory=list,
        max_length=MAX_EXTRA_MODELS,
        description="extension: models served beside `model` on the same card (embedding, reranker); "
        "their memory is added to every card's need (breakdown key `extra_models`, detail in `stack`)",
    )
    # --- extension: llama.cpp offload to host RAM (core.offload, core.formulas.offload; issue 22) ----
    gpu_layers: int | None = Field(
        default=None,
        ge=0,
        le=MAX_LAYERS + 1,
        description="extension, llama.cpp: -ngl, the layers on the GPU counted as llama.cpp counts "
        "them (blocks + the output layer, which goes first); the rest in RAM; null: all",
    )
    n_cpu_moe: int | None = Field(
        default=None,
        ge=0,
        le=MAX_LAYERS,
        description="extension, llama.cpp: --n-cpu-moe N, the routed experts of the first N blocks in "
        "RAM (attention, shared experts and KV stay on the GPU); the layer count = --cpu-moe / -ot exps=CPU",
    )
    offload: OffloadMode | None = Field(
        default=None,
        description="extension: offload to RAM as it fits gpus[0] x num_gpus (default: the first-choice "
        "offer's card): `layers` the largest -ngl, `experts` the fewest --n-cpu-moe, `auto` experts on a "
        "mixture of experts and layers otherwise (training and diffusion: cpu_offload model); fills "
        "gpu_layers or n_cpu_moe and Result.offload. Implies engine llama.cpp",
    )
    ram_bandwidth_gb_s: float | None = Field(
        default=None,
        gt=0,
        le=100_000,
        description="extension: the server's RAM bandwidth, GB/s, for the speed of what runs from RAM; "
        "default: the offer's (offers file), else the assumed server's (core/data/offload.toml)",
    )

    # --- extension: speculative decoding (core.formulas.speculative; core/data/speculative.toml) ----
    speculative: SpeculativeMethod | None = Field(
        default=None,
        description="extension: speculative decoding; default none, draft_model when draft_model is given",
    )
    draft_model: str | None = Field(
        default=None,
        max_length=200,
        description="extension: the draft model (catalogue id, alias or size) for speculative draft_model",
    )
    num_speculative_tokens: int | None = Field(
        default=None,
        gt=0,
        le=32,
        description="extension: tokens proposed per step (k; k + 1 are verified); default per method",
    )

    # --- extension: vision-language and speech models (issue 22 items 3, 4; core.formulas.vision,
    # core.formulas.speech) ------------------------------------------------------------------------
    images_per_prompt: int | None = Field(
        default=None,
        ge=0,
        le=64,
        description="extension: images in each prompt of a vision-language model (vLLM "
        "--limit-mm-per-prompt); their tokens count in the KV cache; default 0 (text only), 1 when the "
        "question asks for vision",
    )
    max_pixels: int | None = Field(
        default=None,
        ge=784,
        le=100_000_000,
        description="extension: pixels of the largest image after the processor's resize (Qwen-VL "
        "`max_pixels`, vLLM --mm-processor-kwargs); default: the processor's own cap",
    )
    beam_size: int | None = Field(
        default=None,
        gt=0,
        le=64,
        description="extension: speech models: decoder beams per audio window; default 5 under "
        "ctranslate2 (faster-whisper `transcribe`), 1 under transformers (greedy `generate`)",
    )

    # --- extension: latency and load (core.latency): time to first token, "10 RPS under 2 s" -------
    requests_per_second: float | None = Field(
        default=None,
        gt=0,
        le=1_000_000,
        description="extension: new requests a second to serve (inference); the answer gives the servers "
        "of the shown configuration it takes (Result.latency), each a queue of prefills (M/D/1)",
    )
    ttft_target_s: float | None = Field(
        default=None,
        gt=0,
        le=3600,
        description="extension: the mean time to first token to stay under, seconds, at "
        "requests_per_second (the first token of a request waiting its turn included)",
    )

    @field_validator("num_gpus")
    @classmethod
    def _num_gpus_within_the_split(cls, value: int, info: ValidationInfo) -> int:
        """An architecture given in the request is not split across more GPUs than it has layers
        (inference; heads under vLLM). Catalogue models: `max_model_split` with their architecture."""
        model, task = info.data.get("model"), info.data.get("task")
        if isinstance(model, CustomModel) and task is not None:
            engine = info.data.get("engine")
            limit = max_model_split(task, engine, model.layers, model.attention_heads)
            if limit is not None and value > limit:
                unit = "attention heads (vLLM tensor parallel)" if engine is Engine.VLLM else "layers"
                raise _field_error(
                    "num_gpus_above_split",
                    f"num_gpus ({value}) is more than the model can be split into: {limit} {unit}",
                )
        return value


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
    # extension (core.latency): the prompt's prefill at the card's compute, then one decode step
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


class StackPart(BaseModel):
    """extension: one model of `Request.extra_models`, sized."""

    model: ResolvedModel
    role: Literal["embedding", "reranker", "llm"]
    precision: Precision
    context_length: int
    batch_size: int
    total_bytes: int = Field(description="its peak on the card that serves it, its own CUDA context included")
    breakdown: dict[str, int]


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
    """extension: the command that runs what was sized (core.launch); `core.launch.command_text` lays
    it out. `model` is the Hugging Face id, or a GGUF file name to replace (`model_is_placeholder`)."""

    engine: Literal["vllm", "llama.cpp", "ollama", "transformers", "accelerate"]
    kind: Literal["shell", "modelfile", "python"]
    program: str
    model: str
    model_is_placeholder: bool = False
    args: list[LaunchArg] = Field(default_factory=list)
    env: list[LaunchArg] = Field(default_factory=list, description="environment variables to set first")


class Latency(BaseModel):
    """extension: time to first token on the shown configuration (the user's card, else the
    recommended one) and, with `requests_per_second`, the servers of it that load takes (core.latency).

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
    # --- extension: the launch command and latency (core.launch, core.latency) ----------------------
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
