# /about: pasted logs (issue 22 item 8; core/logs, bot/handlers/pasted_logs.py)
about-logs = <b>Логи</b>: пришлите текстом или файлом .txt/.log (до { $limit_mb } МБ) ошибку PyTorch «CUDA out of memory», таблицу nvidia-smi или лог запуска vLLM / llama.cpp — бот назовёт карту, сколько было занято и что не поместилось, скажет, что поменять (--max-model-len, --gpu-memory-utilization, -ngl, expandable_segments), и что арендовать. Цифры — из самого лога, точно как напечатаны; сколько нужно памяти при OOM — оценка снизу («не меньше»): лог называет только неудавшееся выделение. Не читаем: лог из нескольких сообщений, строки ROCm и Ollama.

# The guided dialog for a speech model (Whisper): windows at once instead of the context and users
ask-batch_size-speech = <b>Сколько 30-секундных окон аудио расшифровывать одновременно</b> (batch_size у faster-whisper / transformers)? Контекст у Whisper фиксирован, его не спрашиваем. Или напишите число.
hint-batch_size-speech = Напишите число окон, например <code>8</code>, или выберите кнопку.

# A log sent as a file (bot/handlers/pasted_logs.py)
log-file-too-big = Файл { $name } слишком большой ({ $size }): я читаю логи до { $limit }. Пришлите начало и конец лога (там старт и ошибка) — файлом поменьше или текстом.
log-file-not-text = Файл { $name } — не текстовый лог. Я читаю файлы .txt и .log: ошибку PyTorch «CUDA out of memory», вывод nvidia-smi, лог запуска vLLM или llama.cpp. Можно и вставить текст лога в сообщение.
