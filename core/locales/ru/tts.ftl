# Синтез речи (issue 22, п. 4): подписи и пояснения core/tts_defaults.py, core/formulas/tts.py.
component-tts_state = синтез речи: кэш или рабочая память самой большой стадии
assumption-tts_stages = Стадии идут по очереди, загружены все сразу; посчитано на полный контекст каждой ({ $stages }), { $texts } { $texts ->
    [one] текст
    [few] текста
   *[many] текстов
} за раз.
