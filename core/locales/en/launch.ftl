# Time to first token and load (core/language/answer_latency.py), the launch command (core/layouts/launch.py).

latency-ttft = First token: ~{ NUMBER($ttft, maximumFractionDigits: 2) } s for a prompt of { NUMBER($tokens) } tokens on { $config } (prefill { NUMBER($prefill, maximumFractionDigits: 2) } s at { $mfu }% of { NUMBER($tflops) } TFLOPS per card)
latency-load = ⏱ { NUMBER($rps, maximumFractionDigits: 2) } requests a second{ $target ->
    [none] {""}
   *[other] , first token under { NUMBER($target, maximumFractionDigits: 2) } s
}: { $servers } { $servers ->
    [one] server
   *[other] servers
} of { $config } ({ $cards } { $cards ->
    [one] card
   *[other] cards
} in all)
latency-load-detail = First token ~{ NUMBER($ttft, maximumFractionDigits: 2) } s on average: prefill { NUMBER($prefill, maximumFractionDigits: 2) } s of a prompt of { NUMBER($tokens) } tokens + a wait of { NUMBER($wait, maximumFractionDigits: 2) } s in line; each server busy { $busy }% of the time, ~{ NUMBER($inflight, maximumFractionDigits: 1) } requests at once
latency-load-memory = Each server's KV cache holds { $max } requests at once: that sets the count.
latency-load-unmet = ⚠️ No number of servers gets the first token under { NUMBER($target, maximumFractionDigits: 2) } s: one prompt of { NUMBER($tokens) } tokens alone takes { NUMBER($ttft, maximumFractionDigits: 2) } s on { $config }. Shorten the prompt or take faster cards.
latency-load-model = How: prefill at { $mfu }% of the card's peak (a published measurement), each server one prompt at a time (M/D/1 queue), { NUMBER($output) } tokens generated per request at one user's speed.

launch-title = ⌨️ Launch command
launch-engine-vllm = vLLM
launch-engine-llama_cpp = llama.cpp (llama-server)
launch-engine-ollama = Ollama (Modelfile)
launch-engine-transformers = transformers (Python)
launch-engine-accelerate = Training: accelerate launch
launch-placeholder = Replace { $file } with your own file.
launch-none = No launch command for this answer: it is given for language models with a named checkpoint.
launch-sized = As sized: { $settings }.

field-requests_per_second = requests a second
field-ttft_target_s = time to first token, seconds
latency-ttft-users = ; with { $users } users sending at once, the last one's first token comes ~{ NUMBER($wait, maximumFractionDigits: 2) } s later (prefills run one at a time)
