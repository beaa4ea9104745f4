# ruff: noqa: E501  (real log lines are quoted whole)
"""Real log excerpts, copied from public GitHub issues (each with its URL), for the log reader's tests.

Meter: what the tool itself printed (PyTorch's OutOfMemoryError message, nvidia-smi, vLLM's and
llama.cpp's start-up lines); the excerpts are cut to the lines the reader uses, not edited.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Excerpt:
    source: str
    text: str


# --- PyTorch ≥ 2.1 format ------------------------------------------------------------------------
TORCH_4090 = Excerpt(  # a 24 GB card (23.65 GiB as CUDA reports it), training
    "https://github.com/pytorch/pytorch/issues/16417 (comment 2024-03-13)",
    "torch.cuda.OutOfMemoryError: CUDA out of memory. Tried to allocate 22.00 MiB. GPU 0 has a total "
    "capacity of 23.65 GiB of which 11.06 MiB is free. Including non-PyTorch memory, this process has "
    "23.60 GiB memory in use. Of the allocated memory 22.90 GiB is allocated by PyTorch, and 194.87 MiB "
    "is reserved by PyTorch but unallocated. If reserved but unallocated memory is large try setting "
    "PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True to avoid fragmentation.  See documentation for "
    "Memory Management  (https://pytorch.org/docs/stable/notes/cuda.html#environment-variables)",
)
TORCH_5090 = Excerpt(  # a 32 GB card
    "https://github.com/murong-xu/CADS/issues/4",
    "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 22.78 GiB. GPU 0 has a total capacity "
    "of 31.47 GiB of which 12.73 GiB is free. Including non-PyTorch memory, this process has 18.73 GiB "
    "memory in use. Of the allocated memory 9.08 GiB is allocated by PyTorch, and 9.35 GiB is reserved "
    "by PyTorch but unallocated. If reserved but unallocated memory is large try setting "
    "PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True to avoid fragmentation.",
)
TORCH_TYPO = Excerpt(  # PyTorch 2.1 spelled "capacty"; a 4 GB laptop card
    "https://github.com/Synthintel0/MyGirlGPT/issues/11",
    "torch.cuda.OutOfMemoryError: CUDA out of memory. Tried to allocate 32.00 MiB. GPU 0 has a total "
    "capacty of 4.00 GiB of which 41.56 MiB is free. Including non-PyTorch memory, this process has "
    "3.44 GiB memory in use. Of the allocated memory 2.58 GiB is allocated by PyTorch, and 1.90 MiB is "
    "reserved by PyTorch but unallocated.",
)

# --- PyTorch < 2.1 format ------------------------------------------------------------------------
LEGACY_T4 = Excerpt(
    "https://github.com/rshaojimmy/MADDoG/issues/11",
    "RuntimeError: CUDA out of memory. Tried to allocate 2.87 GiB (GPU 0; 14.76 GiB total capacity; "
    "8.77 GiB already allocated; 19.75 MiB free; 13.71 GiB reserved in total by PyTorch)",
)
LEGACY_V100 = Excerpt(
    "https://github.com/kchengiva/Shift-GCN/issues/34",
    "RuntimeError: CUDA out of memory. Tried to allocate 236.00 MiB (GPU 0; 15.78 GiB total capacity; "
    "14.25 GiB already allocated; 183.50 MiB free; 14.34 GiB reserved in total by PyTorch)",
)
LEGACY_1080TI = Excerpt(
    "https://github.com/open-mmlab/mmsegmentation/issues/944",
    "RuntimeError: CUDA out of memory. Tried to allocate 1006.00 MiB (GPU 0; 10.91 GiB total capacity; "
    "9.18 GiB already allocated; 569.81 MiB free; 9.49 GiB reserved in total by PyTorch)",
)

# --- nvidia-smi ----------------------------------------------------------------------------------
SMI_2X4090 = Excerpt(
    "https://github.com/RLinf/RLinf/issues/255",
    """Wed Nov 12 03:22:39 2025
+-----------------------------------------------------------------------------------------+
| NVIDIA-SMI 550.163.01             Driver Version: 550.163.01     CUDA Version: 12.4     |
|-----------------------------------------+------------------------+----------------------+
| GPU  Name                 Persistence-M | Bus-Id          Disp.A | Volatile Uncorr. ECC |
| Fan  Temp   Perf          Pwr:Usage/Cap |           Memory-Usage | GPU-Util  Compute M. |
|                                         |                        |               MIG M. |
|=========================================+========================+======================|
|   0  NVIDIA GeForce RTX 4090        Off |   00000000:4E:00.0 Off |                  Off |
| 30%   29C    P8             22W /  450W |     507MiB /  24564MiB |      0%      Default |
|                                         |                        |                  N/A |
+-----------------------------------------+------------------------+----------------------+
|   1  NVIDIA GeForce RTX 4090        Off |   00000000:4F:00.0 Off |                  Off |
| 30%   29C    P8             21W /  450W |     459MiB /  24564MiB |      0%      Default |
|                                         |                        |                  N/A |
+-----------------------------------------+------------------------+----------------------+""",
)
SMI_3090 = Excerpt(
    "https://github.com/noonghunna/club-3090/issues/390",
    """Fri Jun 12 11:18:18 2026
+-----------------------------------------------------------------------------------------+
| NVIDIA-SMI 580.142                Driver Version: 580.142        CUDA Version: 13.0     |
+-----------------------------------------+------------------------+----------------------+
| GPU  Name                 Persistence-M | Bus-Id          Disp.A | Volatile Uncorr. ECC |
| Fan  Temp   Perf          Pwr:Usage/Cap |           Memory-Usage | GPU-Util  Compute M. |
|                                         |                        |               MIG M. |
|=========================================+========================+======================|
|   0  NVIDIA GeForce RTX 3090        Off |   00000000:07:00.0  On |                  N/A |
| 79%   66C    P2            144W /  420W |   15005MiB /  24576MiB |      0%      Default |
|                                         |                        |                  N/A |
+-----------------------------------------+------------------------+----------------------+""",
)
SMI_P100 = Excerpt(  # the older (≤ 515) layout
    "https://github.com/wookayin/gpustat/issues/130",
    """+-----------------------------------------------------------------------------+
| NVIDIA-SMI 515.65.01    Driver Version: 515.65.01    CUDA Version: 11.7     |
|-------------------------------+----------------------+----------------------+
| GPU  Name        Persistence-M| Bus-Id        Disp.A | Volatile Uncorr. ECC |
| Fan  Temp  Perf  Pwr:Usage/Cap|         Memory-Usage | GPU-Util  Compute M. |
|                               |                      |               MIG M. |
|===============================+======================+======================|
|   0  Tesla P100-PCIE...  Off  | 00000000:04:00.0 Off |                    0 |
| N/A   27C    P0    32W / 250W |      0MiB / 16384MiB |      0%      Default |
|                               |                      |                  N/A |
+-------------------------------+----------------------+----------------------+""",
)
SMI_5090 = Excerpt(
    "https://github.com/noonghunna/club-3090/issues/931",
    """+-----------------------------------------------------------------------------------------+
| NVIDIA-SMI 610.43.03              KMD Version: 610.43.03     CUDA UMD Version: 13.3     |
+-----------------------------------------+------------------------+----------------------+
| GPU  Name                 Persistence-M | Bus-Id          Disp.A | Volatile Uncorr. ECC |
| Fan  Temp   Perf          Pwr:Usage/Cap |           Memory-Usage | GPU-Util  Compute M. |
|                                         |                        |               MIG M. |
|=========================================+========================+======================|
|   0  NVIDIA GeForce RTX 5090        Off |   00000000:01:00.0 Off |                  N/A |
|  0%   44C    P8             10W /  600W |   29659MiB /  32607MiB |      0%      Default |
|                                         |                        |                  N/A |
+-----------------------------------------+------------------------+----------------------+
|   1  NVIDIA GeForce RTX 5090        Off |   00000000:03:00.0 Off |                  N/A |
|  0%   41C    P8             19W /  575W |   30803MiB /  32607MiB |      0%      Default |
|                                         |                        |                  N/A |
+-----------------------------------------+------------------------+----------------------+""",
)

# --- vLLM ----------------------------------------------------------------------------------------
VLLM_3090_29K = Excerpt(  # meta-llama/Llama-3.1-8B-Instruct on an RTX 3090, --max-model-len 29000
    "https://github.com/vllm-project/vllm/issues/10517 (comment 2024-12-02)",
    """Loading model weights took 14.9888 GB
Memory profiling results: total_gpu_memory=23.58GiB initial_memory_usage=15.34GiB peak_torch_memory=17.98GiB memory_usage_post_profile=15.35GiB non_torch_memory=0.35GiB kv_cache_size=2.89GiB gpu_memory_utilization=0.90
# GPU blocks: 1478, # CPU blocks: 2048
Maximum concurrency for 29000 tokens per request: 0.82x
The model's max seq len (29000) is larger than the maximum number of tokens that can be stored in KV cache (23648). Try increasing `gpu_memory_utilization` or decreasing `max_model_len` when initializing the engine.""",
)
VLLM_ALPACA = Excerpt(  # a local model path the catalogue cannot know
    "https://github.com/vllm-project/vllm/issues/2418",
    """INFO 01-11 15:51:02 llm_engine.py:70] Initializing an LLM engine with config: model='/home/***/***/models/alpaca-2', tokenizer='/home/***/***/models/alpaca-2', tokenizer_mode=auto, revision=None, tokenizer_revision=None, trust_remote_code=False, dtype=torch.float16, max_seq_len=4096, download_dir=None, load_format=auto, tensor_parallel_size=1, quantization=None, enforce_eager=False, seed=0)
INFO 01-11 15:51:18 llm_engine.py:275] # GPU blocks: 229, # CPU blocks: 512
ValueError: The model's max seq len (4096) is larger than the maximum number of tokens that can be stored in KV cache (3664). Try increasing `gpu_memory_utilization` or decreasing `max_model_len` when initializing the engine.""",
)
VLLM_MARLIN_3090 = Excerpt(  # a 24 GB card at gpu_memory_utilization 0.99, the profile's breakdown
    "https://github.com/vllm-project/vllm/pull/14447 (comment by davidsyoung)",
    """(VllmWorkerProcess pid=507) INFO 04-12 08:21:19 [worker.py:267] Memory profiling takes 17.59 seconds
(VllmWorkerProcess pid=507) INFO 04-12 08:21:19 [worker.py:267] the current vLLM instance can use total_gpu_memory (23.58GiB) x gpu_memory_utilization (0.99) = 23.35GiB
(VllmWorkerProcess pid=507) INFO 04-12 08:21:19 [worker.py:267] model weights take 21.21GiB; non_torch_memory takes 0.20GiB; PyTorch activation peak memory takes 0.37GiB; the rest of the memory reserved for KV Cache is 1.57GiB.""",
)
VLLM_V1_70B = Excerpt(  # V1 engine, Llama 3.1 70B w8a8 at --max-model-len 2048 --gpu-memory-utilization 0.98
    "https://github.com/vllm-project/vllm/pull/12569",
    """VLLM_USE_V1=1 vllm serve neuralmagic/Meta-Llama-3.1-70B-Instruct-quantized.w8a8 --max-model-len 2048 --gpu-memory-utilization 0.98
INFO 01-30 03:18:12 gpu_model_runner.py:848] Loading model weights took 67.7229 GB
INFO 01-30 03:19:14 kv_cache_utils.py:395] # GPU blocks: 1381
INFO 01-30 03:19:14 kv_cache_utils.py:398] Maximum concurrency for 2048 tokens per request: 10.79x""",
)
VLLM_V1_KV_NEEDED = Excerpt(  # V1's error names the KV bytes needed and the longest context that fits
    "https://github.com/vllm-project/vllm/issues/34076",
    """VLLM_PP_LAYER_PARTITION=16,32 CUDA_DEVICE_ORDER=PCI_BUS_ID CUDA_VISIBLE_DEVICES=0,1 vllm serve ./Qwen/Qwen3-Coder-30B-A3B-Instruct-FP8 --gpu-memory-utilization 0.9 --served-model-name Qwen3-Coder-30B-A3B-Instruct-FP8 --pipeline-parallel-size 2 --enable-chunked-prefill --enable-auto-tool-choice --tool-call-parser qwen3_coder
(EngineCore_DP0 pid=1094) ValueError: To serve at least one request with the models's max seq len (262144), (24.0 GiB KV cache is needed, which is larger than the available KV cache memory (3.18 GiB). Based on the available memory, the estimated maximum model length is 34736. Try increasing `gpu_memory_utilization` or decreasing `max_model_len` when initializing the engine.""",
)

# --- llama.cpp -----------------------------------------------------------------------------------
LLAMA_TWO_GPUS = Excerpt(  # a 4070 Ti + a 3090 Ti, every layer on the GPUs, fits
    "https://github.com/ggml-org/llama.cpp/pull/6122 (comment by Wuzzooy)",
    """  Device 0: NVIDIA GeForce RTX 4070 Ti, compute capability 8.9, VMM: yes
  Device 1: NVIDIA GeForce RTX 3090 Ti, compute capability 8.6, VMM: yes
llm_load_tensors: ggml ctx size =    0.37 MiB
llm_load_tensors: offloading 40 repeating layers to GPU
llm_load_tensors: offloading non-repeating layers to GPU
llm_load_tensors: offloaded 41/41 layers to GPU
llm_load_tensors:        CPU buffer size =  1640.62 MiB
llm_load_tensors:      CUDA0 buffer size =  5434.38 MiB
llm_load_tensors:      CUDA1 buffer size = 13989.53 MiB
llama_new_context_with_model: n_ctx      = 4096
llama_new_context_with_model: n_batch    = 2048
llama_kv_cache_init:      CUDA0 KV buffer size =  1536.00 MiB
llama_kv_cache_init:      CUDA1 KV buffer size =  3584.00 MiB
llama_new_context_with_model: KV self size  = 5120.00 MiB, K (f16): 2560.00 MiB, V (f16): 2560.00 MiB
llama_new_context_with_model:  CUDA_Host  output buffer size =     1.95 MiB
llama_new_context_with_model:      CUDA0 compute buffer size =   672.01 MiB""",
)
LLAMA_APERTUS_OOM = Excerpt(  # the compute buffer fails after the weights and the KV cache
    "https://github.com/ggml-org/llama.cpp/issues/16725",
    """ggml_backend_cuda_buffer_type_alloc_buffer: allocating 14136.04 MiB on device 0: cudaMalloc failed: out of memory
ggml_gallocr_reserve_n: failed to allocate ROCm0 buffer of size 14822711296
graph_reserve: failed to allocate compute buffers
llama_init_from_model: failed to initialize the context: failed to allocate compute pp buffers
common_init_from_params: failed to create context with model 'models/large/Apertus-70B-Instruct-2509-IQ4_XS.gguf', try reducing --n-gpu-layers if you're running out of VRAM
srv    load_model: failed to load model, 'models/large/Apertus-70B-Instruct-2509-IQ4_XS.gguf'""",
)
LLAMA_WEIGHTS_OOM = Excerpt(  # the weights alone do not fit device 0
    "https://github.com/ggml-org/llama.cpp/issues/20431",
    """print_info: max token length      = 256
load_tensors: loading model tensors, this can take a while... (mmap = true, direct_io = false)
ggml_backend_cuda_buffer_type_alloc_buffer: allocating 144817.04 MiB on device 0: cudaMalloc failed: out of memory
alloc_tensor_range: failed to allocate CUDA0 buffer of size 151851674624
llama_model_load: error loading model: unable to allocate CUDA0 buffer""",
)
LLAMA_OLLAMA_DEVICE4 = Excerpt(  # through Ollama/langchain, pipeline parallel over 5 cards
    "https://github.com/ollama/ollama/issues/6860",
    """llama_new_context_with_model: KV self size  = 5120.00 MiB, K (f16): 2560.00 MiB, V (f16): 2560.00 MiB
llama_new_context_with_model:  CUDA_Host  output buffer size =     0.49 MiB
llama_new_context_with_model: pipeline parallelism enabled (n_copies=4)
ggml_backend_cuda_buffer_type_alloc_buffer: allocating 144.00 MiB on device 4: cudaMalloc failed: out of memory
ggml_gallocr_reserve_n: failed to allocate CUDA4 buffer of size 150995968
llama_new_context_with_model: failed to allocate compute buffers""",
)

ALL = {name: value for name, value in globals().items() if isinstance(value, Excerpt)}
