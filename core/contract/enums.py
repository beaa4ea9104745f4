"""The codes of the contract: tasks, precisions, engines, methods and the other closed vocabularies a
request names, each a `StrEnum` whose values are what the JSON carries."""

from __future__ import annotations

from enum import StrEnum


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
    """Inverse questions (core.inverse.solve): the largest value of this field that fits the target cards."""

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
