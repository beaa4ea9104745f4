"""Free text → `Request`, in Russian and English.

`parse("llama 3 70b int4 32k контекст 4 пользователя")` gives task inference, model Llama 3 70B,
precision int4, context 32768, concurrency 4, engine vLLM. Nothing but `ParseError` escapes: its
`code` says what is missing or wrong (empty, missing_model, ambiguous_model, unknown_model,
too_large, invalid), its `partial` holds the request fields understood so far and `candidates` the
model ids to choose from.

How the text is read: Hugging Face ids first, then the longest runs of words naming a catalogue
model or GPU (so "phi 3 mini 4k" stays a name and "4k" is not taken as a context), then keywords and
numbers with their units, each match consumed so no word counts twice.

Decisions a practitioner would make, reported as notes (`understand`) so an answer can say so:
- "fine-tune" / "дообучение" without a method means LoRA, what almost everyone runs unless they
  say "full"; plain "training" / "обучение" and "from scratch" keep the contract default, full.
- "gguf" without a type means Q4_K_M, the most common GGUF download.
- a name with a size the catalogue lacks ("llama 13b" when only other Llamas are known) falls back
  to the size alone, which the estimator sizes with a typical architecture.
- several users of a language model, with no engine or GGUF type named, mean a server: sized as
  vLLM ("batch N" instead is N sequences generated together by the engine as named).
Conventions: "32k" is 32 × 1024 tokens (model cards' "128k" is 131072); a bare number of 256 or
more is the context (the sequence length when training) for LLMs and a square resolution for
image/video models; "batch N" for image generation means N images per batch.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

from pydantic import ValidationError

from core.catalog import Catalog, default_catalog, name_tokens
from core.contract import (
    Assumption,
    Attention,
    CpuOffload,
    CustomModel,
    Engine,
    KvPrecision,
    Method,
    Optimizer,
    Precision,
    Request,
    Sharding,
    Task,
)
from core.errors import CatalogError, ParseError
from core.precision import is_gguf
from core.specs import ModelKind, ModelSpec

Fields = dict[str, Any]

MAX_RESOLUTION_SIDE = 16_384  # no diffusion model renders beyond 16K a side; larger is a typo
MIN_RESOLUTION_SIDE = 64  # smaller is no image any diffusion model makes (latents are 1/8 of it)
MIN_BARE_NUMBER = 256  # a bare number this large is a context/resolution, smaller ones are counts
MAX_CANDIDATES = 8  # a clarifying question offers at most this many models
_MAX_WINDOW = 6  # longest model/GPU name, in words, looked for in the text
_HUGE = 10**30  # any number longer than this is absurd; keeps int() off huge digit strings


@dataclass(frozen=True)
class Understood:
    """The request and the notes on what the parser assumed (shown with the answer)."""

    request: Request
    notes: list[Assumption] = field(default_factory=list)


def parse(text: str, catalog: Catalog | None = None) -> Request:
    """Free text → request; raises only `ParseError`."""
    return understand(text, catalog).request


def understand(text: str, catalog: Catalog | None = None) -> Understood:
    """Like `parse`, with the parser's assumptions as notes (`Assumption` codes `parse_*`)."""
    reading = _read(text, _catalog(catalog))
    return Understood(reading.build(), reading.notes)


def parse_partial(text: str, catalog: Catalog | None = None) -> Fields:
    """The request fields `text` states, never raising: for free entry at any dialog step.

    A task the text does not name (nor its model implies) is left out: the dialog knows it better.
    """
    reading = _read(text, _catalog(catalog))
    try:
        reading.build()
        fields = dict(reading.fields)
    except ParseError as e:
        fields = dict(e.partial)
    if reading.task_defaulted:
        fields.pop("task", None)
    return fields


def parse_context(text: str) -> int | None:
    """A token count: "32k" → 32768, "128к" → 131072, "контекст 8192" → 8192."""
    match = re.search(_NUMK + r"(?!\s*b\b)", _normalize(text))
    value = _tokens_count(match) if match else None
    return value if value and value <= _limit(Request, "context_length") else None


def parse_count(text: str) -> int | None:
    """A small positive count: "4", "4 пользователя", "bs=8"."""
    match = re.search(r"(?<![\d.])(\d{1,7})(?![\d.])", _normalize(text))
    value = int(match.group(1)) if match else 0
    return value if 0 < value <= _limit(Request, "concurrency") else None


def parse_resolution(text: str) -> tuple[int, int] | None:
    """ "1024x1024", "1024×768", "1024 на 1024", "720p", or one number for a square."""
    norm = _normalize(text)
    for pattern in (_RESOLUTION, _VIDEO_P, _BARE_NUMBER):
        match = pattern.search(norm)
        if match:
            size = _resolution(match)
            return size if _resolution_in_bounds(size) else None
    return None


def parse_size_b(text: str) -> float | None:
    """Parameters in billions: "7b" → 7, "1.5B" → 1.5, "405 млрд" → 405, "8x7b" → 56 (nominal)."""
    norm = _normalize(text)
    match = _MOE_SIZE.search(norm) or _SIZE.search(norm)
    value = _size_b(match) if match else None
    return value if value and value <= _limit(CustomModel, "params_b") else None


# --- normalisation and numbers -------------------------------------------------------------------

_NUM_UNIT = r"(\d+(?:\.\d+)?)\s?(k|m)?(?![\w.])"  # a count with an optional k/M suffix
_NUMK = r"(?<![\w.])" + _NUM_UNIT


def _normalize(text: str) -> str:
    """Lower case, one spelling for units: '128к' → '128k', '405 млрд' → '405b', '1024×1024' → 'x'."""
    text = unicodedata.normalize("NFKC", text).lower().replace("ё", "е")
    text = re.sub(r"(\d)\s*[×х*]\s*(?=\d)", r"\1x", text)
    text = re.sub(r"(\d),(\d{3})(?!\d)", r"\1\2", text)  # "32,768": thousands
    text = re.sub(r"(\d),(\d{1,2})(?!\d)", r"\1.\2", text)  # "1,5b": a decimal comma
    text = re.sub(r"(\d+)\s*\^\s*(\d+)", _power, text)
    text = re.sub(r"(\d)\s?к(?![а-я])", r"\1k", text)
    text = re.sub(r"(\d)\s*(?:млрд|миллиард\w*|billions?|bn)(?!\w)", r"\1b", text)
    text = re.sub(r"(\d)\s*(?:млн|миллион\w*|millions?)(?!\w)", r"\1m", text)
    text = re.sub(r"(\d)\s*(?:тыс\w*|thousands?)(?!\w)", r"\1k", text)
    text = re.sub(r"(\d)\s?б(?![а-я])", r"\1b", text)  # "7б" is 7B; "8 бит" stays bits
    for pattern, name in _CYRILLIC_NAMES:
        text = pattern.sub(name, text)
    return _NUMBER_WORDS.sub(lambda m: _NUMBER_WORD_VALUES[m.group(0)], text)


# Model families as Russian speakers write them: "лама 3 8б", "мистраль", "квен", "дипсик р1"
_CYRILLIC_NAMES = [
    (re.compile(r"(?<!\w)" + stem + r"(?!\w)"), name)
    for stem, name in (
        (r"л?лам[аыуеоя]?", "llama"),
        (r"мистрал[ьяюеи]?", "mistral"),
        (r"микстрал[ьяюеи]?", "mixtral"),
        (r"квен[ауе]?", "qwen"),
        (r"(?:джем|гем)м[аыуе]?", "gemma"),
        (r"дип[сc][иеі]к[ауе]?", "deepseek"),
        (r"фл[юа]кс[ауе]?", "flux"),
        (r"р1", "r1"),
    )
]


# "на двух картах", "two gpus": small counts people spell out ("one" is too often not a number)
_NUMBER_WORD_VALUES = {
    **dict.fromkeys(("одна", "одну", "одной", "один", "одном"), "1"),
    **dict.fromkeys(("два", "две", "двух", "двумя", "two", "dual"), "2"),
    **dict.fromkeys(("три", "трех", "тремя", "three"), "3"),
    **dict.fromkeys(("четыре", "четырех", "четырьмя", "four", "quad"), "4"),
    **dict.fromkeys(("шесть", "шести", "six"), "6"),
    **dict.fromkeys(("восемь", "восьми", "восьмью", "eight"), "8"),
    **dict.fromkeys(("шестнадцать", "шестнадцати", "sixteen"), "16"),
}
_NUMBER_WORDS = re.compile(r"(?<!\w)(?:" + "|".join(_NUMBER_WORD_VALUES) + r")(?!\w)")


def _power(match: re.Match[str]) -> str:
    """ "10^12" → its digits; an exponent past 30 is absurd and stays cheap."""
    base, exponent = match.group(1), match.group(2)
    digits = len(exponent) <= 2 and int(exponent) <= 30
    return str(int(base[:6]) ** int(exponent)) if digits else str(_HUGE)


def _number(digits: str) -> float:
    """Digits → a number, clamped so absurd input stays cheap and is reported, not computed."""
    return float(_HUGE) if len(digits) > 30 else float(digits)


def _tokens_count(match: re.Match[str]) -> int:
    suffix = match.group(2) if match.re.groups >= 2 else None
    value = _number(match.group(1)) * {"k": 1024, "m": 1024 * 1024}.get(suffix or "", 1)
    return int(min(value, _HUGE))


def _limit(model: Any, name: str) -> int:
    """The contract's upper bound on a field, so the limits live in one place."""
    for rule in model.model_fields[name].metadata:
        bound = getattr(rule, "le", None)
        if bound is not None:
            return int(bound)
    return _HUGE


# --- vocabulary ----------------------------------------------------------------------------------


def _words(*patterns: str) -> re.Pattern[str]:
    return re.compile(r"(?<![\w.])(?:" + "|".join(patterns) + r")(?![\w])")


_NEGATION = r"(?:(?P<neg>no|without|disable[ds]?|без|не|выкл\w*|отключ\w*)[\s_-]+)?"
_BIT = r"[\s_-]?(?:bit|бит)\w*"

_ENGINES = [
    (_words(r"llama[\s._-]?cpp", "ollama", r"lm[\s_-]?studio", r"kobold[\s_-]?cpp"), Engine.LLAMA_CPP),
    (_words("vllm"), Engine.VLLM),
    (_words(r"(?:hf[\s_-]+)?transformers"), Engine.TRANSFORMERS),
    (_words("diffusers", r"comfy\w*"), Engine.DIFFUSERS),
    (_words("unsloth"), Engine.UNSLOTH),
]

_KV_VALUE = r"(fp8|fp16|bf16|int8|int4|8" + _BIT + r"|4" + _BIT + ")"
_KV_CACHE = [
    _words(r"kv[\s_-]*(?:cache|кэш\w*|кеш\w*)?[\s_-]*(?:in[\s_-]+|в[\s_-]+)?" + _KV_VALUE),
    _words(_KV_VALUE + r"[\s_-]*kv(?:[\s_-]*(?:cache|кэш\w*|кеш\w*))?"),
]

_OPTIMIZERS = [
    (_words(r"paged[\s_-]*adamw?[\s_-]*8" + _BIT), Optimizer.PAGED_ADAMW_8BIT),
    (_words(r"paged[\s_-]*adamw?"), Optimizer.PAGED_ADAMW),
    (
        _words(r"adamw?[\s_-]*8" + _BIT, r"8" + _BIT + r"[\s_-]*adamw?", r"bnb[\s_-]*adamw?"),
        Optimizer.ADAMW_8BIT,
    ),
    (_words(r"adamw?"), Optimizer.ADAMW),
    (_words("adafactor"), Optimizer.ADAFACTOR),
    (_words("sgd"), Optimizer.SGD),
    (_words("lion"), Optimizer.LION),
]

_GGUF = _words("gguf")
_PRECISIONS = [
    (_words(r"q8(?:[_-]?0)?"), Precision.Q8_0),
    (_words(r"q6(?:[_-]?k)?"), Precision.Q6_K),
    (_words(r"q5(?:[_-]?k(?:[_-]?[msl])?)?"), Precision.Q5_K_M),
    (_words(r"q4[_-]?0"), Precision.Q4_0),
    (_words(r"q4[_-]?1"), Precision.Q4_1),
    (_words(r"q4(?:[_-]?k(?:[_-]?[msl])?)?"), Precision.Q4_K_M),
    (_words(r"q3(?:[_-]?k(?:[_-]?[msl])?)?"), Precision.Q3_K_M),
    (_words(r"q2(?:[_-]?k(?:[_-]?s)?)?"), Precision.Q2_K),
    (_words("nf4", r"bnb[\s_-]*(?:nf)?4(?:" + _BIT + ")?"), Precision.NF4),
    (_words(r"gptq(?:[\s_-]*(?:int4|4" + _BIT + "))?"), Precision.GPTQ_INT4),
    (_words(r"awq(?:[\s_-]*(?:int4|4" + _BIT + "))?"), Precision.AWQ_INT4),
    (_words("bf16", "bfloat16"), Precision.BF16),
    (
        _words("fp32", "float32", "f32", "32" + _BIT, r"full[\s_-]+precision", r"полн\w+\s+точност\w*"),
        Precision.FP32,
    ),
    (_words("fp16", "float16", "f16", "half", "16" + _BIT), Precision.FP16),
    (_words("fp8", "float8", "f8", r"e4m3\w*"), Precision.FP8),
    (
        _words("int8", "8" + _BIT, "w8a16", "w8a8", r"llm\.int8", r"bnb[\s_-]*8(?:" + _BIT + ")?"),
        Precision.INT8,
    ),
    (_words("int4", "4" + _BIT, "w4a16"), Precision.INT4),
]
_GGUF_OF = {Precision.INT8: Precision.Q8_0, Precision.INT4: Precision.Q4_K_M}

_SHARDING = [
    (_words(r"(?:deepspeed[\s_-]*)?zero[\s_-]*(?:stage[\s_-]*)?3"), Sharding.ZERO3),
    (_words(r"(?:deepspeed[\s_-]*)?zero[\s_-]*(?:stage[\s_-]*)?2"), Sharding.ZERO2),
    (_words("fsdp"), Sharding.FSDP),
]
_ATTENTION = [
    (_words("eager"), Attention.EAGER),
    (_words("sdpa", r"flash[\s_-]*(?:attn|attention)\w*", "fa2", "fa3"), Attention.SDPA),
]


def _flag_words(*patterns: str) -> re.Pattern[str]:
    """A switch, optionally negated ("без offload"): the `neg` group tells which."""
    return _words(_NEGATION + "(?:" + "|".join(patterns) + ")")


_OFFLOAD = [
    (_flag_words(r"sequential[\s_-]*(?:cpu[\s_-]*)?offload\w*"), CpuOffload.SEQUENTIAL),
    (
        _flag_words(
            r"(?:(?:model|cpu)[\s_-]*)?offload\w*",
            r"о?ф+лоад\w*",
            r"выгрузк\w*\s+(?:на|в)\s+(?:cpu|цп|процессор|ram|озу)",
        ),
        CpuOffload.MODEL,
    ),
]
_TILING = _flag_words(r"(?:vae[\s_-]*)?til(?:ing|ed)", r"тайлинг\w*")
_SLICING = _flag_words(r"(?:vae[\s_-]*)?slic(?:ing|ed)", r"слайсинг\w*")
_CHECKPOINTING = _flag_words(
    r"(?:(?:gradient|grad|activation)[\s_-]*)?checkpoint(?:ing|s)?", r"grad[\s_-]*ckpt", r"чекпо[иий]нтинг\w*"
)
_LORA_RANK = _words(r"(?:lora[\s_-]*)?(?:rank|ранг\w*)\s*[=:]?\s*(\d+)", r"r\s*=\s*(\d+)")

_RESOLUTION = re.compile(
    r"(?<![\w.])(\d{2,12})\s*(?:x|на|by)\s*(\d{2,12})(?![\d.])"
    r"(?!\s*(?:[bm](?!\w)|x|gpu|гпу|карт|видеокарт|card))"
)
_VIDEO_P = re.compile(r"(?<![\w.])(\d{3,4})p(?!\w)")
_BARE_NUMBER = re.compile(r"(?<![\w.])(\d{3,})(?![\w.])")
_MOE_SIZE = re.compile(r"(?<![\w.])(\d{1,3})\s*x\s*(\d{1,6}(?:\.\d+)?)\s?b(?!\w)")
# "350m" is parameters; "1m" alone is rather a context, so millions need two digits
_SIZE = re.compile(
    r"(?<![\w.])(?:(?P<b>\d+(?:\.\d+)?)\s?b|(?P<m>\d{2,})\s?m)(?:\s*(?:params|parameters|параметр\w*))?(?!\w)"
)
_BARE_K = re.compile(r"(?<![\w.])(\d+(?:\.\d+)?)(k|m)(?![\w.])")

_COUNTED: list[tuple[str, list[re.Pattern[str]]]] = [
    (
        "num_gpus",
        [
            _words(
                r"(\d+)\s*(?:x\s*)?(?:gpus?|гпу|карт(?:а|ы|е|у|ой|ах|ами|ам|очк\w*)?|видеокарт\w*|cards?|ускорител\w*)"
            ),
            _words(r"(?:num[\s_-]*gpus|gpus|tp|tensor[\s_-]*parallel\w*)\s*[=:]?\s*(\d+)"),
        ],
    ),
    (
        "frames",
        [
            _words(r"(\d+)\s*(?:кадр\w*|frames?|фрейм\w*)"),
            _words(r"(?:frames?|num[\s_-]*frames|кадр\w*)\s*[=:]?\s*(\d+)"),
        ],
    ),
    (
        "images",
        [
            _words(r"(\d+)\s*(?:картин\w*|изображени\w*|images?|imgs?|pics?|pictures?|фото\w*|штук\w*)"),
            _words(r"(?:images?|num[\s_-]*images|картин\w*|изображени\w*)\s*[=:]?\s*(\d+)"),
        ],
    ),
    (
        "concurrency",
        [
            _words(
                r"(\d+)\s*(?:одновременн\w*\s+|параллельн\w*\s+|concurrent\s+|parallel\s+)?"
                r"(?:пользовател\w*|юзер\w*|users?|клиент\w*|clients?|запрос\w*|requests?|сесси\w*|"
                r"sessions?|поток\w*|streams?|чел\w*|человек|seq(?:uence)?s|последовательност\w*|"
                r"concurrent|parallel)"
            ),
            _words(
                r"(?:concurrency|users|пользовател\w*|параллельно|одновременно|sessions|streams|"
                r"max[\s_-]*num[\s_-]*seqs|потоков)\s*[=:]?\s*(\d+)"
            ),
        ],
    ),
    (
        "batch_size",
        [
            _words(
                r"(?:micro[\s_-]*batch(?:[\s_-]*size)?|per[\s_-]*device[\s_-]*batch(?:[\s_-]*size)?|"
                r"batch(?:[\s_-]*size)?|bs|mbs|микро[\s_-]*батч\w*|батч\w*|пакет\w*)\s*(?:of\s+)?[=:]?\s*(\d+)"
            ),
            _words(r"(\d+)\s*(?:батч\w*|batch(?:es)?)"),
        ],
    ),
]

_SEQ_LEN = [
    _words(r"(?:max[\s_-]*)?seq(?:uence)?[\s_-]*(?:len(?:gth)?)?\s*[=:]?\s*" + _NUM_UNIT),
    _words(r"(?:длин\w*\s+)?последовательност\w*\s*[=:]?\s*" + _NUM_UNIT),
]
_CONTEXT = [
    _words(
        r"(?:контекст\w*|context(?:[\s_-]*(?:length|len|window|size))?|ctx|num[\s_-]*ctx|"
        r"max[\s_-]*model[\s_-]*len|окн\w*(?:\s+контекст\w*)?)\s*[=:]?\s*(?:в\s+|of\s+|на\s+)?"
        + _NUM_UNIT
        + r"(?:\s*(?:токен\w*|tokens?))?"
    ),
    _words(_NUM_UNIT + r"\s*(?:токен\w*\s+|tokens?\s+)?(?:контекст\w*|context|ctx)"),
    _words(_NUM_UNIT + r"\s*(?:токен\w*|tokens?)"),
]

_SCRATCH = _words(
    r"(?:(?:обучени\w*|обучить|тренир\w*|train\w*)\s+)?(?:с\s+нуля|from\s+scratch)",
    r"pre[\s_-]?train\w*",
    r"претрейн\w*",
    r"предобучени\w*",
)
_METHODS = [
    (_words(r"q[\s_-]?lora", "кулора", "кьюлора"), Method.QLORA),
    (_words("lora", "лора", r"адаптер\w*", r"adapters?", "peft"), Method.LORA),
    (
        _words(
            r"full(?:[\s_-]*(?:fine[\s_-]*tun\w*|finetun\w*|ft|training|train|parameters?))?",
            r"полн(?:ое|ого|ый|ым|ая|ую)(?:\s+(?:дообучени\w*|обучени\w*|файн[\s_-]*тюн\w*|fine[\s_-]*tun\w*))?",
        ),
        Method.FULL,
    ),
]
_FINE_TUNE = _words(
    r"fine[\s_-]*tun\w*",
    r"finetun\w*",
    "ft",
    "sft",
    r"до-?обуч\w*",
    r"файн[\s_-]*тюн\w*",
    r"тюнинг\w*",
    r"dream[\s_-]*booth",
    r"tun(?:e|ing)",
)
_TRAINING = _words(r"обучени\w*", r"обучить", r"обучать", r"тренир\w*", r"тренировк\w*", r"train\w*")
_TASK_WORDS = [
    (
        _words(
            r"видео\w*", r"videos?", r"text[\s_-]*to[\s_-]*video", "t2v", "i2v", r"ролик\w*", r"анимаци\w*"
        ),
        Task.VIDEO_GENERATION,
    ),
    (
        _words(
            r"картин\w*",
            r"картинк\w*",
            r"изображени\w*",
            r"images?",
            r"text[\s_-]*to[\s_-]*image",
            "txt2img",
            "t2i",
            "img2img",
            r"рису\w*",
            r"рисова\w*",
            r"фото\w*",
            r"pictures?",
        ),
        Task.IMAGE_GENERATION,
    ),
    (
        _words(
            r"инференс\w*",
            r"inference",
            r"infer",
            r"запуск\w*",
            r"запустить",
            r"run\w*",
            r"serv(?:e|ing)",
            r"deploy\w*",
            r"развернуть",
            r"разверт\w*",
            r"чат\w*",
            r"chat\w*",
            r"hosting",
            r"хостинг\w*",
            r"генераци\w+\s+текст\w*",
        ),
        Task.INFERENCE,
    ),
]

# Words that carry no model name: left over, they make a "missing" model rather than an "unknown" one.
_FILLER = re.compile(
    r"(?:сколько|нужн\w*|надо|нужен|потребу\w*|требу\w*|памят\w*|видеопамят\w*|vram|memory|mem|"
    r"для|на|в|во|с|со|и|или|а|как|что|чтобы|ли|же|бы|по|у|от|до|при|мне|моей|моя|мой|мою|я|мы|нам|"
    r"влез\w*|помест\w*|хват\w*|запихн\w*|модел\w*|сервер\w*|карт\w*|видеокарт\w*|гпу|gpus?|"
    r"гб|гиб|gb|gib|gigabytes?|how|much|many|need\w*|do|does|did|i|we|to|for|with|on|in|into|at|of|by|"
    r"the|a|an|is|it|my|our|what|which|will|would|can|could|fit\w*|model\w*|servers?|cards?|rent\w*|"
    r"аренд\w*|please|пожалуйста|привет|hi|hello|hey|and|or|vs|mode|режим\w*|квантиз\w*|квантов\w*|"
    r"quantiz\w*|precision|точност\w*|bits?|бит\w*|токен\w*|tokens?|параметр\w*|params?|parameters|"
    r"генераци\w*|generat\w*|make|сделать|хочу|want|посчитай|calculate|estimate|оцен\w*|ram|озу|"
    r"размер\w*|size|длин\w*|length|len|x|штук\w*|одновременн\w*|simultaneous\w*|instruct|chat|base)"
)


# --- the reading -------------------------------------------------------------------------------


@dataclass
class _Reading:
    """What was understood; `build` turns it into a Request or the precise ParseError."""

    fields: Fields = field(default_factory=dict)
    notes: list[Assumption] = field(default_factory=list)
    error: ParseError | None = None
    task_word: Task | None = None  # "картинки", "inference": the task named, when no model says it
    task_defaulted: bool = False  # nothing named or implied a task: inference by default

    def build(self) -> Request:
        if self.error:
            raise self.error
        try:
            return Request(**self.fields)
        except ValidationError as e:
            raise _validation_error(e, self.fields) from None


def _validation_error(e: ValidationError, fields: Fields) -> ParseError:
    first = e.errors()[0]
    name = str(first["loc"][0]) if first["loc"] else "request"
    code = "too_large" if first["type"] in ("less_than_equal", "less_than") else "invalid"
    partial = {k: v for k, v in fields.items() if k != name}
    return ParseError(code, f"{name}: {first['msg']}", field=name, partial=partial)


class _Text:
    """The normalised text; matches are blanked out so nothing is read twice."""

    def __init__(self, text: str) -> None:
        self.rest = text

    def take(
        self,
        pattern: re.Pattern[str],
        accept: Callable[[re.Match[str]], bool] = lambda m: True,
    ) -> re.Match[str] | None:
        for match in pattern.finditer(self.rest):
            if accept(match):
                self.blank(match.start(), match.end())
                return match
        return None

    def blank(self, start: int, end: int) -> None:
        self.rest = self.rest[:start] + " " * (end - start) + self.rest[end:]


def _catalog(catalog: Catalog | None) -> Catalog:
    if catalog is not None:
        return catalog
    try:
        return default_catalog()
    except CatalogError:  # data files missing or broken: still read settings, models by size only
        return Catalog([], [], [])


def _read(raw: str, catalog: Catalog) -> _Reading:
    reading = _Reading()
    if not raw.strip():
        reading.error = ParseError("empty", "the text is empty", field="text")
        return reading
    raw, hf_id = _take_hf_id(raw)
    text = _Text(_normalize(raw))
    f = reading.fields
    _take_first(text, f, "engine", _ENGINES)
    names = _take_names(text, catalog, f)
    _read_settings(text, f, reading)
    _read_task(text, f, reading)
    model, kind = _read_model(text, catalog, hf_id, names, reading)
    _settle_task(f, kind, reading)
    _settle_numbers(text, f, reading)
    _settle_serving(f, reading)
    if model is not None:
        f["model"] = model
    if reading.error is None and "model" not in f:
        reading.error = _no_model_error(text, catalog)
    if reading.error is not None:
        reading.error.partial = {**f, **reading.error.partial}
    return reading


def _take_first(text: _Text, f: Fields, name: str, table: Iterable[tuple[re.Pattern[str], Any]]) -> None:
    for pattern, value in table:
        if text.take(pattern):
            f.setdefault(name, value)


def _flag(text: _Text, pattern: re.Pattern[str]) -> bool | None:
    match = text.take(pattern)
    return None if match is None else not match.group("neg")


def _read_settings(text: _Text, f: Fields, reading: _Reading) -> None:
    for pattern in _KV_CACHE:
        match = text.take(pattern)
        if match:
            f.setdefault("kv_cache_precision", _kv_precision(match.group(1)))
    _take_first(text, f, "optimizer", _OPTIMIZERS)
    gguf = text.take(_GGUF) is not None
    _take_first(text, f, "precision", _PRECISIONS)
    if gguf:  # "gguf" alone is Q4_K_M; "gguf 8bit" is its 8-bit type
        if "precision" not in f:
            reading.notes.append(_note("parse_gguf_default", "GGUF without a type: assumed Q4_K_M."))
        precision = f.get("precision", Precision.INT4)
        f["precision"] = _GGUF_OF.get(precision, precision)
    _take_first(text, f, "sharding", _SHARDING)
    _take_first(text, f, "attention", _ATTENTION)
    for pattern, offload in _OFFLOAD:
        enabled = _flag(text, pattern)
        if enabled is not None:
            f.setdefault("cpu_offload", offload if enabled else CpuOffload.NONE)
    for name, pattern in (
        ("vae_tiling", _TILING),
        ("vae_slicing", _SLICING),
        ("gradient_checkpointing", _CHECKPOINTING),
    ):
        enabled = _flag(text, pattern)
        if enabled is not None:
            f[name] = enabled
    rank = text.take(_LORA_RANK)
    if rank:
        f["lora_rank"] = int(_number(rank.group(1) or rank.group(2)))
    resolution = text.take(_RESOLUTION) or text.take(_VIDEO_P)
    if resolution:
        _set_resolution(f, _resolution(resolution), reading)
    for name, patterns in _COUNTED:
        for pattern in patterns:
            match = text.take(pattern)
            if match:
                f.setdefault(name, int(_number(match.group(1))))
    for name, patterns in (("seq_len", _SEQ_LEN), ("context_length", _CONTEXT)):
        for pattern in patterns:
            match = text.take(pattern)
            if match:
                f.setdefault(name, _tokens_count(match))


def _kv_precision(word: str) -> KvPrecision:
    if word.startswith("8"):
        return KvPrecision.INT8
    if word.startswith("4"):
        return KvPrecision.INT4
    return KvPrecision(word)


def _note(code: str, text: str, **params: str | int | float) -> Assumption:
    return Assumption(code=code, text=text, params=params)


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


def _set_resolution(f: Fields, size: tuple[int, int], reading: _Reading) -> None:
    if not _resolution_in_bounds(size):
        if reading.error is None:
            code = "too_large" if max(size) > MAX_RESOLUTION_SIDE else "invalid"
            reading.error = ParseError(
                code, f"resolution {size[0]}x{size[1]} is out of range", field="resolution"
            )
        return
    f.setdefault("resolution", size)


def _read_task(text: _Text, f: Fields, reading: _Reading) -> None:
    if text.take(_SCRATCH):
        f.update(task=Task.TRAINING, method=Method.FULL)
    _take_first(text, f, "method", _METHODS)
    fine_tune = text.take(_FINE_TUNE) is not None or f.get("engine") == Engine.UNSLOTH  # a fine-tuning tool
    training = text.take(_TRAINING) is not None
    if "method" in f or fine_tune or training:
        f.setdefault("task", Task.TRAINING)
    if fine_tune and "method" not in f:
        f["method"] = Method.LORA
        reading.notes.append(_note("parse_finetune_lora", "Fine-tuning without a method: assumed LoRA."))
    for pattern, task in _TASK_WORDS:
        if text.take(pattern) and reading.task_word is None:
            reading.task_word = task


def _settle_task(f: Fields, kind: ModelKind | None, reading: _Reading) -> None:
    """Training words win; then a diffusion model's kind; then the words; inference by default.

    A language model implies no task (it may be run or trained), so it leaves the default marked
    as one: `parse_partial` then does not override a task the dialog already knows.
    """
    word = reading.task_word
    if "task" in f:
        return
    if kind == ModelKind.IMAGE:
        f["task"] = Task.IMAGE_GENERATION
    elif kind == ModelKind.VIDEO:
        f["task"] = Task.VIDEO_GENERATION
    elif word is not None and (kind is None or word == Task.INFERENCE):  # "картинки llama" is noise
        f["task"] = word
    elif kind is None and "frames" in f:
        f["task"] = Task.VIDEO_GENERATION
    elif kind is None and ("resolution" in f or "images" in f):
        f["task"] = Task.IMAGE_GENERATION
    else:
        f["task"] = Task.INFERENCE
        reading.task_defaulted = True


def _settle_serving(f: Fields, reading: _Reading) -> None:
    """Several users of a language model mean a server: sized as vLLM (continuous batching, chunked
    prefill), not as one transformers `generate` that prefills every user's context at once.
    An inference "batch N" is N sequences generated together (offline, the engine as named)."""
    precision = f.get("precision")
    if f.get("task") == Task.INFERENCE and "batch_size" in f:
        batch = f.pop("batch_size")
        if "concurrency" not in f:
            f["concurrency"] = batch
            return
    if (
        f.get("task") == Task.INFERENCE
        and f.get("concurrency", 1) > 1
        and "engine" not in f
        and not (isinstance(precision, Precision) and is_gguf(precision))
    ):
        f["engine"] = Engine.VLLM
        reading.notes.append(
            _note(
                "parse_serving_vllm",
                "Several users: sized as a vLLM server.",
                concurrency=f["concurrency"],
            )
        )


def _settle_numbers(text: _Text, f: Fields, reading: _Reading) -> None:
    """Numbers without a keyword, read by the task: a context, a sequence length or a resolution."""
    generation = f["task"] in (Task.IMAGE_GENERATION, Task.VIDEO_GENERATION)
    if generation:
        if "batch_size" in f and "images" not in f and f["task"] == Task.IMAGE_GENERATION:
            f["images"] = f.pop("batch_size")
        bare = text.take(_BARE_NUMBER, lambda m: _number(m.group(1)) >= MIN_BARE_NUMBER)
        if bare:
            _set_resolution(f, _resolution(bare), reading)
        return
    training = f["task"] == Task.TRAINING
    if training and "context_length" in f:  # "lora 8k context" means the training sequence length
        f.setdefault("seq_len", f.pop("context_length"))
    name = "seq_len" if training else "context_length"
    match = text.take(_BARE_K) or text.take(_BARE_NUMBER, lambda m: _number(m.group(1)) >= MIN_BARE_NUMBER)
    if match and name not in f:
        f[name] = _tokens_count(match)


# --- models ------------------------------------------------------------------------------------


def _take_hf_id(raw: str) -> tuple[str, str | None]:
    """`org/name` is a Hugging Face id; kept in its own case, since the Hub is case-sensitive."""
    match = re.search(r"(?<![\w./-])([A-Za-z0-9][\w.-]*/[A-Za-z0-9][\w.-]*[A-Za-z0-9])(?![\w/])", raw)
    if not match:
        return raw, None
    return raw[: match.start()] + " " + raw[match.end() :], match.group(1)


@dataclass
class _Names:
    """Catalogue models and GPUs named word for word in the text."""

    models: list[str] = field(default_factory=list)
    gpus: list[str] = field(default_factory=list)


def _take_names(text: _Text, catalog: Catalog, f: Fields) -> _Names:
    """The longest runs of words that name a model or GPU exactly, taken out of the text."""
    found = _Names()
    tokens = [(m.start(), m.end()) for m in re.finditer(r"[^\s,;!?()\"']+", text.rest)]
    i = 0
    while i < len(tokens):
        for j in range(min(len(tokens), i + _MAX_WINDOW), i, -1):
            start, end = tokens[i][0], tokens[j - 1][1]
            words = text.rest[start:end]
            model = catalog.find_model(words)
            gpu = catalog.find_gpu(words) if model is None else None
            if model is not None and not model[1]:  # exact: "...-awq" leaves its precision to be read
                found.models.extend([model[0].id] if model[0].id not in found.models else [])
            elif gpu is not None:
                found.gpus.extend([gpu.id] if gpu.id not in found.gpus else [])
                count = re.search(r"(?<![\w.])(\d{1,2})\s*x?\s*$", text.rest[:start])  # "2x h100"
                if count:
                    f.setdefault("num_gpus", int(count.group(1)))
                    start = count.start()
            else:
                continue
            text.blank(start, end)
            i = j - 1
            break
        i += 1
    if found.gpus:
        f["gpus"] = found.gpus
    return found


def _read_model(
    text: _Text, catalog: Catalog, hf_id: str | None, names: _Names, reading: _Reading
) -> tuple[str | None, ModelKind | None]:
    moe = text.take(_MOE_SIZE)
    size_match = moe or text.take(_SIZE)
    size = _size_b(size_match) if size_match else None
    if size is not None and reading.error is None:
        try:
            CustomModel(params_b=size)
        except ValidationError as e:
            reading.error = _validation_error(e, {})
            reading.error.field = "model"
    if hf_id:
        return _from_hf_id(catalog, hf_id, reading)
    if len(names.models) == 1:
        return names.models[0], catalog.models[names.models[0]].kind
    size_word = _size_word(moe, size)
    candidates = names.models or _fuzzy_candidates(text, catalog, size, size_word)
    if len(candidates) == 1:
        return candidates[0], catalog.models[candidates[0]].kind
    if candidates:
        if reading.error is None:
            reading.error = ParseError(
                "ambiguous_model",
                "several models match",
                field="model",
                candidates=_ranked(catalog, candidates),
            )
        return None, _common_kind(catalog, candidates)
    if size is None or reading.error is not None:
        return None, None
    query = _name_words(text)
    if query:
        reading.notes.append(
            _note(
                "parse_model_by_size",
                "The catalogue has no model of that name and size: sized as a typical model of that size.",
                name=" ".join(query),
                size=size_word,
            )
        )
    return size_word, None


def _from_hf_id(catalog: Catalog, hf_id: str, reading: _Reading) -> tuple[str, ModelKind | None]:
    lowered = hf_id.lower()  # quantized repos say so in their names: "...-AWQ", "...-GGUF"
    for word, precision in (
        ("awq", Precision.AWQ_INT4),
        ("gptq", Precision.GPTQ_INT4),
        ("gguf", Precision.Q4_K_M),
        ("fp8", Precision.FP8),
    ):
        if word in lowered:
            reading.fields.setdefault("precision", precision)
            break
    found = catalog.find_model(hf_id)
    if found is None:  # not catalogued: the estimator may still read it from the Hub
        return hf_id, None
    return found[0].id, found[0].kind


def _size_b(match: re.Match[str]) -> float:
    if match.re is _MOE_SIZE:
        return _number(match.group(1)) * _number(match.group(2))
    if match.group("m"):
        return _number(match.group("m")) / 1000
    return _number(match.group("b"))


def _size_word(moe: re.Match[str] | None, size: float | None) -> str:
    """The size as the resolver reads it: "70B", "1.5B", "8x7B"."""
    if moe:
        return f"{int(_number(moe.group(1)))}x{_number(moe.group(2)):g}B"
    return f"{size:g}B" if size is not None else ""


def _name_tokens(name: str) -> set[str]:
    """The catalogue's name words and their letter/digit runs: 'FLUX.1 [dev]' → {flux.1, flux, 1, dev}."""
    out: set[str] = set()
    for word in name_tokens(name):
        out.add(word)
        out.update(re.findall(r"[^\W\d_]+|\d+(?:\.\d+)?[a-z]?", word))
    return out


def _name_words(text: _Text) -> list[str]:
    words = re.findall(r"[^\s,;!?()\"'=:+]+", text.rest)
    return [w.strip(".") for w in words if _has_letter(w) and not _FILLER.fullmatch(w.strip("."))]


def _fuzzy_candidates(text: _Text, catalog: Catalog, size: float | None, size_word: str) -> list[str]:
    """Models whose names hold every name word left in the text, then filtered by size."""
    tokens, vocabulary = _catalog_tokens(catalog)
    query: set[str] = set()
    for word in re.findall(r"[^\s,;!?()\"'=:+]+", text.rest):
        word = word.strip(".")
        query.update([word] if word in vocabulary else (t for t in _name_tokens(word) if t in vocabulary))
    query -= {t for t in query if _FILLER.fullmatch(t)}
    if not any(_has_letter(t) for t in query):  # a stray number names no model
        moe_word = size_word.lower()
        return [i for i, names in tokens.items() if "x" in moe_word and moe_word in names]
    for wanted in (query, {t for t in query if _has_letter(t)}):  # then without version numbers
        found = [i for i, names in tokens.items() if wanted and wanted <= names]
        if size is not None:
            found = [i for i in found if _same_size(catalog.models[i], size, size_word, tokens[i])]
        if found:
            # "qwen 7b" is Qwen's own 7B rather than DeepSeek's distill of it: prefer the family named
            own = [i for i in found if _name_tokens(catalog.models[i].family) & wanted]
            return own or found
    return []


@lru_cache(maxsize=4)  # a catalogue is loaded once and not changed; its words need computing once
def _catalog_tokens(catalog: Catalog) -> tuple[dict[str, frozenset[str]], frozenset[str]]:
    """Each model's name words, and all of them together."""
    tokens = {m.id: frozenset(_model_tokens(m)) for m in catalog.models.values()}
    return tokens, frozenset().union(*tokens.values())


def _model_tokens(model: ModelSpec) -> set[str]:
    names = [model.id, model.name, model.family, *model.aliases, *([model.hf_id] if model.hf_id else [])]
    return set().union(*(_name_tokens(n) for n in names))


def _has_letter(word: str) -> bool:
    return re.search(r"[^\W\d_]", word) is not None


def _same_size(model: ModelSpec, size: float, size_word: str, names: frozenset[str]) -> bool:
    return size_word.lower() in names or abs(model.params_b - size) <= 0.15 * size


def _ranked(catalog: Catalog, ids: list[str]) -> list[str]:
    """Popular models first, then by size, so a clarifying question offers the likely ones."""
    ordered = sorted(ids, key=lambda i: (not catalog.models[i].popular, catalog.models[i].params_b, i))
    return ordered[:MAX_CANDIDATES]


def _common_kind(catalog: Catalog, ids: list[str]) -> ModelKind | None:
    kinds = {catalog.models[i].kind for i in ids}
    return kinds.pop() if len(kinds) == 1 else None


def _no_model_error(text: _Text, catalog: Catalog) -> ParseError:
    words = _name_words(text)
    if not words:
        return ParseError("missing_model", "no model named", field="model")
    name = " ".join(words)
    suggestions = [m.id for m in catalog.search(name, 5)]
    return ParseError(
        "unknown_model", f"unknown model {name!r}", field="model", candidates=suggestions, value=name
    )
