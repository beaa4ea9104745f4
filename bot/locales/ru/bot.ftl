## Приветствие и выбор задачи

greeting = 👋 Я считаю, сколько видеопамяти нужно ИИ-модели: влезет ли, на какую карту и где её арендовать.
ask-task = <b>Что вы хотите сделать?</b>
task-inference = 💬 Запустить LLM
task-finetune = 🎯 Дообучить LLM
task-pretrain = 🏗 Обучить с нуля
task-image = 🖼 Генерировать картинки
task-video = 🎬 Генерировать видео
task-other = 🧩 Другое
task-other-note =
    3D-рендеринг, симуляции и другие задачи считаем отдельно, вместе с нашими инженерами.
    Оставьте заявку — подберём сервер.

## Шаги

ask-model = <b>Какая модель?</b>
    Выберите ниже или напишите название, id с Hugging Face или размер (<code>13B</code>).
ask-method = <b>Как будете обучать?</b>
ask-precision = <b>Какая точность весов?</b>
ask-context_length = <b>Длина контекста</b> на запрос (токенов)? Или напишите: <code>32k</code>, <code>8192</code>.
ask-concurrency = <b>Сколько пользователей одновременно?</b> Или напишите число.
ask-batch_size = <b>Размер микробатча</b> на GPU? Или напишите число.
ask-seq_len = <b>Длина последовательности</b> в обучающих примерах (токенов)? Или напишите: <code>4k</code>.
ask-resolution = <b>Разрешение</b>? Или напишите: <code>1024x768</code>.
ask-images = <b>Сколько картинок за раз</b> (батч)?
ask-frames = <b>Сколько кадров</b> в ролике?
choose-one = Подходят несколько моделей — какая из них?


field-precision = { $value }
field-method = { $value }
field-context_length = контекст { $value }
field-concurrency = { $value ->
    [one] { $value } пользователь
    [few] { $value } пользователя
   *[many] { $value } пользователей
}
field-batch_size = батч { $value }
field-seq_len = длина { $value }
field-resolution = { $value }
field-images = { $value ->
    [one] { $value } картинка
    [few] { $value } картинки
   *[many] { $value } картинок
}
field-frames = { $value ->
    [one] { $value } кадр
    [few] { $value } кадра
   *[many] { $value } кадров
}

## Кнопки

btn-back = ‹ Назад
btn-restart = ↺ Заново
btn-prev-page = ‹ Назад к списку
btn-next-page = Ещё ›
btn-typical = Типично
btn-contact = ✉️ Связаться с нами
btn-rent = 🚀 Арендовать { $count }× { $gpu }
btn-change-precision = Другая точность
btn-change-context_length = Другой контекст
btn-change-seq_len = Другая длина
btn-change-resolution = Другое разрешение
btn-change-method = Другой метод
btn-details = 📋 Подробнее
btn-open-bot = 🤖 Подробно в боте

## Подсказки на неожиданный ввод

hint-model = Не узнал модель. Напишите название (<code>llama 3.1 8b</code>), id с Hugging Face (<code>org/model</code>) или размер (<code>13B</code>) — или выберите кнопку.
hint-method = Выберите метод кнопкой: LoRA, QLoRA или полное.
hint-precision = Выберите точность кнопкой или напишите: <code>bf16</code>, <code>int8</code>, <code>int4</code>.
hint-context_length = Напишите длину контекста, например <code>32k</code> или <code>8192</code>, или выберите кнопку.
hint-concurrency = Напишите число пользователей, например <code>8</code>, или выберите кнопку.
hint-batch_size = Напишите размер батча, например <code>4</code>, или выберите кнопку.
hint-seq_len = Напишите длину последовательности, например <code>4k</code> или <code>2048</code>, или выберите кнопку.
hint-resolution = Напишите разрешение, например <code>1024x1024</code>, или выберите кнопку.
hint-images = Напишите число картинок, например <code>4</code>, или выберите кнопку.
hint-frames = Напишите число кадров, например <code>81</code>, или выберите кнопку.
hint-idle = Напишите вопрос словами, например <code>llama 3 70b int4 32k</code>, или /start для пошагового диалога.
stale-button = Эта кнопка из старого сообщения. Начните заново: /new

## Результат

result-part = • { $name }: { $size }

error-estimate = Не получилось посчитать: { $reason }
    Вернитесь и поменяйте ответ или начните заново.
error-generic = У меня что-то сломалось. Попробуйте ещё раз или начните заново: /new
quick-not-understood = { $reason }
    Попробуйте так: <code>llama 3 70b int4 32k</code> — или /start для пошагового диалога.

## Инлайн-режим: @бот и вопрос в любом чате. Заголовок и описание — простой текст (без HTML).

inline-no-offer = Как уменьшить расход памяти — в подробном ответе в боте.
inline-help-title = ❓ Как спросить: модель, точность, контекст
inline-help-description = Например: llama 3.1 70b int4 32k · qwen3 8b 8 users · sdxl 1024 batch 4
inline-help =
    <b>Видеопамять в одну строку</b>
    В любом чате напишите <code>@{ $bot }</code> и вопрос: <code>llama 3.1 70b int4 32k</code>, <code>qlora mistral 7b</code>, <code>sdxl 1024 batch 4</code>.
    В ответе — сколько памяти нужно, из чего она складывается и какую карту арендовать; подробный ответ — в боте.

## Команды

cancelled = Отменено. Пишите вопрос или /start, когда захотите.
help =
    <b>Как мной пользоваться</b>
    /start — пошаговый диалог: задача, модель, точность, нагрузка → память, вердикт и сервер в аренду
    Или просто напишите вопрос: <code>llama 3 70b int4 32k</code>, <code>qlora mistral 7b</code>, <code>сколько памяти для sdxl 1024 batch 4</code>
    /new — заново · /lang — язык · /about — как считается · /cancel — прервать диалог
about =
    <b>Как считается оценка</b>
    Пиковая память на GPU — сумма частей: веса в выбранной точности (для GGUF/AWQ/NF4 — реальные биты на вес), KV-кэш по архитектуре модели (GQA, скользящее окно, MLA), активации, градиенты и состояния оптимизатора при обучении, текстовые энкодеры и декодирование VAE для диффузии, плюс контекст CUDA и резерв аллокатора.
    Доступная память GPU — та, что показывает драйвер, а не число на коробке. Размеры — в ГБ, как в названиях карт: 1 ГБ = 2³⁰ байт (у «RTX 4090 48 GB» ровно 48 ГБ; так же считают nvidia-smi и PyTorch).
    <b>Точность</b>: сверено с { $cases } опубликованными замерами реальных запусков (инференс, LoRA/QLoRA и полное обучение, SDXL и FLUX): медианная ошибка { NUMBER($median, minimumFractionDigits: 1, maximumFractionDigits: 1) }%, а на { $stated_cases } замерах с известными настройками — { NUMBER($stated_median, minimumFractionDigits: 1, maximumFractionDigits: 1) }%, каждый из них в пределах ±25%. Простые правила (веса × 1,2, × 4 для Adam) на тех же случаях ошибаются на { NUMBER($rules, minimumFractionDigits: 1, maximumFractionDigits: 1) }% (на замерах с известными настройками — на { NUMBER($stated_rules, minimumFractionDigits: 1, maximumFractionDigits: 1) }%). Таблица — в docs/estimator.md.
    Оценка — не гарантия: фреймворки и версии различаются, оставляйте запас.
lang-choose = Выберите язык:
lang-set = Язык: русский 🇷🇺
lang-ru = Русский
lang-en = English

cmd-start = Посчитать модель: пошаговый диалог
cmd-new = Начать заново
cmd-help = Как пользоваться ботом
cmd-lang = Язык
cmd-about = Как считается оценка
cmd-cancel = Прервать диалог

## Группы и поток сообщений от одного человека

group-private-only = Я считаю видеопамять в личном чате: откройте его кнопкой. Здесь, в группе, упомяните меня с вопросом: <code>@{ $bot } llama 3.1 70b int4 32k</code>.
btn-open-private = 💬 Открыть чат с ботом
throttled = Слишком много сообщений сразу: я отвечаю примерно на одно в секунду. Подождите немного и пришлите вопрос ещё раз.
