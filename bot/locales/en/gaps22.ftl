# /about: pasted logs (issue 22 item 8; core/logs, bot/handlers/pasted_logs.py)
about-logs = <b>Logs</b>: send, as text or a .txt/.log file (up to { $limit_mb } MB), a PyTorch “CUDA out of memory” error, an nvidia-smi table or a vLLM / llama.cpp start-up log — the bot names the card, what was in use and what failed, what to change (--max-model-len, --gpu-memory-utilization, -ngl, expandable_segments) and what to rent. The numbers are the log's own, exact as printed; the memory an OOM needs is a lower bound (“at least”): the log names only the allocation that failed. Not read: a log split over several messages, ROCm and Ollama lines.

# The guided dialog for a speech model (Whisper): windows at once instead of the context and users
ask-batch_size-speech = <b>How many 30-second audio windows at once</b> (faster-whisper / transformers batch_size)? Whisper's context is fixed, so it is not asked. Or type a number.
hint-batch_size-speech = Type a number of windows, like <code>8</code>, or pick a button.

# A log sent as a file (bot/handlers/pasted_logs.py)
log-file-too-big = The file { $name } is too big ({ $size }): I read logs up to { $limit }. Send the log's head and tail (the start-up and the error) as a smaller file or as text.
log-file-not-text = The file { $name } is not a text log. I read .txt and .log files: a PyTorch “CUDA out of memory” error, nvidia-smi output, a vLLM or llama.cpp start-up log. You can also paste the log's text into a message.
