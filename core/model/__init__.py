"""The model a request names, as a `ModelSpec`: from the catalogue, a bare size, an architecture or a
Hugging Face id.

resolve        `resolve_model`: the one entry, whatever the request's `model` is
hub            the `Hub` a Hub model is read through (HTTP look-up, memory, huggingface_hub)
config         a config.json → `ModelSpec` (plus config_hybrid, config_vision: the layers it names)
checks         every number of a config checked before it is sized
safetensors    exact parameter counts from a checkpoint's header
"""
