"""The parser's grammar: settings whose shape is fixed, not vocabulary — how a number carries its unit,
a KV-cache setting, a LoRA rank, a resolution, a bare number, a sequence length and a context."""

from __future__ import annotations

import re

from core.contract import Precision
from core.parse.patterns import _NUM_UNIT, _words, gated

_BIT = r"[\s_-]?(?:bit|бит)\w*"
_KV_VALUE = r"(fp8|fp16|bf16|int8|int4|8" + _BIT + r"|4" + _BIT + ")"
_KV_CACHE = [
    _words(r"kv[\s_-]*(?:cache|кэш\w*|кеш\w*)?[\s_-]*(?:in[\s_-]+|в[\s_-]+)?" + _KV_VALUE),
    _words(_KV_VALUE + r"[\s_-]*kv(?:[\s_-]*(?:cache|кэш\w*|кеш\w*))?"),
]
_GGUF_OF = {Precision.INT8: Precision.Q8_0, Precision.INT4: Precision.Q4_K_M}
_LORA_RANK = _words(r"(?:lora[\s_-]*)?(?:rank|ранг\w*)\s*[=:]?\s*(\d+)", r"r\s*=\s*(\d+)")

_RESOLUTION = re.compile(
    r"(?<![\w.])(\d{2,12})\s*(?:x|на|by)\s*(\d{2,12})(?![\d.])"
    r"(?!\s*(?:[bm](?!\w)|x|gpu|гпу|карт|видеокарт|card))"
)
_VIDEO_P = re.compile(r"(?<![\w.])(\d{3,4})p(?!\w)")
_BARE_NUMBER = re.compile(r"(?<![\w.])(\d{3,})(?![\w.])")
_BARE_K = re.compile(r"(?<![\w.])(\d+(?:\.\d+)?)(k|m)(?![\w.])")

# "на двух", "on 4": a small count after "на"/"on" with no noun is cards ("на двух картах" said short)
_ON_CARDS = _words(r"(?:на|on)\s+(\d{1,2})(?!\s*(?:gb|гб|gib|гиб|g|г|гиг\w*|%|процент\w*)(?!\w))")

_SEQ_LEN = [
    _words(r"(?:max[\s_-]*)?seq(?:uence)?[\s_-]*(?:len(?:gth)?)?\s*[=:]?\s*" + _NUM_UNIT),
    _words(r"(?:длин\w*\s+)?последовательност\w*\s*[=:]?\s*" + _NUM_UNIT),
]
_CONTEXT = [
    _words(
        r"(?:контекст\w*|context(?:[\s_-]*(?:length|len|window|size))?|ctx|num[\s_-]*ctx|"
        r"max[\s_-]*model[\s_-]*len|окн\w*(?:\s+контекст\w*)?)\s*[=:]?\s*(?:в\s+|of\s+|на\s+|до\s+|up\s+to\s+)?"
        + _NUM_UNIT
        + r"(?:\s*(?:токен\w*|tokens?))?"
    ),
    gated(
        _words(_NUM_UNIT + r"\s*(?:токен\w*\s+|tokens?\s+)?(?:контекст\w*|context|ctx)"),
        r"контекст|context|ctx",
    ),
    gated(_words(_NUM_UNIT + r"\s*(?:токен\w*|tokens?)"), r"токен|token"),
]
