# Время до первого токена и нагрузка (core/language/answer_latency.py), команда запуска (core/layouts/launch.py).

latency-ttft = Первый токен: ~{ NUMBER($ttft, maximumFractionDigits: 2) } с на запрос из { NUMBER($tokens) } токенов на { $config } (префилл { NUMBER($prefill, maximumFractionDigits: 2) } с при { $mfu }% от { NUMBER($tflops) } TFLOPS карты)
latency-load = ⏱ { NUMBER($rps, maximumFractionDigits: 2) } { $rps ->
    [one] запрос
    [few] запроса
   *[other] запросов
} в секунду{ $target ->
    [none] {""}
   *[other] , первый токен быстрее { NUMBER($target, maximumFractionDigits: 2) } с
}: { $servers } { $servers ->
    [one] сервер
    [few] сервера
   *[other] серверов
} по { $config } (всего { $cards } { $cards ->
    [one] карта
    [few] карты
   *[other] карт
})
latency-load-detail = Первый токен в среднем через ~{ NUMBER($ttft, maximumFractionDigits: 2) } с: префилл { NUMBER($prefill, maximumFractionDigits: 2) } с на запрос из { NUMBER($tokens) } токенов + { NUMBER($wait, maximumFractionDigits: 2) } с в очереди; каждый сервер занят { $busy }% времени, одновременно ~{ NUMBER($inflight, maximumFractionDigits: 1) } запросов
latency-load-memory = KV-кэш одного сервера вмещает { $max } одновременных запросов: это и задаёт число серверов.
latency-load-unmet = ⚠️ Никаким числом серверов не уложиться в { NUMBER($target, maximumFractionDigits: 2) } с: один запрос из { NUMBER($tokens) } токенов сам по себе занимает { NUMBER($ttft, maximumFractionDigits: 2) } с на { $config }. Сократите запрос или возьмите карты быстрее.
latency-load-model = Как считали: префилл при { $mfu }% пиковой мощности карты (по опубликованному замеру), каждый сервер обрабатывает запросы по одному (очередь M/D/1), { NUMBER($output) } токенов ответа на запрос со скоростью одного пользователя.

launch-title = ⌨️ Команда запуска
launch-engine-vllm = vLLM
launch-engine-llama_cpp = llama.cpp (llama-server)
launch-engine-ollama = Ollama (Modelfile)
launch-engine-transformers = transformers (Python)
launch-engine-accelerate = Обучение: accelerate launch
launch-placeholder = Замените { $file } на путь к своему файлу.
launch-none = Для этого ответа команды запуска нет: она есть для языковых моделей с известным чекпойнтом.
launch-sized = Как посчитано: { $settings }.

field-requests_per_second = запросов в секунду
field-ttft_target_s = время до первого токена, секунд
latency-ttft-users = ; если { $users } { $users ->
    [one] пользователь отправит
    [few] пользователя отправят
   *[other] пользователей отправят
} запросы одновременно, последний получит первый токен на ~{ NUMBER($wait, maximumFractionDigits: 2) } с позже (префиллы идут по одному)
