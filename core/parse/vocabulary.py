"""The words the parser knows: engines, precisions, counts, tasks, and the filler around them."""

from __future__ import annotations

import re

from core.contract import Attention, CpuOffload, Engine, Method, Optimizer, Precision, Sharding, Task
from core.parse.text import _NUM_UNIT, _words

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

# "на двух", "on 4": a small count after "на"/"on" with no noun is cards ("на двух картах" said short)
_ON_CARDS = _words(r"(?:на|on)\s+(\d{1,2})(?!\s*(?:gb|гб|gib|гиб|g|г|гиг\w*|%|процент\w*)(?!\w))")
# "сравни 4090 и h100", "4090 vs h100", "что лучше: … или …": several cards to set side by side
_COMPARE = _words(r"сравн\w*", r"compar\w*", "vs", "versus", "против", "или", "or", "лучше", "better")

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
    r"размер\w*|size|длин\w*|length|len|x|штук\w*|одновременн\w*|simultaneous\w*|instruct|chat|base|"
    r"если|тогда|ещ[её]|вместо|сравн\w*|лучше|против|if|about|then|instead|compar\w*|versus|better|"
    r"so|теперь|now|давай\w*)"
)
