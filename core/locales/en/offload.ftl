# llama.cpp offload to host RAM (core/offload.py, issue 22)
assumption-offload_gguf = Offload to RAM runs in llama.cpp: a { $precision } GGUF file.
assumption-offload_dense_layers = A dense model has no experts to move: whole layers go to RAM (-ngl).
assumption-offload_ram_bandwidth_assumed = The server's RAM bandwidth is not in the offer: { $ram_bandwidth_gb_s } GB/s assumed (quad-channel DDR4-3200).
