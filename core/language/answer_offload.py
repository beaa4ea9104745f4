"""The lines of an offload answer (`Result.offload`, issue 22) in the user's language: what stays on
the GPU and the llama.cpp flag that does it, the memory on the card and in RAM, the speed with its
source. Plain text; `core.language.answer.build_answer` puts them first on the `Answer`, like an inverse
answer."""

from __future__ import annotations

from core.contract import Offload, Result
from core.language.cards import config_text
from core.language.phrases import format_bytes
from core.language.words import t


def _speed(x: float | None) -> float:
    if x is None:
        return 0
    return round(x, 1) if x < 10 else round(x)


def _config(off: Offload, lang: str) -> str:

    return config_text(off.count, off.gpu_name, lang)


def offload_lines(result: Result, lang: str) -> tuple[str, ...]:
    """'🧠 Offload to RAM on 1× RTX 4090 48 GB: …', the memory line and the speed line."""
    off = result.offload
    if off is None:
        return ()
    config = _config(off, lang)
    if not off.fits:
        head = t(
            "offload-none",
            lang,
            config=config,
            need=format_bytes(off.bytes_per_gpu, lang),
            usable=format_bytes(off.usable_bytes, lang),
        )
        return (head,)
    if off.n_cpu_moe == 0 and off.gpu_layers == off.total_layers:
        return (t("offload-not-needed", lang, config=config, total_layers=off.total_layers),)
    elif off.n_cpu_moe:
        key = "offload-experts" if off.gpu_layers == off.total_layers else "offload-experts-layers"
        head = t(
            key,
            lang,
            config=config,
            n_cpu_moe=off.n_cpu_moe,
            moe_layers=off.moe_layers,
            gpu_layers=off.gpu_layers,
            total_layers=off.total_layers,
        )
    else:
        head = t(
            "offload-layers", lang, config=config, gpu_layers=off.gpu_layers, total_layers=off.total_layers
        )
    memory = t(
        "offload-memory",
        lang,
        need=format_bytes(off.bytes_per_gpu, lang),
        usable=format_bytes(off.usable_bytes, lang),
        full=format_bytes(off.full_gpu_bytes_per_gpu, lang),
        ram=format_bytes(off.ram_bytes, lang),
    )
    speed = t(
        f"offload-speed-{off.ram_bandwidth_source}",
        lang,
        tps=_speed(off.tokens_per_s),
        full=_speed(off.full_gpu_tokens_per_s),
        prefill=_speed(off.prefill_tokens_per_s),
        bandwidth=off.ram_bandwidth_gb_s,
    )
    return (head, memory, speed)
