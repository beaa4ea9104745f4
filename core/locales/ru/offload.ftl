# Выгрузка в оперативную память в llama.cpp (core/offload.py, issue 22)
assumption-offload_gguf = Выгрузка в оперативку — это llama.cpp: файл GGUF { $precision }.
assumption-offload_dense_layers = У плотной модели нет экспертов: в оперативку уходят целые слои (-ngl).
assumption-offload_ram_bandwidth_assumed = Пропускная способность памяти сервера в предложении не указана: принято { $ram_bandwidth_gb_s } ГБ/с (четыре канала DDR4-3200).
offload-experts = 🧠 Выгрузка в оперативку (llama.cpp) на { $config }: все слои на GPU, эксперты { $n_cpu_moe } из { $moe_layers } слоёв в оперативке — --n-cpu-moe { $n_cpu_moe }
offload-experts-layers = 🧠 Выгрузка в оперативку (llama.cpp) на { $config }: эксперты всех слоёв в оперативке и на GPU { $gpu_layers } из { $total_layers } слоёв — --cpu-moe -ngl { $gpu_layers }
offload-layers = 🧠 Выгрузка в оперативку (llama.cpp) на { $config }: на GPU { $gpu_layers } из { $total_layers } слоёв, остальные в оперативке — -ngl { $gpu_layers }
offload-not-needed = ✅ Влезает в { $config } без выгрузки: все { $total_layers } слоёв на GPU (-ngl { $total_layers })
offload-none = ❌ Не влезает в { $config } даже со всеми слоями в оперативке: { $need } на карту из { $usable }
offload-memory = GPU: { $need } на карту из { $usable } (всё на GPU: { $full }) · оперативка: { $ram }
offload-speed-assumed = ⚡ ~{ NUMBER($tps) } токенов/с (всё на GPU: ~{ NUMBER($full) }), промпт ~{ NUMBER($prefill) } токенов/с; память сервера { $bandwidth } ГБ/с — допущение. Модель скорости: замеры llama.cpp (llmfit #755, #778; ik_llama.cpp #841)
offload-speed-offer = ⚡ ~{ NUMBER($tps) } токенов/с (всё на GPU: ~{ NUMBER($full) }), промпт ~{ NUMBER($prefill) } токенов/с; память сервера { $bandwidth } ГБ/с. Модель скорости: замеры llama.cpp (llmfit #755, #778; ik_llama.cpp #841)
offload-speed-request = ⚡ ~{ NUMBER($tps) } токенов/с (всё на GPU: ~{ NUMBER($full) }), промпт ~{ NUMBER($prefill) } токенов/с; память { $bandwidth } ГБ/с, как указано. Модель скорости: замеры llama.cpp (llmfit #755, #778; ik_llama.cpp #841)
action-offload_experts = llama.cpp с экспертами { $n_cpu_moe } слоёв в оперативке ({ $precision }, --n-cpu-moe { $n_cpu_moe }): медленнее, см. скорость
action-offload_layers = llama.cpp: { $gpu_layers } слоёв на GPU, остальные в оперативке ({ $precision }, -ngl { $gpu_layers }): в разы медленнее
solve-found-gpu_layers = 🧠 Больше всего слоёв на GPU для { $config } (llama.cpp -ngl): { $value }
solve-none-gpu_layers = ❌ На { $config } не влезет ничего: даже { $value } слоёв на GPU — это { $need } на карту из { $usable }
