# /about: pasted logs (issue 22 item 8; core/logs, bot/handlers/pasted_logs.py)
about-logs = <b>Logs</b>: send a PyTorch “CUDA out of memory” error, an nvidia-smi table or a vLLM / llama.cpp start-up log — the bot names the card, what was in use and what failed, what to change (--max-model-len, --gpu-memory-utilization, -ngl, expandable_segments) and what to rent. The numbers are the log's own, exact as printed; the memory an OOM needs is a lower bound (“at least”): the log names only the allocation that failed. Not read: a log split over several messages, ROCm and Ollama lines.

# The guided dialog for a speech model (Whisper): windows at once instead of the context and users
ask-batch_size-speech = <b>How many 30-second audio windows at once</b> (faster-whisper / transformers batch_size)? Whisper's context is fixed, so it is not asked. Or type a number.
hint-batch_size-speech = Type a number of windows, like <code>8</code>, or pick a button.
