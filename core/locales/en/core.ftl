## Texts of the estimator core (English). The bot reuses them through `core.language.words.t`.
##
## Keys are stable: rename one and every caller breaks. Concept keys are `<group>-<contract value>`
## (non [A-Za-z0-9_-] characters → "_", see `core.language.words.concept_key`):
##   task-<Task>                 what the user wants to do
##   method-<Method>             training method; method-note-<Method>: one-line advice
##   precision-<Precision>       weight format (also used for KvPrecision); precision-note-<Precision>
##   engine-<Engine>, optimizer-<Optimizer>, sharding-<Sharding>, offload-<CpuOffload>,
##   attention-<Attention>
##   component-<breakdown key>   weights, kv_cache, activations, gradients, optimizer_states,
##                               text_encoders, vae_decode, overhead
##   verdict-<VerdictKind>       fits, tight, does_not_fit
##   reason-<Recommendation.reason>
##   action-<Mitigation.action>  what to do when it does not fit (args: the mitigation's params)
##   assumption-<Assumption.code> (args: the assumption's params; English Assumption.text otherwise)
##   field-<Request field>       a field's name in error messages
##   parse-error-<ParseError.code>, parse-*   answers to text that could not be read
##   setting-*, answer-*, bytes*, config, price-*   pieces of the human answer (core/language/phrases.py)

## Units: one unit, as cards are named: GB = 2^30 bytes (an “RTX 4090 48 GB” holds 48 GB), MB = 2^20 bytes.
bytes = { NUMBER($gb, minimumFractionDigits: 1, maximumFractionDigits: 1) } GB
bytes-small = { NUMBER($mb, maximumFractionDigits: 0) } MB

## Tasks
task-inference = inference
task-training = training
task-image_generation = image generation
task-video_generation = video generation

## Training methods
method-full = full (all weights)
method-lora = LoRA
method-qlora = QLoRA
method-note-full = all weights are trained: about 16 bytes per parameter with AdamW; for training from scratch or a large budget
method-note-lora = small adapters on a frozen model: unless you train from scratch, this is almost always what you need
method-note-qlora = LoRA on a 4-bit base model: the least memory, somewhat slower

## Weight formats
precision-fp32 = fp32
precision-fp16 = fp16
precision-bf16 = bf16
precision-fp8 = fp8
precision-int8 = int8
precision-int4 = int4
precision-nf4 = NF4 (4-bit)
precision-gptq-int4 = GPTQ 4-bit
precision-awq-int4 = AWQ 4-bit
precision-mxfp4 = MXFP4 (4-bit)
precision-q8_0 = GGUF Q8_0
precision-q6_k = GGUF Q6_K
precision-q5_k_m = GGUF Q5_K_M
precision-q4_k_m = GGUF Q4_K_M
precision-q4_0 = GGUF Q4_0
precision-q4_1 = GGUF Q4_1
precision-q3_k_m = GGUF Q3_K_M
precision-q2_k = GGUF Q2_K
precision-note-fp32 = full precision, twice the memory of bf16; almost never needed to run a model
precision-note-fp16 = original quality, 2 bytes per parameter
precision-note-bf16 = original quality, 2 bytes per parameter; the default of modern models
precision-note-fp8 = almost lossless at half the memory; needs an FP8 card (Ada, Hopper, Blackwell)
precision-note-int8 = small quality loss, half the memory of bf16
precision-note-int4 = fits almost anywhere; noticeably weaker on hard reasoning and code
precision-note-nf4 = 4-bit of bitsandbytes, the base of QLoRA; quality close to other 4-bit formats, slower
precision-note-gptq-int4 = calibrated 4-bit; good quality and fast kernels in vLLM
precision-note-awq-int4 = activation-aware 4-bit; among the best 4-bit quality, fast in vLLM
precision-note-mxfp4 = microscaling 4-bit, as GPT-OSS ships its experts; native on Hopper and Blackwell
precision-note-q8_0 = practically lossless GGUF, about 8.5 bits per weight
precision-note-q6_k = very close to the original, about 6.6 bits per weight
precision-note-q5_k_m = small loss, about 5.7 bits per weight: a good balance
precision-note-q4_k_m = the popular GGUF choice, about 4.8 bits per weight: moderate loss
precision-note-q4_0 = older 4-bit GGUF; Q4_K_M is better at the same size
precision-note-q4_1 = older 4-bit GGUF; Q4_K_M is better at the same size
precision-note-q3_k_m = clear quality loss, about 3.9 bits per weight
precision-note-q2_k = large quality loss, a last resort
## Engines, optimizers, sharding, offload, attention
engine-transformers = Transformers
engine-vllm = vLLM
engine-llama_cpp = llama.cpp
engine-diffusers = Diffusers
engine-unsloth = Unsloth
engine-torchtune = torchtune
optimizer-adamw = AdamW
optimizer-adamw_8bit = 8-bit AdamW
optimizer-paged_adamw = paged AdamW
optimizer-paged_adamw_8bit = paged 8-bit AdamW
optimizer-adafactor = Adafactor
optimizer-sgd = SGD
optimizer-lion = Lion
sharding-none = no sharding
sharding-zero2 = ZeRO-2
sharding-zero3 = ZeRO-3
sharding-fsdp = FSDP
offload-none = no CPU offload
offload-model = model CPU offload
offload-sequential = sequential CPU offload
attention-sdpa = SDPA / FlashAttention
attention-eager = eager attention

## Breakdown components
component-weights = weights
component-kv_cache = KV cache
component-activations = activations
component-gradients = gradients
component-optimizer_states = optimizer states
component-text_encoders = text encoders
component-vae_decode = VAE decode
component-overhead = CUDA context and allocator reserve

## Verdicts and why a configuration is suggested
verdict-fits = fits
verdict-tight = fits, but tight
verdict-does_not_fit = does not fit
reason-cheapest = cheapest
reason-fastest = fastest
reason-most_headroom = most headroom
reason-fewest_cards = fewest cards

## What to do when it does not fit (ids and params from core/advice.py)
action-quantize_int8 = quantize the weights to 8 bits: { $precision }
action-quantize_int4 = quantize the weights to 4 bits: { $precision }
action-kv_cache_fp8 = keep the KV cache in fp8
action-use_vllm = serve with vLLM (chunked prefill instead of every prompt at once)
action-shorten_context = shorten the context to { $context_length } tokens
action-reduce_concurrency = serve { $concurrency ->
    [one] one user
   *[other] { $concurrency } users
} at once
action-optimizer_8bit = 8-bit AdamW
action-shorter_sequence = shorten training sequences to { $seq_len } tokens
action-use_lora = LoRA instead of full fine-tuning
action-use_qlora = QLoRA: LoRA on a 4-bit base
action-gradient_checkpointing = turn on gradient checkpointing
action-vae_tiling = turn on VAE tiling
action-vae_slicing = decode the images one at a time (VAE slicing)
action-fewer_images = { $images ->
    [one] { $images } image
   *[other] { $images } images
} at a time
action-fewer_frames = { $frames } frames
action-shard = shard the training state across the cards ({ $sharding })
action-lower_resolution = a lower resolution: { NUMBER($width, useGrouping: 0) }×{ NUMBER($height, useGrouping: 0) }
action-smaller_model = a smaller model: { $model }
action-more_gpus = use { $num_gpus } cards
action-cpu_offload = { $experiments_only ->
    [0] model CPU offload: each component on the GPU only while it runs (the recipe of the FLUX model card), the same output, a little slower
   *[other] { $cpu_offload ->
        [sequential] sequential CPU offload (only the running layer on the GPU)
       *[model] model CPU offload
    }: a last resort, for experiments only, much slower
}

## Assumptions (args are the Assumption's params)
assumption-parse_gguf_default = GGUF without a type: assumed Q4_K_M, the most common choice.
assumption-parse_finetune_lora = Fine-tuning without a method: assumed LoRA, what almost everyone uses unless training from scratch.
assumption-parse_model_by_size = The catalogue has no “{ $name }” of size { $size }: sized as a typical { $size } model.
assumption-parse_serving_vllm = { $concurrency } users at once: sized as a vLLM server (continuous batching, chunked prefill); say “transformers” to size a plain generate() instead.
assumption-parse_text_cut = The message is long: only its first { $chars } characters were read.
assumption-variant_same_architecture = “{ $variant }” does not change the architecture: sized as { $model } (set the precision separately).
assumption-typical_architecture = Only the size ({ $size }) is known: sized with the architecture of { $reference } ({ $layers } layers).
assumption-typical_moe = Read as a Mixtral-style mixture of experts: { $total_b }B parameters in total, { $active_b }B active per token.
assumption-custom_mha = The number of KV heads was not given: assumed equal to the attention heads ({ $kv_heads }).
assumption-custom_filled = Not given, taken from the typical architecture of { $reference }: { $fields }.
assumption-custom_active_experts = Active experts not given: assumed { $active_experts } per token.
assumption-huggingface_config = { $hf_id } is not in the catalogue: architecture read from its config.json ({ $model_type }).
assumption-huggingface_safetensors = Parameters counted from the checkpoint's safetensors headers ({ $params }, stored as { $dtype }).
assumption-huggingface_params_from_config = Parameters computed from config.json: { $params }{ $packed ->
    [none] {""}
   *[other] {" "}(the checkpoint packs its weights as { $packed })
}.

assumption-default_precision = Weights in { $precision } (precision not given).
assumption-no_bf16_fp16 = The named card has no bf16 (compute capability below 8.0): weights and compute in fp16.
assumption-native_precision = Weights in { $precision }, as the published checkpoint ships (precision not given).
assumption-experts_only_quantized = { $precision } quantizes the expert MLPs only; attention, router, token embeddings and the LM head stay 16-bit (as GPT-OSS ships).
assumption-qlora_base_nf4 = QLoRA keeps the base in 4-bit NF4; { $compute } is the compute dtype.
assumption-stack_separate_processes = The { $models ->
    [one] model beside the main one runs
   *[other] { $models } models beside the main one run
} on the same card, each in a server of its own (text-embeddings-inference, Infinity) with its own CUDA context: their memory is added to what the card needs.
assumption-stack_vllm_memory_fraction = vLLM takes { NUMBER($fraction, style: "percent") } of the card by default: start it with a lower --gpu-memory-utilization to leave room for the other models.
assumption-stack_default_model = { $model } is taken for the role the text names.
component-extra_models = models beside it
stack-role-embedding = embeddings
stack-role-reranker = reranker
stack-role-llm = LLM
stack-part = { $model } ({ $role })
assumption-default_context = A context of { $context_length } tokens per sequence (not given).
assumption-context_beyond_model = The context is longer than the model's { $max_context } tokens; sized as asked.
assumption-default_seq_len = Training sequences of { $seq_len } tokens (not given).
assumption-default_checkpointing_qlora = Gradient checkpointing on, as the usual QLoRA recipe (peft) does (not given).
assumption-default_checkpointing_trainers = Gradient checkpointing on, as the usual fine-tuning trainers do (TRL's SFTTrainer, LLaMA-Factory, Axolotl recipes, Unsloth) (not given).
assumption-default_checkpointing_torchtune = Gradient checkpointing on, as torchtune's recipe configs set it (not given).
assumption-torch_compile_recomputes = torch.compile: the backward recomputes cheap elementwise ops (norms, activations, casts) instead of saving their outputs; matmul outputs are still saved.
assumption-torchtune_features = torchtune: the loss computed in 8 chunks (no full fp32 logits); adapters, their gradients and optimizer states in bf16.
assumption-zero_buckets = DeepSpeed keeps a gradient bucket of { $bucket_elements } elements on each GPU (reduce_bucket_size); ZeRO-3 keeps the LM head and the parameters reused soon after gathered from forward into backward.
assumption-lora_dropout_inputs = LoRA dropout { $dropout }: every adapted layer saves a dropped-out copy of its input and the mask for backward.
assumption-overhead = Overhead: the CUDA context of each GPU plus the PyTorch allocator reserve.
assumption-moe_total_params = Mixture of experts: memory holds all { $total_b }B parameters; speed follows the { $active_b }B active per token.
assumption-embeddings_wide = { $precision } quantizes the linear layers only; token embeddings and the LM head stay 16-bit.
assumption-gguf_average_bits = { $precision } sized tensor by tensor with llama.cpp's quantization mix (wider output, attn_v and ffn_down layers).
assumption-kv_full_context = KV cache for { $concurrency } { $concurrency ->
    [one] sequence
   *[other] sequences
} of { $context_length } tokens, all filled.
assumption-multi_gpu_split = { $num_gpus } GPUs share the work; each keeps its own CUDA context and NCCL buffers.
assumption-multi_gpu_fsdp = Configurations with several GPUs are sized with FSDP full sharding (plain data parallel would not reduce memory per GPU).
assumption-tensor_parallel_heads = vLLM tensor parallelism needs the { $heads } attention heads to divide evenly over the GPUs; { $num_gpus } does not divide them: choose a GPU count that does (or pipeline parallelism). Sized as an even split.
assumption-not_in_offers = No rental offer fits: the recommended configuration is not in our offers; contact us and we will try to find it.
assumption-mixed_precision_amp = Mixed precision as PyTorch AMP does it: fp32 weights, gradients and optimizer states (16 bytes per parameter with AdamW) plus a 16-bit copy of the weights from the forward pass until each layer's backward.
assumption-mixed_precision_zero = Mixed precision as ZeRO/FSDP do it: 16-bit weights and gradients, fp32 master weights and AdamW states (16 bytes per parameter), sharded over the GPUs.
assumption-lora_adapters_fp32 = LoRA rank { $rank }; the adapters, their gradients and optimizer states in fp32 (peft).
assumption-lora_adapters_bf16 = LoRA rank { $rank }; the adapters, their gradients and optimizer states in bf16 (as the reference QLoRA script casts them); QLoRA's embeddings and LM head stay bf16.
assumption-qlora_fp32_upcast = QLoRA base in NF4 with double quantization; embeddings, norms and the LM head cast to fp32 for training.
assumption-unsloth_features = Unsloth: checkpointed layer inputs offloaded to CPU RAM, loss computed without the full logits.
assumption-eager_attention_scores = Eager attention stores the seq×seq scores of every layer; SDPA/FlashAttention would not.
assumption-training_peak_backward = Peak at the start of the backward pass: weights, optimizer states and the activations of one micro-batch of { $batch_size } × { $seq_len } tokens, plus the loss buffers; gradients arrive as activations are freed (PyTorch 2 frees them between steps).
assumption-training_peak_optimizer_step = Peak at the optimizer step: weights, all gradients and optimizer states; the activations of the micro-batch are freed by then.
assumption-training_peak_accumulation = Peak at the start of the backward pass: with { $steps } accumulation steps the gradients stay allocated next to the weights, optimizer states and activations.
assumption-vae_decode_fp32 = The VAE decode at { NUMBER($width, useGrouping: 0) }×{ NUMBER($height, useGrouping: 0) } is counted in fp32.
assumption-cpu_offload_slow = { $cpu_offload ->
    [model] Model CPU offload (diffusers enable_model_cpu_offload, the standard recipe of the FLUX model card): one component on the GPU at a time; a little slower for the transfers.
   *[other] CPU offload ({ $cpu_offload }) keeps one block of the pipeline on the GPU at a time; generation is several times slower.
}
assumption-gguf_denoiser_only = A { $precision } file holds the transformer only: the text encoders and the VAE load from the 16-bit repo (diffusers GGUFQuantizationConfig).
assumption-text_encoder_cpu = The text encoders run on the CPU (as Wan's --t5_cpu): none of their weights on the GPU; encoding the prompt takes longer.
assumption-cfg_single_pass = One denoiser pass at a time (guidance-distilled, or guidance passes run one after another).
assumption-cfg_double_batch = Classifier-free guidance: the denoiser runs a batch of 2 per image.
assumption-vllm_preallocates = vLLM reserves 90% of each GPU by default (gpu_memory_utilization) and fills the rest with KV cache; the estimate is what this workload needs.
assumption-cpu_offload_layers = CPU offload ({ $cpu_offload }): the weights stream from CPU RAM one layer at a time; several times slower.
assumption-cpu_offload_zero = CPU offload ({ $cpu_offload }) as DeepSpeed ZeRO-Offload does it: optimizer states, fp32 master weights and gradients (with sequential also the parameters, as FSDP's CPUOffload) live in CPU RAM; several times slower.
assumption-outside_measured_range = { $dimension ->
    [params_b] The model size ({ NUMBER($value) }B)
    [tokens] The length of { NUMBER($value) } tokens
    [batch] A batch of { NUMBER($value) }
    [num_gpus] { NUMBER($value) } GPUs
    [megapixels] { NUMBER($value) } megapixels a frame
    [frames] { NUMBER($value) } frames
   *[other] { $dimension } = { NUMBER($value) }
} lies outside what was measured for this kind of workload ({ NUMBER($low) }–{ NUMBER($high) }): the range is widened to ±{ $percent }%.
assumption-few_measured_cases = Few published measurements of this kind of workload ({ $cases }): the range ±{ $percent }% is the error over all measured cases.
assumption-decode_bandwidth_bound = Decode speed = memory bandwidth × { NUMBER($efficiency, style: "percent") } / bytes read per token (weights + KV cache).
assumption-vllm_budget = Verdicts compare with vLLM's share of each card ({ $percent }%, gpu_memory_utilization); what the model leaves of it is KV cache (its size in tokens is shown with the speed).
assumption-decode_tensor_parallel = vLLM splits every layer over the cards (tensor parallel, { $interconnect }): each doubling of cards keeps { $percent }% of the ideal gain in bandwidth.
assumption-decode_layer_split = Several cards hold consecutive layers: a token passes them in turn, so decoding is no faster than on one card (vLLM tensor parallelism would be).
assumption-decode_allreduce = Each layer also waits for { $per_layer } all-reduces between the cards, ~{ $us } µs each on { $count } cards (NCCL's latency model).
assumption-decode_moe_layers = A mixture of experts also spends a fixed ~{ $us } µs per layer on routing and small expert matrices ({ $layers } layers), whatever the card: for a few users it can outweigh the bandwidth.

## Request fields, for error messages
field-text = the text
field-model = the model
field-task = the task
field-precision = the precision
field-context_length = the context length
field-concurrency = the number of users
field-batch_size = the batch size
field-seq_len = the sequence length
field-resolution = the resolution
field-images = the number of images
field-frames = the number of frames
field-num_gpus = the number of cards
field-lora_rank = the LoRA rank
field-request = the request

## Free text that could not be read
parse-example = llama 3 70b int4 32k context 4 users
parse-example-hint = For example: { $example }
parse-understood = Understood so far: { $settings }.
parse-error-empty = Write which model to size and how you want to use it.
parse-error-missing_model = Which model? Name it, give its Hugging Face id or just its size (13B).
parse-error-ambiguous_model = Several models match. Which one: { $candidates }?
parse-error-unknown_model = I do not know the model “{ $name }”. Give its Hugging Face id or its size (13B).
parse-error-unknown_model-suggest = Did you mean: { $candidates }?
parse-error-too_large = Too large: { $field }.
parse-error-invalid = Not a valid value: { $field }.

## Settings in the answer's first line
setting-context = context { $tokens } tokens
setting-users = { $count ->
    [one] { $count } user
   *[other] { $count } users
}
setting-kv = KV cache { $precision }
setting-batch = batch { $count }
setting-seq-len = sequences of { $tokens } tokens
setting-lora-rank = rank { $rank }
setting-accumulation = gradients accumulated over { $steps } micro-batches
setting-checkpointing = gradient checkpointing
setting-gpus = { $count } cards
setting-resolution = { $width }×{ $height }
setting-images = { $count ->
    [one] { $count } image
   *[other] { $count } images
}
setting-frames = { $count } frames
setting-tiling = VAE tiling
setting-slicing = VAE slicing

## The human answer (core/language/answer.py builds it, core/layouts/plain.py and the bot lay it out)
answer-headline = { $model }: { $settings }
config = { $count }× { $gpu }
currency-RUB = ₽
currency-USD = $
currency-EUR = €
price-per-hour = { NUMBER($price, maximumFractionDigits: 2) } { $currency }/h
price-per-month = { NUMBER($price, maximumFractionDigits: 0) } { $currency }/month
price-from-per-hour = from { NUMBER($price, maximumFractionDigits: 2) } { $currency }/h
price-on-request = price on request
price-not-offered = not in our offers, contact us
lead-verdict-fits = Fits
lead-verdict-tight = Fits tightly
lead-verdict-does_not_fit = Does not fit
lead-fits = { $icon } { $verdict } on { $config }
lead-fits-not-offered = { $icon } { $verdict } on { $config }, which we do not rent: write to us
lead-need = Needs { $need } per card of { $usable } (likely { $low }–{ $high })
lead-own-fits = { $icon } Fits on { $config }: { $need } per card of { $usable }
lead-own-tight = { $icon } Fits tightly on { $config }: { $need } per card of { $usable }
lead-own-does_not_fit = { $icon } Does not fit on { $config }: needs { $need } per card of { $usable }
lead-rent = 🚀 To rent: { $config }
lead-nothing-fits = None of our configurations holds { $need } per card as asked: how to cut it is below.
lead-none = ❌ Needs { $need } per card: none of our configurations holds it as asked
lead-none-hint = How to cut the memory is below.
speed-short = ~{ $tokens } tok/s
answer-parts = Where the { $total } per card goes:
answer-offers-cheapest = Cheapest: { $config }, { $price }
answer-offers-recommended = Recommended: { $config }, { $price }
answer-offers-fastest = fastest: { $config }, { $price }
answer-verdict = { $icon } { $config }: { $verdict }, { $need } of { $usable }
answer-verdicts = Does it fit (memory per card):
answer-speed = Speed on { $config }: ~{ $per_user } tokens/s per user
answer-speed-many = Speed on { $config }: ~{ $per_user } tokens/s per user, ~{ $total } tokens/s in total
answer-kv-capacity = vLLM on { $config }: KV cache for { NUMBER($tokens) } tokens, up to { NUMBER($concurrency, maximumFractionDigits: 2) }× requests of { NUMBER($context_length) } tokens at once
answer-mitigations = If it does not fit (memory per card):
answer-without-checkpointing = Without gradient checkpointing (faster: no forward recomputed in backward): { $need } per card.
answer-mitigations-own = To fit on { $config } (memory per card):
answer-mitigation = { $icon } { $action }: −{ $saves } → { $total }, { $outcome }
answer-more-mitigations = More ways (memory per card):
change-side = { $total } per card · { $config } · { $price }
change-side-none = { $total } per card · fits none of our configurations
change-line = Before: { $before } → now: { $after }
compare-title = { $model }: { $settings }
compare-row = { $icon } { $config }: { $verdict }, { $need } per card of { $usable } · { $price }{ $speed }
compare-cheapest = Cheaper: { $config }
compare-fastest = Faster: { $config }
mitigation-fits = then it fits
mitigation-fits-on = then it fits on { $count }× { $gpu }
mitigation-still-short = still does not fit on { $count ->
    [one] one card
   *[other] { $count } cards
}
mitigation-fits-with-more = not on { $cards ->
    [one] one card
   *[other] { $cards } cards
}, fits on { $count }× { $gpu }
answer-host = Server: RAM at least { $ram_min } (better { $ram_recommended }), { $disk_kind } disk of { $disk } for the weights.
disk-nvme = NVMe
disk-ssd = SSD
disk-hdd = HDD
answer-assumptions = Assumptions:
assumption-solve_search = The largest { $field } that fits was found by search over the same estimate (exponential, then binary; each value sized in full).
assumption-solve_default_target = No card named: solved for { $gpu }, the card we rent first.
assumption-cost_training_flops = Training compute: { $factor } × parameters × tokens ({ $method }): forward 2, backward 4 for full training (Kaplan et al. 2020); LoRA/QLoRA skip the frozen weights' gradients (4); gradient checkpointing adds a forward (+2).
assumption-cost_mfu = Time at { $low }–{ $high } % of the cards' peak bf16 TFLOPS ({ $method }; full training: Llama 3 reports 38–43 % on H100, PaLM 46 %; LoRA and QLoRA lower, our assumption).
assumption-cost_linear_scaling = More cards are assumed to speed training up in proportion (data parallel); across PCIe cards it is less.
assumption-cost_serving = Serving time: decode at { $fill_low }–100 % of the modelled aggregate speed (how full the batch stays), prefill at { $prefill_low }–{ $prefill_high } % of peak TFLOPS.
assumption-cost_default_request = Each request: { $prompt } prompt tokens, { $tokens } generated (not given).
assumption-cost_generation_figures = Seconds per image from published measurements (core/data/throughput.toml), batch 1; each card of a server renders on its own.
assumption-cost_no_figure = No published speed of { $model } on these cards at this resolution: no time or price per image given.

## Inverse answers (core/language/answer_solve.py)
solve-memory-config = { $count ->
    [1] a { NUMBER($gb, maximumFractionDigits: 1) } GB card
   *[other] { $count }× { NUMBER($gb, maximumFractionDigits: 1) } GB cards
  }
solve-tokens = { NUMBER($tokens) } tokens
solve-found-context_length = 📏 Longest context on { $config }: { $value }
solve-found-concurrency = 👥 Up to { $value } concurrent users at a context of { NUMBER($context) } tokens on { $config }
solve-found-batch_size = 📦 Largest micro-batch on { $config }: { $value }
solve-found-seq_len = 📏 Longest training sequence on { $config }: { $value }
solve-found-precision = 🎚 Best precision that fits { $config }: { $value }
solve-found-model = 🧩 Largest { $family } model that fits { $config }: { $value }
solve-margin = Needs { $need } per card of { $usable }, { $margin } free
solve-speed = ~{ NUMBER($total) } tokens/s in all, ~{ $per_user } per user
solve-next = { $value } would not fit: { $need } per card of { $usable } (grows most: { $grows })
solve-all-fit-model = Everything up to the model's own limit fits: { $value }
solve-all-fit-contract_max = Everything up to { $value } fits
solve-all-fit-catalogue = The top of the list fits: { $value }
solve-all-fit-memory = Everything up to { $value } fits
solve-none-context_length = ❌ Nothing fits { $config }: even { $value } needs { $need } per card of { $usable }
solve-none-concurrency = ❌ Not even { $value } user fits { $config }: { $need } per card of { $usable }
solve-none-batch_size = ❌ Not even a micro-batch of { $value } fits { $config }: { $need } per card of { $usable }
solve-none-seq_len = ❌ Nothing fits { $config }: even { $value } needs { $need } per card of { $usable }
solve-none-precision = ❌ No precision fits { $config }: even { $value } needs { $need } per card of { $usable }
solve-none-model = ❌ No model of the family fits { $config }: even the smallest, { $value }, needs { $need } per card of { $usable }

## Time and cost (core/language/answer_solve.py)
cost-training = ⏱ Training on { NUMBER($tokens) } tokens ({ NUMBER($epochs) } { $epochs ->
    [one] epoch
   *[other] epochs
  }): ≈ { $flops } FLOPs ({ NUMBER($factor) } × parameters × tokens) at { $mfu_low }–{ $mfu_high } % of the cards' peak
cost-serving = ⏱ { NUMBER($requests) } requests a day ({ NUMBER($prompt) } prompt + { NUMBER($tokens) } generated tokens each):
cost-generation = ⏱ { NUMBER($outputs) } images:
cost-money = { NUMBER($low) }–{ NUMBER($high) } { $currency }
cost-option-training = • { $config }: { NUMBER($low, maximumSignificantDigits: 2) }–{ NUMBER($high, maximumSignificantDigits: 2) } h ({ NUMBER($gpu_low, maximumSignificantDigits: 2) }–{ NUMBER($gpu_high, maximumSignificantDigits: 2) } GPU-hours) · { $price }
cost-option-serving = • { $config }: { NUMBER($low, maximumSignificantDigits: 2) }–{ NUMBER($high, maximumSignificantDigits: 2) } busy hours a day · { $price }{ $day }
cost-serving-day = ; a server around the clock ({ $servers }×): { NUMBER($price) } { $currency } a day
cost-option-generation = • { $config }: { NUMBER($seconds_low, maximumSignificantDigits: 3) }–{ NUMBER($seconds_high, maximumSignificantDigits: 3) } s an image, { NUMBER($low, maximumSignificantDigits: 2) }–{ NUMBER($high, maximumSignificantDigits: 2) } h · { $price }
cost-option-no-time = • { $config }: no published speed of this model on this card
cost-no-options = No configuration to price.
solve-next-step = { $value } would not fit: { $need } per card of { $usable }
cost-flops = { NUMBER($mantissa, maximumFractionDigits: 1) }·10{ $exponent }
cost-per-day = { $price } a day
solve-found-any-model = 🧩 Largest catalogue model that fits { $config }: { $value }
cost-generation-video = ⏱ { NUMBER($outputs) } clips:
cost-money-from = from { NUMBER($low) }–{ NUMBER($high) } { $currency }
cost-serving-day-from = ; a server around the clock ({ $servers }×): from { NUMBER($price) } { $currency } a day
cost-option-generation-video = • { $config }: { NUMBER($seconds_low, maximumSignificantDigits: 3) }–{ NUMBER($seconds_high, maximumSignificantDigits: 3) } s a clip, { NUMBER($low, maximumSignificantDigits: 2) }–{ NUMBER($high, maximumSignificantDigits: 2) } h · { $price }
assumption-cost_figure_same_compute = The { $card } has no published speed of its own: the figure measured on the { $measured } is used, the same chip at the same clocks (denoising is compute-bound, so the extra memory does not change it).
assumption-cost_generation_figures_video = Seconds per clip from published measurements (core/data/throughput.toml), one clip at a time; each card of a server renders on its own.
cost-option-generation-one = • { $config }: { NUMBER($seconds, maximumSignificantDigits: 3) } s an image, { NUMBER($low, maximumSignificantDigits: 2) } h · { $price }
cost-option-generation-video-one = • { $config }: { NUMBER($seconds, maximumSignificantDigits: 3) } s a clip, { NUMBER($low, maximumSignificantDigits: 2) } h · { $price }
assumption-cost_example_length = Each example as long as the training sequence, { $tokens } tokens (no length given).
solve-comfortable = With { $percent } % of the card left free (as we recommend): up to { $value }
assumption-parse_cost_needs_dataset = To say how long and how much, give the dataset: “10000 examples of 1000 tokens, 3 epochs” or “1B tokens”.
assumption-parse_cost_needs_requests = To price serving, give the load: “10000 requests a day of 500 tokens”.

## The answer as a picture (core/layouts/picture.py)
picture-part = { $part }: { $size }
picture-total = per card: { $total }
cli-hf-not-found = No model { $model } on Hugging Face (or it is private or gated): check the name (e.g. Qwen/Qwen3-8B) or give its size (8B).
cli-hf-unavailable = Could not reach Hugging Face within { $seconds } s to read { $model }: try again later or give its size (8B); GPUFIT_HF_LOOKUP=0 skips the look-up.
cli-hf-unsupported = { $model } is on Hugging Face, but its config.json is not a language model's that can be sized: give its size (8B) instead.

## sales: prices, the price list, tight fits (slice "sales")
assumption-tight_offer = The cheapest priced offer fits tightly (less than { $percent } % of memory free); a comfortable option is named second.
tight-lead = ⚠️ Tight: less than { $percent } % of memory stays free — a long request or more users may not fit.
tight-safe = Safe: { $ways }.
tight-safe-context = a context up to { NUMBER($value) } tokens
tight-safe-users = up to { $value ->
    [one] { $value } user
   *[other] { $value } users
}
tight-or = {" "}or{" "}
tight-roomy = With headroom: { $config }, { $price }.
prices-title = 💰 Rental prices
prices-title-gpu = 💰 Rental prices: { $gpu }
prices-gpu = • { $gpu }: { $items }
prices-item = { $counts } — { $price }
prices-not-offered = We do not rent { $gpu } — here is what we have.
prices-no-count = { $config } is not among the offers; there are { $counts }.
prices-no-monthly = The price list has no monthly price — a manager will quote it.
prices-from-note = "from": a starting price.
prices-on-request-note = A manager quotes the prices "on request".
answer-offers-recommended-unpriced = Recommended: { $config }
answer-offers-fastest-unpriced = fastest: { $config }
## units: one card count and one unit per answer (core/language/answer.py, core/advice)
assumption-named_count_fsdp = Training on { $num_gpus } GPUs is sized as such a job is launched: with FSDP full sharding (ZeRO-3), each GPU holding its share of the weights, gradients and optimizer states.
action-shard_offload_optimizer = ZeRO-3 with the optimizer states on the CPU (DeepSpeed offload_optimizer): slower, the same training
verdict-no_margin = does not fit reliably
lead-own-no_margin = { $icon } { $config } does not fit reliably: { $need } per card of { $usable }, no margin
lead-fits-fewer = { $icon } { $verdict } on { $config }: no need for { $asked } cards
lead-fits-fewer-not-offered = { $icon } { $verdict } on { $config }: no need for { $asked } cards — a configuration we do not rent, write to us
answer-mitigation-to = { $icon } { $action }: → { $total }, { $outcome }
solve-next-no_margin = { $value } would not fit reliably: { $need } per card of { $usable }, no margin (grows most: { $grows })
solve-next-step-no_margin = { $value } would not fit reliably: { $need } per card of { $usable }, no margin
solve-next-budget = { $value } would not fit: { $need } per card, more than its engine's memory budget (grows most: { $grows })
solve-next-step-budget = { $value } would not fit: { $need } per card, more than its engine's memory budget
lead-fits-more = { $icon } { $verdict } on { $config }: { $asked } of them are not enough
lead-fits-more-not-offered = { $icon } { $verdict } on { $config }: { $asked } of them are not enough — a configuration we do not rent, write to us
## dialog: the picture's card labels (core/layouts/picture.py)
picture-used = { $icon } { $verdict }: { $need } · { $percent } % used
picture-capacity = { $card }: { $size }

## dialog: inverse answers lead with a comfortable fit (core/language/answer_solve.py)
solve-in-precision = { $value } in { $precision }
solve-tight = Only tight (under { $percent } % of the card free): { $value } — { $need } of { $usable }

## speed: gradient accumulation (slice "speed")
action-gradient_accumulation = a micro-batch of { $batch_size } × gradient accumulation { $steps } (the same batch per optimizer step)
tight-safe-accumulation = a micro-batch of { $value } × gradient accumulation { $steps } (the same batch per optimizer step)

## truth: formats a card cannot run, engines people deploy (slice "truth")
assumption-serving_class_vllm = A { $params_b }B mixture of experts is served, not run with transformers generate(): sized as vLLM, as its model card deploys it; say “transformers” to size generate() instead.
assumption-fp8_dequantized_bf16 = The named card has no FP8 (compute capability below 8.9): transformers loads this FP8 checkpoint dequantized to bf16, twice the memory; vLLM would keep it 8-bit (weight-only Marlin).
assumption-fp8_weight_only_marlin = The named card has no FP8 (compute capability below 8.9): vLLM keeps the FP8 weights 8-bit and runs them weight-only (Marlin kernel), computing in bf16.
action-use_prequantized = load a checkpoint published already quantized ({ $precision }, GPTQ or GGUF) instead of quantizing while loading
assumption-loading_reserve = Quantizing the 16-bit checkpoint while it loads (bitsandbytes, one tensor at a time) holds about one layer in 16 bits: { NUMBER($gb, maximumFractionDigits: 2) } GB beyond the weights, which the KV cache and activations then reuse.
assumption-video_measure_first = Video memory is the least predictable (published runs differ from this estimate by up to { $percent } %): before renting for long, generate one short clip (e.g. 17 frames at this resolution) and read torch.cuda.max_memory_reserved(); the activations grow with the frame count, the weights do not.
## understand (issue 25): text that asks no sizing question, words not understood
parse-error-chit_chat = I size how much GPU memory a model needs and which server fits it. Name a model and a task, e.g.: llama 3.1 8b int4 on a 4090 48gb.
parse-error-off_topic = That is not a question about sizing a model: a manager answers those — leave a request.
parse-error-unsized_model = Speech models (Whisper, TTS) are not sized yet: leave a request and a manager will pick a server.
assumption-parse_unread = I did not understand “{ $words }”: the answer leaves it out (write a card as: 4090 48, h100, a100 80).
## evidence (issue 20): eager transformers decode
assumption-decode_eager_launch = transformers generate() runs eagerly: the CPU launches every kernel of its { $layers } layers for each token, ~{ $ms } ms, so at most ~{ $tokens_per_s } tok/s per user on any card. vLLM or llama.cpp (CUDA graphs) reach the bandwidth speed.
assumption-default_checkpointing_video = Gradient checkpointing on, as the video models' own training scripts do (CogVideo's finetune) (not given).

## avail (issue 23): offers that are taken now
assumption-offer_sold_out = { $count }× { $gpu } is taken right now — here is the next configuration that fits; if you need that one, request a quote and we will tell you when it is free.
prices-sold-out = taken right now
prices-sold-out-note = "Taken right now": request a quote and we will tell you when it is free.

# --- currency (issue 23, item 6): the tenge sign
currency-KZT = ₸
## slice "polish" (issue 25): the change line names the card asked about
change-side-own = { $total } per card · { $config }: { $verdict }
assumption-parse_card_memory = A card named without its memory is read as the { $card } (there is also the { $other }, the one we rent).
## slice "polish" (issue 25): every request field named in the user's language (errors say which)
field-engine = engine
field-kv_cache_precision = KV cache precision
field-method = training method
field-mixed_precision = mixed precision
field-optimizer = optimizer
field-gradient_checkpointing = gradient checkpointing
field-gradient_accumulation_steps = gradient accumulation steps
field-quant_backend = quantization library (bitsandbytes or torchao)
field-attention = attention implementation
field-lora_targets = LoRA layers
field-adapter_dtype = adapter precision
field-torch_compile = torch.compile
field-lora_dropout = LoRA dropout
field-sharding = sharding
field-cpu_offload = CPU offload
field-vae_tiling = VAE tiling
field-vae_slicing = VAE slicing
field-gpus = cards
field-quantized_components = quantized parts
field-text_encoder_on_cpu = text encoder on the CPU
field-gpu_memory_utilization = vLLM's share of card memory
field-solve_for = what to find
field-memory_gb = card memory
field-dataset_tokens = dataset size in tokens
field-examples = number of examples
field-tokens_per_example = tokens per example
field-epochs = number of epochs
field-requests_per_day = requests a day
field-tokens_per_request = tokens per request
field-prompt_tokens = prompt tokens
field-outputs = number of outputs
field-extra_models = other models
assumption-parse_task_not_for_model = That is a language model: it does not generate { $task ->
    [video_generation] video
   *[image_generation] images
}, so it is sized as an LLM run. For { $task ->
    [video_generation] video, name a video model: wan 2.1, hunyuan video.
   *[image_generation] images, name an image model: flux dev, sdxl.
}
