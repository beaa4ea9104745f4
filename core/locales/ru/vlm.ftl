# Vision-language and speech models (issue 22 items 3, 4): labels and notes of core/sizing/defaults_multimodal.py.
engine-ctranslate2 = faster-whisper (CTranslate2)
component-vision_encoder = кодировщик изображений
component-speech_state = окна аудио: кэши декодера и выход кодировщика
assumption-vision_text_only = Модель видит картинки, но в запросе их нет: считаю только текст. Каждая картинка до { $megapixels } Мп добавит ~{ $tokens } { $tokens ->
    [one] токен
    [few] токена
   *[many] токенов
} в контекст — напишите, например, «с 2 картинками».
assumption-vision_images = { $images } { $images ->
    [one] картинка
    [few] картинки
   *[many] картинок
} в запросе, каждая до { $megapixels } Мп = ~{ $tokens } { $tokens ->
    [one] токен
    [few] токена
   *[many] токенов
} в KV-кэше; меньше max_pixels — меньше токенов.
assumption-speech_windows = Распознавание окнами по { $seconds } с: { $windows } { $windows ->
    [one] окно
    [few] окна
   *[many] окон
} за раз, лучей поиска (beam) { $beams }, до { $tokens } токенов текста на окно.
setting-prompt-images = { $count } { $count ->
    [one] картинка
    [few] картинки
   *[many] картинок
} в запросе
setting-beam = beam { $count }
setting-windows = { $count } { $count ->
    [one] окно
    [few] окна
   *[many] окон
} по 30 с за раз
action-shrink_images = уменьшить картинки до ~1 Мп (max_pixels { NUMBER($max_pixels, useGrouping: 0) })
action-fewer_prompt_images = { $images } { $images ->
    [one] картинка
    [few] картинки
   *[many] картинок
} в запросе (--limit-mm-per-prompt)
field-images_per_prompt = число картинок в запросе
field-max_pixels = размер картинки (max_pixels)
field-beam_size = число лучей поиска (beam)
assumption-vision_vllm_profile = vLLM при старте прогоняет кодировщик на самой большой картинке (~{ $tokens } { $tokens ->
    [one] токен
    [few] токена
   *[many] токенов
}, { $megapixels } Мп) и держит под это память, даже если картинок не будет; меньше — через --mm-processor-kwargs '{"{"}"max_pixels": …{"}"}'.
action-fewer_windows = расшифровывать { $windows } { $windows ->
    [one] окно
    [few] окна
   *[many] окон
} по 30 с за раз (batch_size)
