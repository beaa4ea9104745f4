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
btn-change-seq_len = Другая длина примеров
btn-change-resolution = Другое разрешение
btn-change-method = Другой метод
btn-details = 📋 Подробнее
btn-open-bot = 🤖 Подробно в боте

## The quote form (bot/handlers/leads.py) and the sales chat's card (bot/leads.py)
btn-quote = ✉️ Оставить заявку
cmd-contact = Оставить заявку менеджеру
lead-ask-contact = ✉️ <b>Заявка менеджеру</b>
    { $config }

    Как с вами связаться? Нажмите кнопку ниже или напишите e-mail или телефон. /cancel — отменить.
lead-config = Конфигурация: { $config }
lead-no-config = Без конфигурации: менеджер уточнит задачу.
btn-lead-username = ✈️ Пишите в Telegram (@{ $username })
btn-lead-phone = 📱 Отправить мой телефон
lead-bad-contact = Не похоже на e-mail или телефон. Напишите, например, <code>name@example.com</code> или <code>+7 916 123-45-67</code> — или нажмите кнопку ниже.
lead-foreign-contact = Это чужой контакт. Нажмите «📱 Отправить мой телефон» или напишите свой e-mail или телефон.
lead-ask-comment = Комментарий для менеджера? Например, сроки или бюджет. Или нажмите «Без комментария».
btn-lead-skip = Без комментария
lead-what-contact = • Связь: { $contact }
lead-what-comment = • Комментарий: { $comment }
lead-what-config = • Конфигурация: { $config }
lead-what-answer = • Ответ бота: { $answer }
lead-what-none = • Конфигурация: не выбрана
lead-cancelled = Заявка отменена.
lead-kind-username = Telegram
lead-kind-phone = Телефон
lead-kind-email = E-mail
lead-card-title = 📩 <b>Новая заявка #{ $id }</b>
lead-card-who = 👤 { $name } · { $username } · { $link } · язык { $language } · источник { $source }
lead-card-contact = 📞 { $kind }: { $contact }
lead-card-comment = 💬 { $comment }
lead-card-config = ⚙️ { $config }
lead-card-answer = { $answer }
lead-card-recommended = 🚀 Рекомендация: { $config }, { $price } (предложение { $offer })
lead-card-no-config = ⚙️ Конфигурация не выбрана (заявка до первого расчёта)
lead-card-when = 🕒 { $when }


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
hf-not-found = Не нашёл модель <b>{ $model }</b> на Hugging Face (или доступ к ней закрыт). Проверьте название, например <code>Qwen/Qwen3-8B</code>, или напишите размер модели: <code>8B</code>.
hf-unavailable = Hugging Face не ответил за { $seconds } с, и я не смог прочитать <b>{ $model }</b>. Попробуйте через минуту или напишите размер модели: <code>8B</code>.
hf-unsupported = <b>{ $model }</b> есть на Hugging Face, но её config.json — не языковая модель, которую я умею считать. Напишите её размер (<code>8B</code>): посчитаю по типичной архитектуре.
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
    /prices — цены на аренду · /contact — заявка менеджеру
    /new — заново · /lang — язык · /about — как считается · /cancel — прервать диалог
about =
    <b>Как считается оценка</b>
    Пиковая память на GPU — сумма частей: веса в выбранной точности (для GGUF/AWQ/NF4 — реальные биты на вес), KV-кэш по архитектуре модели (GQA, скользящее окно, MLA), активации, градиенты и состояния оптимизатора при обучении, текстовые энкодеры и декодирование VAE для диффузии, плюс контекст CUDA и резерв аллокатора.
    Доступная память GPU — та, что показывает драйвер, а не число на коробке. Размеры — в ГБ, как в названиях карт: 1 ГБ = 2³⁰ байт (у «RTX 4090 48 GB» ровно 48 ГБ; так же считают nvidia-smi и PyTorch).
    <b>Точность</b>: сверено с { $cases } опубликованными замерами реальных запусков (инференс LLM в transformers и vLLM, LoRA/QLoRA и полное обучение, генерация изображений и видео): медианная ошибка { NUMBER($median, minimumFractionDigits: 1, maximumFractionDigits: 1) }%, 9 из 10 — в пределах { NUMBER($p90, minimumFractionDigits: 1, maximumFractionDigits: 1) }%, а на { $stated_cases } замерах с известными настройками — { NUMBER($stated_median, minimumFractionDigits: 1, maximumFractionDigits: 1) }%. Простые правила (веса × 1,2, × 4 для Adam) на тех же случаях ошибаются на { NUMBER($rules, minimumFractionDigits: 1, maximumFractionDigits: 1) }% (на замерах с известными настройками — на { NUMBER($stated_rules, minimumFractionDigits: 1, maximumFractionDigits: 1) }%). Диапазон ± в каждом ответе — 90-й процентиль ошибки для его вида нагрузки (от { NUMBER($range_low, minimumFractionDigits: 1, maximumFractionDigits: 1) }% до { NUMBER($range_high, minimumFractionDigits: 1, maximumFractionDigits: 1) }% по { $classes } замеренным видам), шире, если запрос выходит за замеренное. Таблица по видам — в docs/accuracy.md.
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
cmd-stats = Цифры продаж: 7, 30 дней, всё время
cmd-export = Пользователи, диалоги, заявки в CSV
cmd-link = Ссылка для источника: /link имя
cmd-offers = Действующие предложения; /offers reload

## Группы и поток сообщений от одного человека

group-private-only = Я считаю видеопамять в личном чате: откройте его кнопкой. Здесь, в группе, упомяните меня с вопросом: <code>@{ $bot } llama 3.1 70b int4 32k</code>.
btn-open-private = 💬 Открыть чат с ботом
throttled = Слишком много сообщений сразу: я отвечаю примерно на одно в секунду. Подождите немного и пришлите вопрос ещё раз.

## Команды администратора (только ADMIN_IDS; остальным — ответ как на неизвестную команду)

admin-stats-7d = 📊 <b>Последние 7 дней</b>
admin-stats-30d = 📊 <b>Последние 30 дней</b>
admin-stats-all = 📊 <b>За всё время</b>
admin-stats-total = Пользователей: <b>{ $users }</b> · диалогов: <b>{ $started }</b>, завершено <b>{ $completed }</b>
    Заявок: <b>{ $leads }</b> (в очереди на отправку: { $pending }, не доставлено: { $failed }) · конверсия <b>{ $conversion }</b>
admin-stats-by-source = <b>По источникам ссылок</b> (пользователи · диалоги/завершено · заявки · конверсия)
admin-stats-by-task = <b>По задачам</b> (диалоги/завершено · заявки · конверсия)
admin-stats-by-gpu = <b>По рекомендованной GPU</b> (завершено · заявки · конверсия)
admin-stats-row-source = • { $name }: { $users } · { $started }/{ $completed } · { $leads } · { $conversion }
admin-stats-row-task = • { $name }: { $started }/{ $completed } · { $leads } · { $conversion }
admin-stats-row-gpu = • { $name }: { $completed } · { $leads } · { $conversion }
admin-stats-no-link = (без ссылки)
admin-stats-no-task = (до ответа)
admin-stats-no-gpu = (ничего не подходит)
admin-stats-more = • … ещё { $count }: см. /export
admin-stats-nothing = пока ничего
admin-export-caption = <b>{ $file }</b>: строк { $rows }. UTF-8 с BOM, столбцы через «;» (открывается в Excel двойным щелчком); время — UTC.
admin-link = Ссылка для источника <code>{ $source }</code>:
    { $link }
    Пришли по ней впервые: <b>{ $users }</b>.
admin-link-usage = Так: <code>/link источник</code>, например <code>/link habr_2025</code>. Источник — от 1 до 64 символов A–Z, a–z, 0–9, _ и -.
admin-link-invalid = <code>{ $source }</code> не годится в источник: от 1 до 64 символов A–Z, a–z, 0–9, _ и - (правило Telegram для ссылок start).
admin-offers-title = <b>Действующие предложения</b> ({ $count }, { $file }):
admin-offers-row = • <code>{ $id }</code>: { $config }, { $price }
admin-offers-builtin = встроенный файл
admin-offers-more = • … ещё { $count } (см. файл)
admin-offers-hint = <code>/offers reload</code> перечитывает OFFERS_FILE; файл сначала проверяется, с ошибкой — остаются эти.
admin-offers-no-file = OFFERS_FILE не задан: действуют встроенные предложения, перечитывать нечего.
admin-offers-bad = ❌ Не перечитано, действуют прежние предложения:
    <code>{ $error }</code>
admin-offers-reloaded = ✅ Перечитан { $file }.
admin-offers-usage = <code>/offers</code> — действующие предложения, <code>/offers reload</code> — перечитать OFFERS_FILE.

## sales: цены и кнопки продаж (slice "sales")
cmd-prices = Цены на аренду серверов
btn-ask-price = 💬 Узнать цену
## dialog: refusals at a step (bot/handlers/wizard.py, bot/dialog.py)
step-wrong-kind = { $model } — { $kind ->
    [image] модель для картинок
    [video] модель для видео
   *[other] языковая модель
}, а здесь нужна { $wanted ->
    [image] модель для картинок
    [video] модель для видео
   *[other] языковая модель (LLM)
}. Выберите кнопку ниже или напишите другое название.
step-size-not-allowed = Размер (<code>13B</code>) описывает языковую модель, а здесь нужна { $kind ->
    [image] модель для картинок
   *[other] модель для видео
}: выберите кнопку ниже или напишите её название.
step-out-of-range = Не могу посчитать «{ $what }»: можно от { $low } до { $high }. Исправьте число.
ask-model-generation = <b>Какая модель?</b>
    Выберите ниже или напишите её название.
hint-model-generation = Не узнал модель. Напишите её название (<code>flux dev</code>, <code>wan 2.1 14b</code>) или выберите кнопку.
## understand (issue 25): replies to text that asks no sizing question (bot/asides.py)
understand-chit-chat = 👋 Я считаю, сколько видеопамяти нужно модели и какой сервер под неё арендовать. Напишите модель и задачу, например <code>llama 3.1 8b int4 на 4090 48</code>, — или /start для пошагового диалога.
understand-off-topic-render = Серверы для 3D-рендеринга и симуляций мы подбираем отдельно: этот бот считает только ML-модели. Оставьте заявку — менеджер предложит конфигурацию.
understand-off-topic-hardware = Мы сдаём GPU-серверы в аренду, оборудование не продаём. Нужна долгая аренда или особая конфигурация — оставьте заявку, менеджер ответит.
understand-off-topic-billing = Оплату, договор и документы обсуждает менеджер. Оставьте заявку — он свяжется с вами.
understand-unsized-speech = Эту модель синтеза речи я пока не считаю (считаю Bark, XTTS-v2 и F5-TTS, а для распознавания речи — Whisper). Оставьте заявку — менеджер подберёт сервер, или напишите /contact.
## leads slice: honest lead status, follow-up notes, undelivered leads (bot/handlers/leads.py, bot/outbox.py, /leads)
lead-saved = 📝 Заявка #{ $id } сохранена, мы передадим её менеджеру.

    В заявке:
    { $what }
lead-accepted = ✅ Заявка #{ $id } принята, менеджер свяжется с вами.

    В заявке:
    { $what }
lead-already-saved = 📝 Эта заявка уже сохранена (#{ $id }), повторять не нужно: мы передадим её менеджеру.

    В заявке:
    { $what }
lead-already-accepted = ✅ Эта заявка уже принята (#{ $id }), повторять не нужно: менеджер свяжется с вами.

    В заявке:
    { $what }
lead-joined = 📝 Добавили это к вашей заявке #{ $id }: менеджер увидит всё вместе и свяжется с вами. Новых заявок — не больше { $limit } в час, остальное дописываем в последнюю.

    Добавлено:
    { $what }
lead-card-note = ➕ { $when }, дополнение: { $what }
lead-admin-alert = ⚠️ <b>Заявки не доходят до чата продаж</b>: { $count } ({ $leads }).
    Ошибка: <code>{ $error }</code>
    Бот повторяет попытки ещё до { $days } дн. с момента заявки. /leads — список, /leads resend — отправить снова.
cmd-leads = Недоставленные заявки
admin-leads-title = <b>Не доставлено заявок: { $count }</b>
admin-leads-row = • #{ $id } от { $created } · { $status } · попыток: { $attempts } · { $error }
admin-leads-more = • … ещё { $count }
admin-leads-status-pending = в очереди
admin-leads-status-updated = дополнение в очереди
admin-leads-status-failed = не доставлена
admin-leads-hint = <code>/leads resend</code> — отправить все снова сейчас.
admin-leads-none = ✅ Все заявки доставлены.
admin-leads-resent = 🔁 Снова в очереди: { $count }. Отправляем сейчас; что не дойдёт — покажет /leads.
admin-leads-no-chat = SALES_CHAT_ID не задан: заявки хранятся в базе, отправлять их некуда.
admin-leads-usage = <code>/leads</code> — недоставленные заявки, <code>/leads resend</code> — отправить их снова.
## slice "hub": Hugging Face ids the Hub cannot have, configs refused (bot.hf_models, core.model.checks)
hf-not-a-hub-id = <b>{ $model }</b> не может быть моделью на Hugging Face: в её названии только латинские буквы, цифры, «-», «_» и «.», например <code>Qwen/Qwen3-8B</code>. Проверьте название или напишите размер модели: <code>8B</code>.
hf-refused-range = Не буду считать <b>{ $model }</b>: в её config.json <code>{ $field } = { $value }</code>, такого не бывает ни у одной модели (допустимо от { $least } до { $most }). Напишите размер модели: <code>8B</code>.
hf-refused-inconsistent = Не буду считать <b>{ $model }</b>: её config.json (<code>{ $field }</code>) не сходится с числом параметров ({ $params }). Напишите размер модели: <code>8B</code>.
hf-refused-malformed = Не буду считать <b>{ $model }</b>: <code>{ $field }</code> на Hugging Face — не config, который я могу прочитать (не число, слишком глубокая вложенность или слишком большой файл). Напишите размер модели: <code>8B</code>.
## slice "offers" (issue 19, item 9): the answer pictures in /stats
admin-stats-pictures = <b>Картинки к ответам</b> с запуска этого процесса бота: отправлено <b>{ $sent }</b> · пропущено под нагрузкой <b>{ $skipped }</b> · не удалось { $failed }
## slice "crm" (issue 23, item 1): the CRM push
crm-title-plain = Заявка #{ $id } из Telegram
crm-source = Telegram-бот, источник: { $source }
crm-earlier-leads = Повторное обращение, прежние лиды: { $ids }
crm-admin-alert = ⚠️ <b>Заявки не доходят до CRM</b> ({ $crm }): { $count } ({ $leads }).
    Ошибка: <code>{ $error }</code>
    Бот повторяет попытки ещё до { $days } дн. с момента заявки; в чат продаж они идут как обычно.

## avail (issue 23): offer availability set by admins
admin-offers-sold_out = ⛔ сейчас занято
admin-offers-on_request = по запросу
admin-offers-switch-hint = <code>/offers off id</code> — сервер занят (не рекомендуется), <code>/offers on id</code> — свободен, <code>/offers request id</code> — только по запросу. Хранится в базе: видят все копии бота и после перезапуска.
admin-offers-unknown = Нет таких предложений: { $ids }. Есть: { $known }
admin-offers-switched = ✅ { $ids }: { $availability ->
    [sold_out] сейчас занято — в ответах не рекомендуется
    [on_request] только по запросу
   *[available] свободно
}.
btn-reserve = 📅 Забронировать
btn-hold-hours = Как можно скорее, на несколько часов
btn-hold-months = Как можно скорее, на месяц и дольше
reserve-ask-hold = 📅 <b>Бронь: { $config }</b> (предложение <code>{ $offer }</code>)
    Когда и на сколько? Нажмите кнопку или напишите даты и срок, например «с 10 по 20 декабря» или «с понедельника на 3 месяца». /cancel — отменить.
lead-what-reservation = • Бронь: { $offer }, { $hold }
lead-card-reservation = 📅 <b>Бронь</b> предложения { $offer }: { $hold }
## slice "currency" (issue 23, items 6 and 7): the currency of prices, rent or buy, personal links
cmd-currency = Валюта цен: /currency KZT
cmd-ref = Ваша ссылка для друзей и коллег
currency-help-ref = /currency — валюта цен · /ref — ваша ссылка, чтобы позвать коллег: { $link }
currency-ref =
    Ваша ссылка: { $link }
    Кто придёт по ней, засчитается как приведённый вами. Уже пришли: { $users }.
currency-current = Цены показываются в { $currency }, где у предложения есть цена в этой валюте, иначе в основной валюте предложения. Сменить: <code>/currency KZT</code>. Есть: { $choices }.
currency-unknown = Цен в «{ $currency }» у нас нет. Есть: { $choices } — например, <code>/currency KZT</code>.
currency-set = ✅ Цены теперь в { $currency } — там, где у предложения есть цена в этой валюте; остальные в основной валюте, без пересчёта.
currency-stats-referrers = <b>Кто кого привёл</b> (по личным ссылкам, за всё время: пришло · заявок)
currency-stats-referrer = • { $name }: { $users } · { $leads }
currency-rentbuy-title = <b>Купить или арендовать { $config }</b>
currency-rentbuy-workload = Нагрузка: { $hours } ч в месяц.
currency-rentbuy-around-the-clock = Нагрузка: круглосуточно, { $hours } ч в месяц (напишите, например, «купить или арендовать на 200 часов в месяц»).
currency-rentbuy-rent = Аренда: { NUMBER($amount, maximumFractionDigits: 0) } { $currency } в месяц.
currency-rentbuy-buy = Покупка: { NUMBER($price, maximumFractionDigits: 0) } { $currency } сразу, плюс { NUMBER($running, maximumFractionDigits: 0) } { $currency } в месяц на электричество и размещение.
currency-rentbuy-break-even = Покупка окупится через { NUMBER($months, maximumFractionDigits: 1) } мес.; до этого аренда дешевле, и сервер не простаивает за ваш счёт.
currency-rentbuy-never = При такой нагрузке аренда дешевле, чем даже содержать свой сервер: покупка не окупится.
currency-rentbuy-hours = В месяце не больше { $most } часов: напишите, сколько часов в месяц нужен сервер, например «на 200 часов в месяц».
currency-rentbuy-which = Какой сервер сравнить? Сначала посчитайте модель (/start) или назовите карты: «купить или арендовать 8×H100».
currency-rentbuy-no-file = У меня нет цен покупки для { $config }, поэтому сравнить с арендой не могу. Оставьте заявку — менеджер посчитает аренду на ваш срок.
currency-rentbuy-no-row = Цены покупки { $config } в этой валюте у меня нет, сравнить с арендой не могу. Оставьте заявку — менеджер посчитает.
## slice "claims" (issue 23, items 2 and 5): "Беру" on the sales card, reminders, qualification, /stats
btn-lead-claim = ✋ Беру
lead-card-claimed = ✋ Взял(а): <b>{ $name }</b>, { $at } (через { $minutes } мин)
lead-card-need = 🗓 Когда: { $when } · срок: { $duration }
lead-claim-won = Заявка #{ $id } ваша.
lead-claim-mine = Заявка #{ $id } уже ваша.
lead-claim-taken = Заявку #{ $id } уже взял(а) { $name } в { $at }.
lead-reminder = ⏰ Заявка #{ $id } ждёт уже { $minutes } мин — никто не нажал «Беру».
lead-escalation = ⏰ <b>Заявки без ответственного</b> дольше { $minutes } мин: { $count } ({ $leads }). Никто в чате продаж не нажал «Беру».
need-ask-when = Чтобы менеджер подготовился: когда нужен сервер? (можно пропустить, заявка уже сохранена)
need-ask-for = На какой срок?
need-thanks = Спасибо, менеджер увидит это в заявке.
btn-need-when-today = Сегодня
btn-need-when-week = На этой неделе
btn-need-when-later = Позже
btn-need-for-hours = Часы
btn-need-for-weeks = Недели
btn-need-for-months = Месяцы
btn-need-skip = Пропустить
need-when-today = сегодня
need-when-week = на этой неделе
need-when-later = позже
need-for-hours = часы
need-for-weeks = недели
need-for-months = месяцы
admin-stats-claims-by-source = <b>Заявки в работе по источникам</b> (заявки · взято · медиана до «Беру», мин · конверсия)
admin-stats-claims-row = ◦ { $name }: { $leads } · { $claimed } · { $median } · { $conversion }
admin-stats-weeks = 📅 <b>По неделям</b>, последние { $weeks } (завершено · заявки · взято · медиана до «Беру», мин · конверсия)
admin-stats-week-row = • { $week }: { $completed } · { $leads } · { $claimed } · { $median } · { $conversion }
## slice "polish" (issue 25): a card named without its memory, switched with one tap
btn-card-switch = 🔁 На { $gpu }
