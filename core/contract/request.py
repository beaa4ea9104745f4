"""The JSON contract of the estimator: one request in, one result out.

Fixed by the core issue: fields may be added, never renamed. Every request field but
`task` and `model` has a default, documented on the field. Sizes are bytes everywhere; the human
answers show them in GB as cards are named, 1 GB = 2^30 bytes (an "RTX 4090 48 GB" holds 48 GB).
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationInfo, field_validator

from core.contract.custom_model import MAX_LAYERS, CustomModel, field_error, max_model_split
from core.contract.enums import (
    AdapterDtype,
    Attention,
    CpuOffload,
    Engine,
    KvPrecision,
    LoraTargets,
    Method,
    MixedPrecision,
    OffloadMode,
    Optimizer,
    Precision,
    QuantBackend,
    Sharding,
    SolveFor,
    SpeculativeMethod,
    Task,
)

# One side of an image or video frame: latents need at least 8 × 8 of them; 16K is past any model.
Pixels = Annotated[int, Field(ge=64, le=16_384)]


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
        default=None,
        gt=0,
        le=1_000_000,
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
    # --- extension: inverse questions and time & cost (core.inverse.solve, core.inverse.cost;
    # `core.inverse.solve.run`) ----
    solve_for: SolveFor | None = Field(
        default=None,
        description="extension: find the largest value of this field that fits gpus[0] × num_gpus "
        "(or memory_gb); the other fields stay as given. Answered by core.inverse.solve.run (CLI: estimate "
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
    # --- extension: llama.cpp offload to host RAM (core.advice.offload, core.formulas.offload; issue 22) ----
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

    # --- extension: latency and load (core.advice.latency): time to first token, "10 RPS under 2 s" -------
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
                raise field_error(
                    "num_gpus_above_split",
                    f"num_gpus ({value}) is more than the model can be split into: {limit} {unit}",
                )
        return value
