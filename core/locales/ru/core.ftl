## Тексты ядра оценщика (русский). Бот берёт их через `core.language.words.t`.
##
## Ключи стабильны и совпадают с en/core.ftl (это проверяет тест). Ключи понятий —
## `<группа>-<значение из контракта>`, см. `core.language.words.concept_key` и шапку en/core.ftl:
##   task-, method-, method-note-, precision-, precision-note-, engine-, optimizer-, sharding-,
##   offload-, attention-, component-, verdict-, reason-, action-, assumption-, field-,
##   parse-error-, parse-*, setting-*, answer-*, bytes*, config, price-*

## Единицы: одна, как в названиях карт: ГБ = 2^30 байт (у «RTX 4090 48 GB» ровно 48 ГБ), МБ = 2^20 байт.
bytes = { NUMBER($gb, minimumFractionDigits: 1, maximumFractionDigits: 1) } ГБ
bytes-small = { NUMBER($mb, maximumFractionDigits: 0) } МБ


## Задачи
task-inference = инференс
task-training = обучение
task-image_generation = генерация изображений
task-video_generation = генерация видео

## Методы обучения
method-full = полное обучение (все веса)
method-lora = LoRA
method-qlora = QLoRA
method-note-full = обучаются все веса: около 16 байт на параметр с AdamW; для обучения с нуля или большого бюджета
method-note-lora = небольшие адаптеры поверх замороженной модели: если не обучаете с нуля, почти всегда нужно именно это
method-note-qlora = LoRA поверх 4-битной базы: меньше всего памяти, немного медленнее

## Форматы весов
precision-fp32 = fp32
precision-fp16 = fp16
precision-bf16 = bf16
precision-fp8 = fp8
precision-int8 = int8
precision-int4 = int4
precision-nf4 = NF4 (4 бита)
precision-gptq-int4 = GPTQ 4 бита
precision-awq-int4 = AWQ 4 бита
precision-mxfp4 = MXFP4 (4 бита)
precision-q8_0 = GGUF Q8_0
precision-q6_k = GGUF Q6_K
precision-q5_k_m = GGUF Q5_K_M
precision-q4_k_m = GGUF Q4_K_M
precision-q4_0 = GGUF Q4_0
precision-q4_1 = GGUF Q4_1
precision-q3_k_m = GGUF Q3_K_M
precision-q2_k = GGUF Q2_K
precision-note-fp32 = полная точность, вдвое больше памяти, чем bf16; для запуска почти не нужна
precision-note-fp16 = исходное качество, 2 байта на параметр
precision-note-bf16 = исходное качество, 2 байта на параметр; формат по умолчанию у современных моделей
precision-note-fp8 = почти без потерь при половине памяти; нужна карта с FP8 (Ada, Hopper, Blackwell)
precision-note-int8 = небольшая потеря качества, вдвое меньше памяти, чем bf16
precision-note-int4 = влезает почти везде; заметно слабее на сложных рассуждениях и коде
precision-note-nf4 = 4 бита bitsandbytes, основа QLoRA; качество близко к другим 4-битным форматам, медленнее
precision-note-gptq-int4 = 4 бита с калибровкой; хорошее качество и быстрые ядра в vLLM
precision-note-awq-int4 = 4 бита с учётом активаций; одно из лучших качеств среди 4-битных, быстро в vLLM
precision-note-mxfp4 = 4 бита с микромасштабированием, так поставляются эксперты GPT-OSS; нативно на Hopper и Blackwell
precision-note-q8_0 = GGUF практически без потерь, около 8,5 бита на вес
precision-note-q6_k = очень близко к оригиналу, около 6,6 бита на вес
precision-note-q5_k_m = небольшая потеря, около 5,7 бита на вес: хороший баланс
precision-note-q4_k_m = самый популярный GGUF, около 4,8 бита на вес: умеренная потеря
precision-note-q4_0 = старый 4-битный GGUF; Q4_K_M лучше при том же размере
precision-note-q4_1 = старый 4-битный GGUF; Q4_K_M лучше при том же размере
precision-note-q3_k_m = заметная потеря качества, около 3,9 бита на вес
precision-note-q2_k = большая потеря качества, крайний случай
## Движки, оптимизаторы, шардирование, выгрузка, внимание
engine-transformers = Transformers
engine-vllm = vLLM
engine-llama_cpp = llama.cpp
engine-diffusers = Diffusers
engine-unsloth = Unsloth
engine-torchtune = torchtune
optimizer-adamw = AdamW
optimizer-adamw_8bit = 8-битный AdamW
optimizer-paged_adamw = paged AdamW
optimizer-paged_adamw_8bit = paged 8-битный AdamW
optimizer-adafactor = Adafactor
optimizer-sgd = SGD
optimizer-lion = Lion
sharding-none = без шардирования
sharding-zero2 = ZeRO-2
sharding-zero3 = ZeRO-3
sharding-fsdp = FSDP
offload-none = без выгрузки на CPU
offload-model = выгрузка модели на CPU
offload-sequential = последовательная выгрузка на CPU
attention-sdpa = SDPA / FlashAttention
attention-eager = eager-внимание

## Составляющие памяти
component-weights = веса
component-kv_cache = KV-кэш
component-activations = активации
component-gradients = градиенты
component-optimizer_states = состояния оптимизатора
component-text_encoders = текстовые энкодеры
component-vae_decode = декодирование VAE
component-overhead = контекст CUDA и резерв аллокатора

## Вердикты и почему предложена конфигурация
verdict-fits = влезает
verdict-tight = влезает впритык
verdict-does_not_fit = не влезает
reason-cheapest = дешевле всего
reason-fastest = быстрее всего
reason-most_headroom = с наибольшим запасом
reason-fewest_cards = меньше всего карт

## Что делать, если не влезает (id и params из core/advice.py)
action-quantize_int8 = квантовать веса в 8 бит: { $precision }
action-quantize_int4 = квантовать веса в 4 бита: { $precision }
action-kv_cache_fp8 = хранить KV-кэш в fp8
action-use_vllm = запускать через vLLM (prefill частями, а не все запросы целиком)
action-shorten_context = сократить контекст до { $context_length } { $context_length ->
    [one] токена
   *[other] токенов
}
action-reduce_concurrency = обслуживать { $concurrency ->
    [one] { $concurrency } пользователя
   *[other] { $concurrency } пользователей
} одновременно
action-optimizer_8bit = 8-битный AdamW
action-shorter_sequence = сократить обучающие последовательности до { $seq_len } { $seq_len ->
    [one] токена
   *[other] токенов
}
action-use_lora = LoRA вместо полного дообучения
action-use_qlora = QLoRA: LoRA поверх 4-битной базы
action-gradient_checkpointing = включить gradient checkpointing
action-vae_tiling = включить тайлинг VAE
action-vae_slicing = декодировать изображения по одному (слайсинг VAE)
action-fewer_images = { $images ->
    [one] { $images } изображение
    [few] { $images } изображения
   *[many] { $images } изображений
} за раз
action-fewer_frames = кадров: { $frames }
action-shard = шардировать состояние обучения по картам ({ $sharding })
action-lower_resolution = меньшее разрешение: { NUMBER($width, useGrouping: 0) }×{ NUMBER($height, useGrouping: 0) }
action-smaller_model = модель поменьше: { $model }
action-more_gpus = взять { $num_gpus ->
    [one] { $num_gpus } карту
    [few] { $num_gpus } карты
   *[many] { $num_gpus } карт
}
action-cpu_offload = { $experiments_only ->
    [0] выгрузка модели на CPU: каждый компонент на карте только пока работает (рецепт из карточки FLUX), тот же результат, чуть медленнее
   *[other] { $cpu_offload ->
        [sequential] последовательная выгрузка на CPU (на карте только текущий слой)
       *[model] выгрузка модели на CPU
    }: крайний случай, только для экспериментов, намного медленнее
}

## Допущения (аргументы — params допущения)
assumption-parse_gguf_default = GGUF без указания типа: взят Q4_K_M, самый распространённый.
assumption-parse_finetune_lora = Дообучение без указания метода: взята LoRA — её используют почти все, кроме обучения с нуля.
assumption-parse_model_by_size = В каталоге нет «{ $name }» размера { $size }: посчитано как типичная модель на { $size }.
assumption-parse_serving_vllm = Пользователей одновременно: { $concurrency }, посчитано как сервер vLLM (непрерывный батчинг, prefill частями); напишите «transformers», чтобы посчитать обычный generate().
assumption-parse_text_cut = Сообщение длинное: прочитаны только первые { $chars } символов.
assumption-variant_same_architecture = «{ $variant }» не меняет архитектуру: посчитано как { $model } (точность задаётся отдельно).
assumption-typical_architecture = Известен только размер ({ $size }): посчитано по архитектуре { $reference } ({ $layers } { $layers ->
    [one] слой
    [few] слоя
   *[many] слоёв
}).
assumption-typical_moe = Прочитано как смесь экспертов в духе Mixtral: всего { $total_b } млрд параметров, { $active_b } млрд активны на токен.
assumption-custom_mha = Число KV-голов не задано: принято равным числу голов внимания ({ $kv_heads }).
assumption-custom_filled = Не заданы и взяты из типичной архитектуры { $reference }: { $fields }.
assumption-custom_active_experts = Число активных экспертов не задано: принято { $active_experts } на токен.
assumption-huggingface_config = { $hf_id } нет в каталоге: архитектура прочитана из его config.json ({ $model_type }).
assumption-huggingface_safetensors = Параметры посчитаны по заголовкам safetensors ({ $params }, хранятся как { $dtype }).
assumption-huggingface_params_from_config = Параметры вычислены по config.json: { $params }{ $packed ->
    [none] {""}
   *[other] {" "}(веса упакованы в { $packed })
}.

assumption-default_precision = Веса в { $precision } (точность не указана).
assumption-no_bf16_fp16 = У указанной карты нет bf16 (compute capability ниже 8.0): веса и вычисления в fp16.
assumption-native_precision = Веса в { $precision }, как опубликован чекпоинт (точность не указана).
assumption-experts_only_quantized = { $precision } квантует только MLP экспертов; внимание, роутер, эмбеддинги и LM head остаются 16-битными (как поставляется GPT-OSS).
assumption-qlora_base_nf4 = QLoRA хранит базу в 4-битном NF4; { $compute } — тип вычислений.
assumption-stack_separate_processes = { $models ->
    [one] Модель рядом с основной работает
   *[other] Модели рядом с основной ({ $models }) работают
} на той же карте в своём сервере (text-embeddings-inference, Infinity), у каждого свой контекст CUDA: их память прибавлена к тому, что нужно карте.
assumption-stack_vllm_memory_fraction = vLLM по умолчанию занимает { NUMBER($fraction, style: "percent") } карты: запустите его с меньшим --gpu-memory-utilization, чтобы осталось место другим моделям.
assumption-stack_default_model = Для названной роли взята { $model }.
component-extra_models = модели рядом
stack-role-embedding = эмбеддинги
stack-role-reranker = реранкер
stack-role-llm = LLM
stack-part = { $model } ({ $role })
assumption-default_context = Контекст { $context_length } { $context_length ->
    [one] токен
    [few] токена
   *[many] токенов
} на последовательность (не указан).
assumption-context_beyond_model = Контекст длиннее максимума модели ({ $max_context } { $max_context ->
    [one] токен
    [few] токена
   *[many] токенов
}); посчитано как просили.
assumption-default_seq_len = Обучающие последовательности по { $seq_len } { $seq_len ->
    [one] токен
    [few] токена
   *[many] токенов
} (не указано).
assumption-default_checkpointing_qlora = Gradient checkpointing включён, как в обычном рецепте QLoRA (peft) (не указано).
assumption-default_checkpointing_trainers = Gradient checkpointing включён, как в обычных тренерах для дообучения (SFTTrainer из TRL, LLaMA-Factory, рецепты Axolotl, Unsloth) (не указано).
assumption-default_checkpointing_torchtune = Gradient checkpointing включён, как в конфигах рецептов torchtune (не указано).
assumption-torch_compile_recomputes = torch.compile: обратный проход пересчитывает дешёвые поэлементные операции (нормализации, активации, приведения типов) вместо хранения их выходов; выходы матричных умножений сохраняются.
assumption-torchtune_features = torchtune: loss считается восемью частями (без полных логитов в fp32); адаптеры, их градиенты и состояния оптимизатора в bf16.
assumption-zero_buckets = DeepSpeed держит на каждой карте буфер градиентов на { $bucket_elements } элементов (reduce_bucket_size); ZeRO-3 держит собранными LM head и параметры, которые скоро понадобятся снова, от прямого прохода до обратного.
assumption-lora_dropout_inputs = LoRA dropout { $dropout }: каждый адаптированный слой сохраняет для обратного прохода копию входа после dropout и маску.
assumption-overhead = Накладные расходы: контекст CUDA на каждой карте плюс резерв аллокатора PyTorch.
assumption-moe_total_params = Смесь экспертов: в памяти все { $total_b } млрд параметров; скорость определяют { $active_b } млрд активных на токен.
assumption-embeddings_wide = { $precision } квантует только линейные слои; эмбеддинги и LM head остаются 16-битными.
assumption-gguf_average_bits = { $precision } посчитан по тензорам, как их квантует llama.cpp (выход, attn_v и ffn_down шире).
assumption-kv_full_context = KV-кэш на { $concurrency } { $concurrency ->
    [one] последовательность
    [few] последовательности
   *[many] последовательностей
} по { $context_length } { $context_length ->
    [one] токен
    [few] токена
   *[many] токенов
}, заполненных целиком.
assumption-multi_gpu_split = Работа делится между { $num_gpus } картами; у каждой свой контекст CUDA и буферы NCCL.
assumption-multi_gpu_fsdp = Конфигурации из нескольких карт посчитаны с полным шардированием FSDP (простой data parallel не уменьшил бы память на карту).
assumption-tensor_parallel_heads = Тензорный параллелизм vLLM требует, чтобы { $heads } голов внимания делились на число карт поровну; { $num_gpus } их не делит: выберите число карт, которое делит (или pipeline parallelism). Посчитано как равное деление.
assumption-not_in_offers = Ни одно из наших предложений аренды не подходит: рекомендованной конфигурации нет в наших предложениях, свяжитесь с нами — попробуем найти.
assumption-mixed_precision_amp = Смешанная точность как в PyTorch AMP: веса, градиенты и состояния оптимизатора в fp32 (16 байт на параметр с AdamW) плюс 16-битная копия весов от прямого прохода до обратного прохода каждого слоя.
assumption-mixed_precision_zero = Смешанная точность как в ZeRO/FSDP: 16-битные веса и градиенты, fp32 мастер-веса и состояния AdamW (16 байт на параметр), шардированные по картам.
assumption-lora_adapters_fp32 = LoRA ранга { $rank }; адаптеры, их градиенты и состояния оптимизатора в fp32 (peft).
assumption-lora_adapters_bf16 = LoRA ранга { $rank }; адаптеры, их градиенты и состояния оптимизатора в bf16 (как их приводит эталонный скрипт QLoRA); эмбеддинги и LM head у QLoRA остаются в bf16.
assumption-qlora_fp32_upcast = База QLoRA в NF4 с двойной квантизацией; эмбеддинги, нормализации и LM head приводятся к fp32 для обучения.
assumption-unsloth_features = Unsloth: входы слоёв для чекпоинтинга выгружаются в ОЗУ, loss считается без полных логитов.
assumption-eager_attention_scores = Eager-внимание хранит матрицу seq×seq каждого слоя; SDPA/FlashAttention — нет.
assumption-training_peak_backward = Пик в начале обратного прохода: веса, состояния оптимизатора и активации одного микробатча { $batch_size } × { $seq_len } токенов плюс буферы loss; градиенты появляются по мере освобождения активаций (PyTorch 2 освобождает их между шагами).
assumption-training_peak_optimizer_step = Пик на шаге оптимизатора: веса, все градиенты и состояния оптимизатора; активации микробатча к этому моменту освобождены.
assumption-training_peak_accumulation = Пик в начале обратного прохода: при накоплении градиентов за { $steps } { $steps ->
    [one] шаг
    [few] шага
   *[many] шагов
} они остаются в памяти рядом с весами, состояниями оптимизатора и активациями.
assumption-vae_decode_fp32 = Декодирование VAE при { NUMBER($width, useGrouping: 0) }×{ NUMBER($height, useGrouping: 0) } посчитано в fp32.
assumption-cpu_offload_slow = { $cpu_offload ->
    [model] Выгрузка модели на CPU (enable_model_cpu_offload в diffusers, стандартный рецепт из карточки FLUX): на карте один компонент за раз; чуть медленнее из-за передач.
   *[other] Выгрузка на CPU ({ $cpu_offload }) держит на карте по одному блоку пайплайна; генерация в разы медленнее.
}
assumption-gguf_denoiser_only = Файл { $precision } содержит только трансформер: текстовые энкодеры и VAE грузятся из 16-битного репозитория (GGUFQuantizationConfig в diffusers).
assumption-text_encoder_cpu = Текстовые энкодеры работают на CPU (как --t5_cpu у Wan): их весов на карте нет; кодирование промпта дольше.
assumption-cfg_single_pass = Денойзер работает по одному проходу (модель с дистиллированным guidance или проходы guidance идут друг за другом).
assumption-cfg_double_batch = Classifier-free guidance: денойзер считает батч из 2 на каждое изображение.
assumption-vllm_preallocates = vLLM по умолчанию занимает 90 % каждой карты (gpu_memory_utilization) и заполняет остаток KV-кэшем; оценка — то, что нужно этой нагрузке.
assumption-cpu_offload_layers = Выгрузка на CPU ({ $cpu_offload }): веса подгружаются из ОЗУ по одному слою; в разы медленнее.
assumption-cpu_offload_zero = Выгрузка на CPU ({ $cpu_offload }) как в DeepSpeed ZeRO-Offload: состояния оптимизатора, fp32-копия весов и градиенты (при sequential и параметры, как CPUOffload во FSDP) живут в ОЗУ; в разы медленнее.
assumption-outside_measured_range = { $dimension ->
    [params_b] Размер модели ({ NUMBER($value) }B)
    [tokens] Длина { NUMBER($value) } токенов
    [batch] Батч { NUMBER($value) }
    [num_gpus] { NUMBER($value) } GPU
    [megapixels] { NUMBER($value) } мегапикселя на кадр
    [frames] { NUMBER($value) } кадров
   *[other] { $dimension } = { NUMBER($value) }
} — вне того, что замерено для такой нагрузки ({ NUMBER($low) }–{ NUMBER($high) }): диапазон расширен до ±{ $percent }%.
assumption-few_measured_cases = Опубликованных замеров такой нагрузки мало ({ $cases }): диапазон ±{ $percent }% — ошибка по всем замерам.
assumption-decode_bandwidth_bound = Скорость декодирования = пропускная способность памяти × { NUMBER($efficiency, style: "percent") } / байты, читаемые на токен (веса + KV-кэш).
assumption-vllm_budget = Вердикты сравниваются с долей карты, которую берёт vLLM ({ $percent } %, gpu_memory_utilization); всё, что от неё оставила модель, — KV-кэш (его размер в токенах — рядом со скоростью).
assumption-decode_tensor_parallel = vLLM делит каждый слой между картами (тензорный параллелизм, { $interconnect }): каждое удвоение числа карт даёт { $percent } % от идеального прироста пропускной способности.
assumption-decode_layer_split = Карты держат слои по очереди: токен проходит их одну за другой, поэтому декодирование не быстрее, чем на одной карте (тензорный параллелизм vLLM был бы быстрее).
assumption-decode_allreduce = Кроме того, каждый слой ждёт { $per_layer } all-reduce между картами, ~{ $us } мкс каждый на { $count } картах (модель задержек NCCL).
assumption-decode_moe_layers = Смесь экспертов тратит ещё фиксированные ~{ $us } мкс на слой на маршрутизацию и маленькие матрицы экспертов (слоёв: { $layers }) на любой карте: при немногих пользователях это может весить больше пропускной способности памяти.

## Поля запроса, для сообщений об ошибках
field-text = текст
field-model = модель
field-task = задача
field-precision = точность
field-context_length = длина контекста
field-concurrency = число пользователей
field-batch_size = размер батча
field-seq_len = длина последовательности
field-resolution = разрешение
field-images = число изображений
field-frames = число кадров
field-num_gpus = число карт
field-lora_rank = ранг LoRA
field-request = запрос

## Текст, который не удалось разобрать
parse-example = llama 3 70b int4 32k контекст 4 пользователя
parse-example-hint = Например: { $example }
parse-understood = Пока понял: { $settings }.
parse-error-empty = Напишите, какую модель посчитать и как вы хотите её использовать.
parse-error-missing_model = Какая модель? Назовите её, дайте id с Hugging Face или просто размер (13B).
parse-error-ambiguous_model = Подходит несколько моделей. Какая именно: { $candidates }?
parse-error-unknown_model = Не знаю модель «{ $name }». Дайте её id с Hugging Face или размер (13B).
parse-error-unknown_model-suggest = Может быть, вы имели в виду: { $candidates }?
parse-error-too_large = Слишком большое значение: { $field }.
parse-error-invalid = Недопустимое значение: { $field }.

## Настройки в первой строке ответа
setting-context = контекст { $tokens } { $tokens ->
    [one] токен
    [few] токена
   *[many] токенов
}
setting-users = { $count ->
    [one] { $count } пользователь
    [few] { $count } пользователя
   *[many] { $count } пользователей
}
setting-kv = KV-кэш { $precision }
setting-batch = микробатч { $count }
setting-seq-len = последовательности по { $tokens } { $tokens ->
    [one] токену
   *[other] токенов
}
setting-lora-rank = ранг { $rank }
setting-accumulation = накопление градиентов за { $steps } { $steps ->
    [one] микробатч
    [few] микробатча
   *[many] микробатчей
}
setting-checkpointing = gradient checkpointing
setting-gpus = { $count ->
    [one] { $count } карта
    [few] { $count } карты
   *[many] { $count } карт
}
setting-resolution = { $width }×{ $height }
setting-images = { $count ->
    [one] { $count } изображение
    [few] { $count } изображения
   *[many] { $count } изображений
}
setting-frames = { $count ->
    [one] { $count } кадр
    [few] { $count } кадра
   *[many] { $count } кадров
}
setting-tiling = тайлинг VAE
setting-slicing = слайсинг VAE

## Человеческий ответ (собирает core/language/answer.py, раскладывают core/layouts/plain.py и бот)
answer-headline = { $model }: { $settings }
config = { $count }× { $gpu }
currency-RUB = ₽
currency-USD = $
currency-EUR = €
price-per-hour = { NUMBER($price, maximumFractionDigits: 2) } { $currency }/ч
price-per-month = { NUMBER($price, maximumFractionDigits: 0) } { $currency }/мес
price-from-per-hour = от { NUMBER($price, maximumFractionDigits: 2) } { $currency }/ч
price-on-request = цена по запросу
price-not-offered = нет в наших предложениях, свяжитесь с нами
lead-verdict-fits = Влезет
lead-verdict-tight = Влезет впритык
lead-verdict-does_not_fit = Не влезет
lead-fits = { $icon } { $verdict } на { $config }
lead-fits-not-offered = { $icon } { $verdict } на { $config } — такой конфигурации у нас нет, напишите нам
lead-need = Нужно { $need } на карту из { $usable } (вероятно, { $low }–{ $high })
lead-own-fits = { $icon } На { $config } влезет: { $need } на карту из { $usable }
lead-own-tight = { $icon } На { $config } влезет впритык: { $need } на карту из { $usable }
lead-own-does_not_fit = { $icon } На { $config } не влезет: нужно { $need } на карту из { $usable }
lead-rent = 🚀 В аренду: { $config }
lead-nothing-fits = Ни одна наша конфигурация не вмещает { $need } на карту как есть — как уменьшить, ниже.
lead-none = ❌ Нужно { $need } на карту: ни одна наша конфигурация не вмещает это как есть
lead-none-hint = Как уменьшить память — ниже.
speed-short = ~{ $tokens } ток/с
answer-parts = Из чего складываются { $total } на карту:
answer-offers-cheapest = Дешевле всего: { $config }, { $price }
answer-offers-recommended = Рекомендуем: { $config }, { $price }
answer-offers-fastest = быстрее всего: { $config }, { $price }
answer-verdict = { $icon } { $config }: { $verdict }, { $need } из { $usable }
answer-verdicts = Влезет ли (память на карту):
answer-speed = Скорость на { $config }: ~{ $per_user } { $per_user ->
    [one] токен
    [few] токена
   *[many] токенов
}/с на пользователя
answer-speed-many = Скорость на { $config }: ~{ $per_user } { $per_user ->
    [one] токен
    [few] токена
   *[many] токенов
}/с на пользователя, ~{ $total } всего
answer-kv-capacity = vLLM на { $config }: KV-кэш на { NUMBER($tokens) } { $tokens ->
    [one] токен
    [few] токена
   *[many] токенов
}, одновременно до { NUMBER($concurrency, maximumFractionDigits: 2) }× запросов по { NUMBER($context_length) } { $context_length ->
    [one] токен
    [few] токена
   *[many] токенов
}
answer-mitigations = Если не влезает (память на карту):
answer-without-checkpointing = Без gradient checkpointing (быстрее: прямой проход не пересчитывается): { $need } на карту.
answer-mitigations-own = Как уместить на { $config } (память на карту):
answer-mitigation = { $icon } { $action }: −{ $saves } → { $total }, { $outcome }
answer-more-mitigations = Ещё способы (память на карту):
change-side = { $total } на карту · { $config } · { $price }
change-side-none = { $total } на карту · не влезает в наши конфигурации
change-line = Было: { $before } → стало: { $after }
compare-title = { $model }: { $settings }
compare-row = { $icon } { $config }: { $verdict }, { $need } на карту из { $usable } · { $price }{ $speed }
compare-cheapest = Дешевле: { $config }
compare-fastest = Быстрее: { $config }
mitigation-fits = тогда влезает
mitigation-fits-on = тогда влезает на { $count }× { $gpu }
mitigation-still-short = всё равно не влезает ({ $count ->
    [one] { $count } карта
    [few] { $count } карты
   *[many] { $count } карт
})
mitigation-fits-with-more = на { $cards ->
    [one] одну карту
    [few] { $cards } карты
   *[many] { $cards } карт
} не влезает, влезает на { $count }× { $gpu }
answer-host = Сервер: ОЗУ не меньше { $ram_min } (лучше { $ram_recommended }), диск { $disk_kind } на { $disk } под веса.
disk-nvme = NVMe
disk-ssd = SSD
disk-hdd = HDD
answer-assumptions = Допущения:
assumption-solve_search = Наибольшее значение { $field }, которое влезает, найдено поиском по той же оценке (экспоненциальный, затем двоичный; каждое значение посчитано полностью).
assumption-solve_default_target = Карта не названа: считаем для { $gpu } — её мы сдаём в аренду первой.
assumption-cost_training_flops = Вычисления обучения: { $factor } × параметры × токены ({ $method }): прямой проход 2, обратный 4 при полном обучении (Kaplan et al. 2020); LoRA/QLoRA не считают градиенты замороженных весов (4); gradient checkpointing добавляет прямой проход (+2).
assumption-cost_mfu = Время при { $low }–{ $high } % пиковых bf16 TFLOPS карт ({ $method }; полное обучение: Llama 3 — 38–43 % на H100, PaLM — 46 %; для LoRA и QLoRA ниже, наше допущение).
assumption-cost_linear_scaling = Считаем, что больше карт ускоряют обучение пропорционально (data parallel); на картах без NVLink — меньше.
assumption-cost_serving = Время обслуживания: генерация на { $fill_low }–100 % расчётной суммарной скорости (насколько заполнен батч), prefill на { $prefill_low }–{ $prefill_high } % пиковых TFLOPS.
assumption-cost_default_request = Каждый запрос: { $prompt } токенов промпта, { $tokens } сгенерированных (не указано).
assumption-cost_generation_figures = Секунды на картинку — из опубликованных замеров (core/data/throughput.toml), батч 1; каждая карта сервера генерирует отдельно.
assumption-cost_no_figure = Нет опубликованной скорости { $model } на этих картах при таком разрешении: время и цену за картинку не даём.

## Обратные вопросы (core/language/answer_solve.py)
solve-memory-config = { $count ->
    [1] { NUMBER($gb, maximumFractionDigits: 1) } ГБ
   *[other] { $count }× { NUMBER($gb, maximumFractionDigits: 1) } ГБ
  }
solve-tokens = { NUMBER($tokens) } { $tokens ->
    [one] токен
    [few] токена
   *[many] токенов
  }
solve-found-context_length = 📏 Максимальный контекст на { $config }: { $value }
solve-found-concurrency = 👥 До { $value } одновременных пользователей при контексте { NUMBER($context) } на { $config }
solve-found-batch_size = 📦 Наибольший микробатч на { $config }: { $value }
solve-found-seq_len = 📏 Наибольшая длина последовательности на { $config }: { $value }
solve-found-precision = 🎚 Лучшая точность, которая влезет на { $config }: { $value }
solve-found-model = 🧩 Самая большая модель { $family }, которая влезет на { $config }: { $value }
solve-margin = Нужно { $need } на карту из { $usable }, свободно { $margin }
solve-speed = ~{ NUMBER($total) } ток/с всего, ~{ $per_user } на пользователя
solve-next = { $value } уже не влезет: { $need } на карту из { $usable } (больше всего растёт: { $grows })
solve-all-fit-model = Влезает всё до предела самой модели: { $value }
solve-all-fit-contract_max = Влезает всё до { $value }
solve-all-fit-catalogue = Влезает даже лучший вариант: { $value }
solve-all-fit-memory = Влезает всё до { $value }
solve-none-context_length = ❌ На { $config } не влезет ничего: даже { $value } — это { $need } на карту из { $usable }
solve-none-concurrency = ❌ На { $config } не влезет даже { $value } пользователь: { $need } на карту из { $usable }
solve-none-batch_size = ❌ На { $config } не влезет даже микробатч { $value }: { $need } на карту из { $usable }
solve-none-seq_len = ❌ На { $config } не влезет ничего: даже { $value } — это { $need } на карту из { $usable }
solve-none-precision = ❌ На { $config } не влезет ни одна точность: даже { $value } — это { $need } на карту из { $usable }
solve-none-model = ❌ На { $config } не влезет ни одна модель семейства: даже самая маленькая, { $value }, — это { $need } на карту из { $usable }

## Время и стоимость (core/language/answer_solve.py)
cost-training = ⏱ Обучение на { NUMBER($tokens) } токенов ({ NUMBER($epochs) } { $epochs ->
    [one] эпоха
    [few] эпохи
   *[many] эпох
  }): ≈ { $flops } FLOP ({ NUMBER($factor) } × параметры × токены) при { $mfu_low }–{ $mfu_high } % пиковой скорости карт
cost-serving = ⏱ { NUMBER($requests) } запросов в день (по { NUMBER($prompt) } токенов промпта и { NUMBER($tokens) } сгенерированных):
cost-generation = ⏱ { NUMBER($outputs) } картинок:
cost-money = { NUMBER($low) }–{ NUMBER($high) } { $currency }
cost-option-training = • { $config }: { NUMBER($low, maximumSignificantDigits: 2) }–{ NUMBER($high, maximumSignificantDigits: 2) } ч ({ NUMBER($gpu_low, maximumSignificantDigits: 2) }–{ NUMBER($gpu_high, maximumSignificantDigits: 2) } GPU-часов) · { $price }
cost-option-serving = • { $config }: { NUMBER($low, maximumSignificantDigits: 2) }–{ NUMBER($high, maximumSignificantDigits: 2) } ч работы в день · { $price }{ $day }
cost-serving-day = ; сервер круглосуточно ({ $servers }×): { NUMBER($price) } { $currency } в день
cost-option-generation = • { $config }: { NUMBER($seconds_low, maximumSignificantDigits: 3) }–{ NUMBER($seconds_high, maximumSignificantDigits: 3) } с на картинку, { NUMBER($low, maximumSignificantDigits: 2) }–{ NUMBER($high, maximumSignificantDigits: 2) } ч · { $price }
cost-option-no-time = • { $config }: нет опубликованной скорости этой модели на этой карте
cost-no-options = Нечего посчитать: ни одна конфигурация не подходит.
solve-next-step = { $value } уже не влезет: { $need } на карту из { $usable }
cost-flops = { NUMBER($mantissa, maximumFractionDigits: 1) }·10{ $exponent }
cost-per-day = { $price } в день
solve-found-any-model = 🧩 Самая большая модель каталога, которая влезет на { $config }: { $value }
cost-generation-video = ⏱ { NUMBER($outputs) } роликов:
cost-money-from = от { NUMBER($low) }–{ NUMBER($high) } { $currency }
cost-serving-day-from = ; сервер круглосуточно ({ $servers }×): от { NUMBER($price) } { $currency } в день
cost-option-generation-video = • { $config }: { NUMBER($seconds_low, maximumSignificantDigits: 3) }–{ NUMBER($seconds_high, maximumSignificantDigits: 3) } с на ролик, { NUMBER($low, maximumSignificantDigits: 2) }–{ NUMBER($high, maximumSignificantDigits: 2) } ч · { $price }
assumption-cost_figure_same_compute = Для { $card } своей опубликованной скорости нет: взят замер на { $measured } — тот же чип на тех же частотах (шаги диффузии упираются в вычисления, лишняя память их не меняет).
assumption-cost_generation_figures_video = Секунды на ролик — из опубликованных замеров (core/data/throughput.toml), по одному ролику; каждая карта сервера генерирует отдельно.
cost-option-generation-one = • { $config }: { NUMBER($seconds, maximumSignificantDigits: 3) } с на картинку, { NUMBER($low, maximumSignificantDigits: 2) } ч · { $price }
cost-option-generation-video-one = • { $config }: { NUMBER($seconds, maximumSignificantDigits: 3) } с на ролик, { NUMBER($low, maximumSignificantDigits: 2) } ч · { $price }
assumption-cost_example_length = Каждый пример длиной в обучающую последовательность, { $tokens } токенов (длина не указана).
solve-comfortable = С запасом { $percent } % памяти (как мы советуем): до { $value }
assumption-parse_cost_needs_dataset = Чтобы посчитать время и стоимость, назовите датасет: «10000 примеров по 1000 токенов, 3 эпохи» или «1B токенов».
assumption-parse_cost_needs_requests = Чтобы посчитать стоимость обслуживания, назовите нагрузку: «10000 запросов в день по 500 токенов».

## The answer as a picture (core/layouts/picture.py)
picture-part = { $part }: { $size }
picture-total = на карту: { $total }
cli-hf-not-found = Модели { $model } нет на Hugging Face (или доступ к ней закрыт): проверьте название (например, Qwen/Qwen3-8B) или укажите размер (8B).
cli-hf-unavailable = Не удалось связаться с Hugging Face за { $seconds } с, чтобы прочитать { $model }: попробуйте позже или укажите размер (8B); GPUFIT_HF_LOOKUP=0 отключает поиск.
cli-hf-unsupported = { $model } есть на Hugging Face, но её config.json — не языковая модель, которую можно посчитать: укажите размер (8B).

## sales: цены, прайс, впритык (slice "sales")
assumption-tight_offer = Самое дешёвое предложение с ценой влезает впритык (свободно меньше { $percent } % памяти); вариант с запасом назван вторым.
tight-lead = ⚠️ Впритык: свободно меньше { $percent } % памяти — длинный запрос или больше пользователей могут не влезть.
tight-safe = Надёжно: { $ways }.
tight-safe-context = контекст до { NUMBER($value) } токенов
tight-safe-users = до { $value ->
    [one] { $value } пользователя
   *[other] { $value } пользователей
}
tight-or = {" "}или{" "}
tight-roomy = С запасом: { $config }, { $price }.
prices-title = 💰 Цены на аренду
prices-title-gpu = 💰 Цены на аренду: { $gpu }
prices-gpu = • { $gpu }: { $items }
prices-item = { $counts } — { $price }
prices-not-offered = { $gpu } мы не сдаём — вот что есть.
prices-no-count = { $config } в предложениях нет; есть { $counts }.
prices-no-monthly = Помесячной цены в прайсе нет — её назовёт менеджер.
prices-from-note = «от» — начальная цена.
prices-on-request-note = Цену «по запросу» назовёт менеджер.
answer-offers-recommended-unpriced = Рекомендуем: { $config }
answer-offers-fastest-unpriced = быстрее всего: { $config }
## units: one card count and one unit per answer (core/language/answer.py, core/advice)
assumption-named_count_fsdp = Обучение на { $num_gpus } картах посчитано так, как его запускают: с полным шардированием FSDP (ZeRO-3), на каждой карте своя часть весов, градиентов и состояний оптимизатора.
action-shard_offload_optimizer = ZeRO-3 и состояния оптимизатора на CPU (DeepSpeed offload_optimizer): медленнее, обучение то же
verdict-no_margin = не влезет надёжно
lead-own-no_margin = { $icon } На { $config } не влезет надёжно: { $need } на карту из { $usable }, запаса нет
lead-fits-fewer = { $icon } { $verdict } на { $config }: { $asked ->
    [few] { $asked } карты не нужны
   *[other] { $asked } карт не нужно
}
lead-fits-fewer-not-offered = { $icon } { $verdict } на { $config }: { $asked ->
    [few] { $asked } карты не нужны
   *[other] { $asked } карт не нужно
} — такой конфигурации у нас нет, напишите нам
answer-mitigation-to = { $icon } { $action }: → { $total }, { $outcome }
solve-next-no_margin = { $value } уже не влезет надёжно: { $need } на карту из { $usable }, запаса нет (больше всего растёт: { $grows })
solve-next-step-no_margin = { $value } уже не влезет надёжно: { $need } на карту из { $usable }, запаса нет
solve-next-budget = { $value } уже не влезет: { $need } на карту, больше бюджета памяти его движка (больше всего растёт: { $grows })
solve-next-step-budget = { $value } уже не влезет: { $need } на карту, больше бюджета памяти его движка
lead-fits-more = { $icon } { $verdict } на { $config }: на { $asked ->
    [one] { $asked } такую
    [few] { $asked } такие
   *[many] { $asked } таких
} не влезет
lead-fits-more-not-offered = { $icon } { $verdict } на { $config }: на { $asked ->
    [one] { $asked } такую
    [few] { $asked } такие
   *[many] { $asked } таких
} не влезет — такой конфигурации у нас нет, напишите нам
## dialog: the picture's card labels (core/layouts/picture.py)
picture-used = { $icon } { $verdict }: { $need } · занято { $percent } %
picture-capacity = { $card }: { $size }

## dialog: inverse answers lead with a comfortable fit (core/language/answer_solve.py)
solve-in-precision = { $value } в { $precision }
solve-tight = Только впритык (свободно меньше { $percent } % карты): { $value } — { $need } из { $usable }

## speed: накопление градиентов (slice "speed")
action-gradient_accumulation = микробатч { $batch_size } × накопление градиентов { $steps } (тот же батч на шаг оптимизатора)
tight-safe-accumulation = микробатч { $value } × накопление градиентов { $steps } (тот же батч на шаг оптимизатора)

## truth: formats a card cannot run, engines people deploy (slice "truth")
assumption-serving_class_vllm = Смесь экспертов на { $params_b } млрд параметров запускают как сервер, а не через generate() в transformers: посчитано для vLLM, как в карточке модели; напишите «transformers», чтобы посчитать generate().
assumption-fp8_dequantized_bf16 = У указанной карты нет FP8 (compute capability ниже 8.9): transformers загрузит этот FP8-чекпоинт, распаковав его в bf16, — вдвое больше памяти; vLLM оставил бы его 8-битным (weight-only Marlin).
assumption-fp8_weight_only_marlin = У указанной карты нет FP8 (compute capability ниже 8.9): vLLM оставляет веса FP8 8-битными и считает с ними в bf16 (weight-only, ядро Marlin).
action-use_prequantized = взять уже квантованный чекпоинт ({ $precision }, GPTQ или GGUF) вместо квантования при загрузке
assumption-loading_reserve = Квантование 16-битного чекпоинта при загрузке (bitsandbytes, по одному тензору) держит около одного слоя в 16 битах: { NUMBER($gb, maximumFractionDigits: 2) } ГБ сверх весов; их потом переиспользуют KV-кэш и активации.
assumption-video_measure_first = Память под видео предсказуема хуже всего (опубликованные замеры расходятся с такой оценкой до { $percent } %): прежде чем арендовать надолго, сгенерируйте один короткий ролик (например, 17 кадров в этом разрешении) и посмотрите torch.cuda.max_memory_reserved(); активации растут с числом кадров, веса — нет.
## understand (issue 25): text that asks no sizing question, words not understood
parse-error-chit_chat = Я считаю, сколько видеопамяти нужно модели и какой сервер под неё подойдёт. Напишите модель и задачу, например: llama 3.1 8b int4 на 4090 48.
parse-error-off_topic = Это не вопрос о размере модели: такие вопросы решает менеджер — оставьте заявку.
parse-error-unsized_model = Модели речи (Whisper, TTS) пока не считаем: оставьте заявку, менеджер подберёт сервер.
assumption-parse_unread = Не понял «{ $words }»: в ответе это не учтено (карту пишите так: 4090 48, h100, a100 80).
## evidence (issue 20): eager transformers decode
assumption-decode_eager_launch = transformers generate() работает без компиляции: процессор запускает каждое ядро всех { $layers } слоёв на каждый токен, ~{ $ms } мс, поэтому не больше ~{ $tokens_per_s } ток/с на пользователя на любой карте. vLLM или llama.cpp (CUDA graphs) дают скорость по пропускной способности памяти.
assumption-default_checkpointing_video = Gradient checkpointing включён, как в собственных скриптах обучения видеомоделей (finetune CogVideo) (не указано).

## avail (issue 23): offers that are taken now
assumption-offer_sold_out = { $count }× { $gpu } сейчас занято — предлагаем следующую подходящую конфигурацию; если нужна именно эта, оставьте заявку: сообщим, когда освободится.
prices-sold-out = сейчас занято
prices-sold-out-note = «Сейчас занято» — оставьте заявку, сообщим, когда освободится.

# --- currency (issue 23, item 6): the tenge sign
currency-KZT = ₸
## slice "polish" (issue 25): the change line names the card asked about
change-side-own = { $total } на карту · { $config }: { $verdict }
assumption-parse_card_memory = Карту без объёма памяти понял как { $card } (бывает и { $other } — её мы сдаём в аренду).
## slice "polish" (issue 25): every request field named in the user's language (errors say which)
field-engine = движок
field-kv_cache_precision = точность KV-кэша
field-method = метод обучения
field-mixed_precision = смешанная точность
field-optimizer = оптимизатор
field-gradient_checkpointing = gradient checkpointing
field-gradient_accumulation_steps = шаги накопления градиента
field-quant_backend = библиотека квантования (bitsandbytes или torchao)
field-attention = реализация внимания
field-lora_targets = слои LoRA
field-adapter_dtype = точность адаптера
field-torch_compile = torch.compile
field-lora_dropout = dropout LoRA
field-sharding = шардирование
field-cpu_offload = выгрузка на CPU
field-vae_tiling = тайлинг VAE
field-vae_slicing = слайсинг VAE
field-gpus = карты
field-quantized_components = квантованные части
field-text_encoder_on_cpu = текстовый энкодер на CPU
field-gpu_memory_utilization = доля памяти карты для vLLM
field-solve_for = что подобрать
field-memory_gb = память карты
field-dataset_tokens = размер датасета в токенах
field-examples = число примеров
field-tokens_per_example = токенов на пример
field-epochs = число эпох
field-requests_per_day = запросов в день
field-tokens_per_request = токенов на запрос
field-prompt_tokens = токенов промпта
field-outputs = число результатов
field-extra_models = другие модели
assumption-parse_task_not_for_model = Это языковая модель: { $task ->
    [video_generation] видео
   *[image_generation] картинки
} она не генерирует, поэтому посчитал её запуск как LLM. Для { $task ->
    [video_generation] видео напишите видеомодель: wan 2.1, hunyuan video.
   *[image_generation] картинок напишите модель изображений: flux dev, sdxl.
}
