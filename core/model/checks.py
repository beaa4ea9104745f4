"""Every number a Hugging Face config.json (or the Hub's parameter counts) gives, checked against the
contract's bounds (`core.contract`: MAX_LAYERS, MAX_HEADS, ...) before anything is sized or cached.

A mirror, a typo or a hostile repository can publish zero attention heads, `1e308`, a billion layers
or a vocabulary of 10^30: each is refused with `ConfigRefused`, which names the key, the value and
what is allowed (`code` picks the sentence: range, inconsistent, malformed), instead of a crash or
an absurd answer kept for a month.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from core.contract import (
    ARCH_PARAMS_TOLERANCE,
    MAX_EXPERTS,
    MAX_HEAD_DIM,
    MAX_HEADS,
    MAX_HIDDEN_SIZE,
    MAX_INTERMEDIATE_SIZE,
    MAX_LAYERS,
    MAX_VOCAB_SIZE,
)
from core.errors import CoreError

MAX_PARAMS = 20_000 * 10**9  # CustomModel.params_b's bound (core.contract): 20 000 B
# A model's own context, not a request's: Llama 4 Scout's config says 10 485 760 (past the request's
# 10 M bound), so ten times that.
MAX_CONFIG_CONTEXT = 100_000_000
MAX_JSON_DEPTH = 32  # a config.json nests 3-4 levels (text_config, rope_scaling, quantization_config)
MAX_DTYPES = 32  # safetensors defines ~20 dtypes
# What the safetensors summary says may differ from the config's estimate (vision towers, norms and
# biases, the estimate's simplifications) but not by an order of magnitude.
COUNTS_TOLERANCE = 10.0
_SHOWN_CHARS = 32  # a refused value is shown cut to this many characters

# config.json key -> (least, most). Least 0: the key is optional and 0 (or null) means "not set",
# as transformers reads them (`config.get(key) or default`).
BOUNDS: dict[str, tuple[int, int]] = {
    "num_hidden_layers": (1, MAX_LAYERS),
    "num_layers": (1, MAX_LAYERS),
    "num_decoder_layers": (0, MAX_LAYERS),
    "hidden_size": (1, MAX_HIDDEN_SIZE),
    "d_model": (1, MAX_HIDDEN_SIZE),
    "num_attention_heads": (1, MAX_HEADS),
    "num_heads": (1, MAX_HEADS),
    "num_key_value_heads": (0, MAX_HEADS),
    "head_dim": (0, MAX_HEAD_DIM),
    "d_kv": (0, MAX_HEAD_DIM),
    "intermediate_size": (0, MAX_INTERMEDIATE_SIZE),
    "d_ff": (0, MAX_INTERMEDIATE_SIZE),
    "moe_intermediate_size": (0, MAX_INTERMEDIATE_SIZE),
    "vocab_size": (1, MAX_VOCAB_SIZE),
    "num_local_experts": (0, MAX_EXPERTS),
    "num_experts": (0, MAX_EXPERTS),
    "n_routed_experts": (0, MAX_EXPERTS),
    "num_experts_per_tok": (0, MAX_EXPERTS),
    "experts_per_token": (0, MAX_EXPERTS),
    "n_shared_experts": (0, MAX_EXPERTS),
    "first_k_dense_replace": (0, MAX_LAYERS),
    "max_position_embeddings": (0, MAX_CONFIG_CONTEXT),
    "sliding_window": (0, MAX_CONFIG_CONTEXT),
    "sliding_window_pattern": (0, MAX_LAYERS),
    "kv_lora_rank": (0, MAX_HIDDEN_SIZE),
    "q_lora_rank": (0, MAX_HIDDEN_SIZE),
    "qk_rope_head_dim": (0, MAX_HEAD_DIM),
    "qk_nope_head_dim": (0, MAX_HEAD_DIM),
    "v_head_dim": (0, MAX_HEAD_DIM),
}


class ConfigRefused(CoreError):
    """A config.json (or parameter count) no model has: not sized, not cached as found.

    `code` is stable for translation; `details` fill its sentence: range (field, value, least, most),
    inconsistent (field, params), malformed (field)."""

    def __init__(self, repo_id: str, code: str, **args: str) -> None:
        detail = ", ".join(f"{k}={v}" for k, v in args.items())
        super().__init__(f"{repo_id}: config.json refused ({code}: {detail})", field="model")
        self.repo_id, self.code, self.details = repo_id, code, args


def shown(value: Any) -> str:
    text = repr(value) if not isinstance(value, str) else value
    return text if len(text) <= _SHOWN_CHARS else text[: _SHOWN_CHARS - 1] + "…"


def whole(value: Any) -> int | None:
    """A JSON number (or digit string) that is a whole number, else None."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, float) and math.isfinite(value) and value.is_integer():
        return int(value)
    if isinstance(value, str) and value.isascii() and value.isdigit() and len(value) <= 12:
        return int(value)
    return None


def check_config(config: Mapping[str, Any], repo_id: str) -> None:
    """Raise `ConfigRefused` for the first key of `BOUNDS` (at the top or in `text_config`) that is
    not a whole number within its bounds, or for JSON nested past MAX_JSON_DEPTH."""
    if depth(config) > MAX_JSON_DEPTH:
        raise ConfigRefused(repo_id, "malformed", field="config.json")
    inner = config.get("text_config")
    for level in (config, inner if isinstance(inner, Mapping) else {}):
        for key, (least, most) in BOUNDS.items():
            value = level.get(key)
            if value is None or (least == 0 and value in (0, False)):
                continue
            number = whole(value)
            if number is None:
                raise ConfigRefused(repo_id, "malformed", field=key)
            if not max(least, 1) <= number <= most:
                raise ConfigRefused(
                    repo_id, "range", field=key, value=shown(value), least=str(max(least, 1)), most=str(most)
                )


def check_counts(counts: Any, repo_id: str) -> dict[str, int] | None:
    """The Hub's parameter counts per dtype as {dtype: count}; None when there are none."""
    if counts is None or counts == {}:
        return None
    if not isinstance(counts, Mapping) or len(counts) > MAX_DTYPES:
        raise ConfigRefused(repo_id, "malformed", field="safetensors.parameters")
    checked: dict[str, int] = {}
    for dtype, value in counts.items():
        number = whole(value)
        if not isinstance(dtype, str) or len(dtype) > 16 or number is None:
            raise ConfigRefused(repo_id, "malformed", field="safetensors.parameters")
        if not 0 <= number <= MAX_PARAMS:
            raise ConfigRefused(
                repo_id, "range", field=f"safetensors.parameters.{shown(dtype)}", value=shown(value),
                least="0", most=str(MAX_PARAMS),
            )  # fmt: skip
        checked[dtype] = number
    return checked


def check_sizes(arch: Mapping[str, Any], total: int, estimated: int, counted: bool, repo_id: str) -> None:
    """The architecture against the parameter count, as `core.contract.CustomModel` checks a custom
    model: layers × hidden² and vocab × hidden within ARCH_PARAMS_TOLERANCE of it; a count from the
    Hub within COUNTS_TOLERANCE of the config's estimate."""
    params = f"{total / 1e9:.3g}B"
    if not 0 < total <= MAX_PARAMS:
        raise ConfigRefused(repo_id, "inconsistent", field="num_hidden_layers, hidden_size", params=params)
    hidden = int(arch["hidden_size"])
    limit = ARCH_PARAMS_TOLERANCE * total
    if int(arch["layers"]) * hidden * hidden > limit:
        raise ConfigRefused(repo_id, "inconsistent", field="num_hidden_layers, hidden_size", params=params)
    if int(arch["vocab_size"]) * hidden > limit:
        raise ConfigRefused(repo_id, "inconsistent", field="vocab_size, hidden_size", params=params)
    if counted and not estimated / COUNTS_TOLERANCE <= total <= estimated * COUNTS_TOLERANCE:
        raise ConfigRefused(repo_id, "inconsistent", field="safetensors.parameters", params=params)


def depth(value: Any) -> int:
    """How deep JSON nests (iteratively: a hostile body must not exhaust the stack here)."""
    deepest, stack = 0, [(value, 1)]
    while stack:
        item, level = stack.pop()
        if isinstance(item, Mapping):
            children: Any = item.values()
        elif isinstance(item, list):
            children = item
        else:
            continue
        deepest = max(deepest, level)
        if deepest > MAX_JSON_DEPTH:
            return deepest
        stack.extend((child, level + 1) for child in children)
    return deepest
