# Выгрузка в оперативную память в llama.cpp (core/offload.py, issue 22)
assumption-offload_gguf = Выгрузка в оперативку — это llama.cpp: файл GGUF { $precision }.
assumption-offload_dense_layers = У плотной модели нет экспертов: в оперативку уходят целые слои (-ngl).
assumption-offload_ram_bandwidth_assumed = Пропускная способность памяти сервера в предложении не указана: принято { $ram_bandwidth_gb_s } ГБ/с (четыре канала DDR4-3200).
