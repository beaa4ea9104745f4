"""Reading the settings a text names: KV cache, optimizer, precision (and GGUF), sharding, attention,
offload, the VAE and checkpointing switches, LoRA rank, resolution, counts, sequence length, context
and a number of cards. Each match is taken from the text, so no word counts twice."""

from __future__ import annotations

import re

from core.contract import MAX_LAYERS, CpuOffload, KvPrecision, Method, OffloadMode, Precision
from core.errors import ParseError
from core.language.words import note
from core.parse.grammar import (
    _BARE_NUMBER,
    _CONTEXT,
    _GGUF_OF,
    _KV_CACHE,
    _LORA_RANK,
    _ON_CARDS,
    _RESOLUTION,
    _SEQ_LEN,
    _VIDEO_P,
)
from core.parse.patterns import Table, table_gate
from core.parse.text import (
    MAX_RESOLUTION_SIDE,
    MIN_BARE_NUMBER,
    MIN_RESOLUTION_SIDE,
    Fields,
    Reading,
    _number,
    _Text,
    _tokens_count,
)
from core.parse.vocabulary import Vocabulary, vocabulary


def _take_first(text: _Text, f: Fields, name: str, table: Table) -> None:
    gate = table_gate(table)  # one scan where no row is in the text, not one per row
    if gate is not None and gate.search(text.rest) is None:
        return
    for pattern, value in table:
        if text.take(pattern):
            f.setdefault(name, value)


def _read_ram_offload(text: _Text, f: Fields, table: Table) -> None:
    """llama.cpp offload to RAM ("с выгрузкой в оперативку", "--n-cpu-moe 30", "-ngl 40"); a number
    written right after the flag is its value: -ngl → gpu_layers, anything of experts → n_cpu_moe."""
    for pattern, mode in table:
        match = text.take(pattern)
        if match is None:
            continue
        number = next((g for g in match.groups() if g and g.isdigit()), None)
        if number is None:
            f.setdefault("offload", mode)
        else:
            name = "n_cpu_moe" if mode is OffloadMode.EXPERTS else "gpu_layers"
            f.setdefault(name, min(int(number), MAX_LAYERS))


def _flag(text: _Text, pattern: re.Pattern[str]) -> bool | None:
    match = text.take(pattern)
    return None if match is None else not match.group("neg")


def _read_settings(text: _Text, f: Fields, reading: Reading) -> None:
    """The settings a text names, each read in turn (what one reads, the next no longer sees)."""
    words = vocabulary()
    _read_kv_cache(text, f)
    _take_first(text, f, "optimizer", words.optimizers)
    _read_precision(text, f, reading, words)
    _take_first(text, f, "sharding", words.sharding)
    _take_first(text, f, "attention", words.attention)
    _read_ram_offload(text, f, words.ram_offload)
    _read_switches(text, f, words)
    _read_lora_rank(text, f)
    resolution = text.take(_RESOLUTION) or text.take(_VIDEO_P)
    if resolution:
        _set_resolution(f, _resolution(resolution), reading)
    _read_counts(text, f, words)
    on_cards = text.take(_ON_CARDS)
    if on_cards:
        f.setdefault("num_gpus", int(on_cards.group(1)))


def _read_kv_cache(text: _Text, f: Fields) -> None:
    for pattern in _KV_CACHE:
        match = text.take(pattern)
        if match:
            f.setdefault("kv_cache_precision", _kv_precision(match.group(1)))


def _read_precision(text: _Text, f: Fields, reading: Reading, words: Vocabulary) -> None:
    gguf = text.take(words.gguf) is not None
    _take_first(text, f, "precision", words.precisions)
    if gguf:  # "gguf" alone is Q4_K_M; "gguf 8bit" is its 8-bit type
        if "precision" not in f:
            reading.notes.append(note("parse_gguf_default"))
        precision = f.get("precision", Precision.INT4)
        f["precision"] = _GGUF_OF.get(precision, precision)


def _read_switches(text: _Text, f: Fields, words: Vocabulary) -> None:
    """What is switched on or off ("без offload", "vae tiling", "no gradient checkpointing")."""
    for pattern, offload in words.offload:
        enabled = _flag(text, pattern)
        if enabled is not None:
            f.setdefault("cpu_offload", offload if enabled else CpuOffload.NONE)
    for name, pattern in (
        ("vae_tiling", words.tiling),
        ("vae_slicing", words.slicing),
        ("gradient_checkpointing", words.checkpointing),
    ):
        enabled = _flag(text, pattern)
        if enabled is not None:
            f[name] = enabled


def _read_lora_rank(text: _Text, f: Fields) -> None:
    rank = text.take(_LORA_RANK)
    if rank:
        f["lora_rank"] = int(_number(rank.group(1) or rank.group(2)))
        if rank.group(0).startswith("lora"):  # "lora rank 64": the method named with its rank
            f.setdefault("method", Method.LORA)


def _read_counts(text: _Text, f: Fields, words: Vocabulary) -> None:
    """Counts with their noun ("4 картинки", "batch 8"), sequence lengths and contexts with their unit."""
    for name, patterns in words.counted:
        for pattern in patterns:
            match = text.take(pattern, _a_count if name in _PICTURE_COUNTS else lambda m: True)
            if match:
                f.setdefault(name, int(_number(match.group(1))))
    for name, patterns in (("seq_len", _SEQ_LEN), ("context_length", _CONTEXT)):
        for pattern in patterns:
            match = text.take(pattern)
            if match:
                f.setdefault(name, _tokens_count(match))


_PICTURE_COUNTS = ("images", "frames")


def _a_count(match: re.Match[str]) -> bool:
    """ "картинки 1024" is the resolution, not 1,024 images: a count of pictures is a small number."""
    return _number(match.group(1)) < MIN_BARE_NUMBER


def _kv_precision(word: str) -> KvPrecision:
    if word.startswith("8"):
        return KvPrecision.INT8
    if word.startswith("4"):
        return KvPrecision.INT4
    return KvPrecision(word)


def _resolution(match: re.Match[str]) -> tuple[int, int]:
    if match.re is _VIDEO_P:
        height = int(match.group(1))
        return (round(height * 16 / 9 / 16) * 16, height)  # "720p" is 16:9, sides multiples of 16
    if match.re is _BARE_NUMBER:
        side = int(_number(match.group(1)))
        return (side, side)
    return (int(_number(match.group(1))), int(_number(match.group(2))))


def _resolution_in_bounds(size: tuple[int, int]) -> bool:
    return min(size) >= MIN_RESOLUTION_SIDE and max(size) <= MAX_RESOLUTION_SIDE


def _set_resolution(f: Fields, size: tuple[int, int], reading: Reading) -> None:
    if not _resolution_in_bounds(size):
        if reading.error is None:
            code = "too_large" if max(size) > MAX_RESOLUTION_SIDE else "invalid"
            reading.error = ParseError(
                code, f"resolution {size[0]}x{size[1]} is out of range", field="resolution"
            )
        return
    f.setdefault("resolution", size)
