## Speculative decoding and hybrid models (issue 22 items 5 and 6)

component-recurrent_state = состояние Mamba / линейного внимания
component-draft_model = драфт (модель или голова)
component-draft_kv_cache = KV-кэш драфта
component-speculative_scratch = проверка k+1 токенов

speculative-method-draft_model = драфт-модель { $draft }
speculative-method-eagle = голова EAGLE
speculative-method-eagle3 = голова EAGLE-3
speculative-method-mtp = MTP-слой модели
speculative-method-ngram = n-gram (поиск по промпту)

answer-speculative = ⚡ Спекулятивное декодирование ({ $method }, k = { $tokens }): +{ $extra } на карту, без него { $without }. Ускорение ~{ $speedup }× при 1 пользователе (принимается { $accept_low }–{ $accept_high } % токенов: { $cite }); с ростом числа пользователей выигрыш меньше.
answer-hybrid = 🧬 Гибридная модель: KV-кэш только у { $attention } из { $layers } слоёв, у остальных { $recurrent } — состояние { $state } на запрос{ $fp32 ->
    [yes] {" "}(SSM-состояние в fp32)
   *[no] {""}
}, оно не растёт с контекстом.

assumption-hybrid_state = Гибридная модель: KV-кэш держат { $attention } слоёв внимания из { $layers }; { $recurrent } рекуррентных слоёв ({ $kind }) хранят состояние фиксированного размера, { $per_sequence_mb } МБ на последовательность (формы как в vLLM MambaStateShapeCalculator).
assumption-speculative_source = Ускорение спекулятивного декодирования: формула Leviathan et al. 2023, доля принятых токенов из источника: { $source }
assumption-speculative_vllm = { $method } — это голова или слой модели, их запускают vLLM и SGLang (transformers generate() умеет только драфт-модель и n-gram): посчитано как vLLM.

field-speculative = спекулятивное декодирование
field-draft_model = драфт-модель
field-num_speculative_tokens = число угадываемых токенов
