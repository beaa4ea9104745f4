# llama.cpp offload to host RAM (core/offload.py, issue 22)
assumption-offload_gguf = Offload to RAM runs in llama.cpp: a { $precision } GGUF file.
assumption-offload_dense_layers = A dense model has no experts to move: whole layers go to RAM (-ngl).
assumption-offload_ram_bandwidth_assumed = The server's RAM bandwidth is not in the offer: { $ram_bandwidth_gb_s } GB/s assumed (quad-channel DDR4-3200).
offload-experts = 🧠 Offload to RAM (llama.cpp) on { $config }: every layer on the GPU, the experts of { $n_cpu_moe } of { $moe_layers } layers in RAM — --n-cpu-moe { $n_cpu_moe }
offload-experts-layers = 🧠 Offload to RAM (llama.cpp) on { $config }: the experts of every layer in RAM and { $gpu_layers } of { $total_layers } layers on the GPU — --cpu-moe -ngl { $gpu_layers }
offload-layers = 🧠 Offload to RAM (llama.cpp) on { $config }: { $gpu_layers } of { $total_layers } layers on the GPU, the rest in RAM — -ngl { $gpu_layers }
offload-not-needed = ✅ Fits { $config } without offload: all { $total_layers } layers on the GPU (-ngl { $total_layers })
offload-none = ❌ Does not fit { $config } even with every layer in RAM: { $need } per card of { $usable }
offload-memory = GPU: { $need } per card of { $usable } (all on the GPU: { $full }) · RAM: { $ram }
offload-speed-assumed = ⚡ ~{ NUMBER($tps) } tokens/s (all on the GPU: ~{ NUMBER($full) }), prompt ~{ NUMBER($prefill) } tokens/s; RAM { NUMBER($bandwidth) } GB/s assumed. Speed model: llama.cpp runs (llmfit #755, #778; ik_llama.cpp #841)
offload-speed-offer = ⚡ ~{ NUMBER($tps) } tokens/s (all on the GPU: ~{ NUMBER($full) }), prompt ~{ NUMBER($prefill) } tokens/s; the server's RAM: { NUMBER($bandwidth) } GB/s. Speed model: llama.cpp runs (llmfit #755, #778; ik_llama.cpp #841)
offload-speed-request = ⚡ ~{ NUMBER($tps) } tokens/s (all on the GPU: ~{ NUMBER($full) }), prompt ~{ NUMBER($prefill) } tokens/s; RAM { NUMBER($bandwidth) } GB/s as given. Speed model: llama.cpp runs (llmfit #755, #778; ik_llama.cpp #841)
action-offload_experts = llama.cpp with the experts of { $n_cpu_moe } layers in RAM ({ $precision }, --n-cpu-moe { $n_cpu_moe }): slower, see the speed
action-offload_layers = llama.cpp with { $gpu_layers } layers on the GPU, the rest in RAM ({ $precision }, -ngl { $gpu_layers }): several times slower
solve-found-gpu_layers = 🧠 Most layers on the GPU of { $config } (llama.cpp -ngl): { $value }
solve-none-gpu_layers = ❌ Nothing fits { $config }: even { $value } layers on the GPU need { $need } per card of { $usable }
