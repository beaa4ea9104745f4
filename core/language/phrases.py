"""Words for the pieces of an answer: settings, sizes, parse errors, which verdicts and mitigations
are worth naming. `core.language.answer` builds the one answer from these; every word comes from the locale
files through `core.language.words`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from decimal import Decimal
from typing import Any, get_args

from core.advice import verdict_fields
from core.catalogue.catalog import Catalog, default_catalog
from core.contract import (
    Assumption,
    Component,
    CustomModel,
    Mitigation,
    Recommendation,
    Result,
    Task,
    Verdict,
)
from core.errors import CatalogError, ParseError
from core.language.words import concept_key, label, normalize_lang, t, translate
from core.units import GiB, MiB

MAX_VERDICTS = 5  # with the recommendation: enough to compare, short enough for a phone

# The settings worth naming for each task, in the order a practitioner says them.
_SETTINGS_BY_TASK: dict[Task, tuple[str, ...]] = {
    Task.INFERENCE: (
        "precision",
        "engine",
        "context_length",
        "images_per_prompt",
        "concurrency",
        "kv_cache_precision",
        "num_gpus",
    ),
    Task.TRAINING: (
        "method",
        "engine",
        "precision",
        "optimizer",
        "lora_rank",
        "batch_size",
        "seq_len",
        "gradient_accumulation_steps",
        "gradient_checkpointing",
        "num_gpus",
        "sharding",
    ),
    Task.IMAGE_GENERATION: (
        "precision",
        "resolution",
        "images",
        "cpu_offload",
        "vae_tiling",
        "vae_slicing",
        "num_gpus",
    ),
    Task.VIDEO_GENERATION: ("precision", "resolution", "frames", "cpu_offload", "vae_tiling", "num_gpus"),
}
# A speech model (its request has `beam_size`): windows transcribed at once, not users or a context.
_SPEECH_SETTINGS = ("precision", "engine", "beam_size", "concurrency", "num_gpus")
# A text-to-speech model: its stages' contexts are fixed (said in the `tts_stages` note), not asked.
_TTS_SETTINGS = ("precision", "engine", "concurrency", "num_gpus")
_ALL_SETTINGS = tuple(dict.fromkeys(name for names in _SETTINGS_BY_TASK.values() for name in names))
_KV_16_BIT = ("bf16", "fp16")  # the KV cache follows the compute dtype unless asked otherwise
_COMPONENT_ORDER = get_args(Component)  # the contract's order: weights first, overhead last


_ASIDES = ("chit_chat", "off_topic", "unsized_model")  # no sizing question: nothing "understood" to show


def render_parse_error(err: ParseError, lang: str = "ru", catalog: Catalog | None = None) -> str:
    """What is missing or wrong, what was understood, and an example; `catalog` names candidates."""
    lang = normalize_lang(lang)
    names = [_model_name(c, catalog or _default_catalog()) for c in err.candidates]
    if err.code == "ambiguous_model":
        lines = [t("parse-error-ambiguous_model", lang, candidates=", ".join(names))]
    elif err.code == "unknown_model":
        lines = [t("parse-error-unknown_model", lang, name=err.value or "?")]
        if names:
            lines.append(t("parse-error-unknown_model-suggest", lang, candidates=", ".join(names)))
    elif err.code in ("too_large", "invalid"):
        lines = [t(f"parse-error-{err.code}", lang, field=label("field", err.field or "request", lang))]
    else:
        lines = [
            translate(concept_key("parse-error", err.code), lang)
            or t("parse-error-invalid", lang, field=label("field", err.field or "request", lang))
        ]
    understood = describe_settings(err.partial, lang, cards=True) if err.code not in _ASIDES else ""
    if understood:
        lines.append(t("parse-understood", lang, settings=understood))
    if err.code in ("empty", "missing_model", "unknown_model"):
        lines.append(t("parse-example-hint", lang, example=t("parse-example", lang)))
    return "\n".join(lines)


def describe_settings(fields: Mapping[str, Any], lang: str, *, cards: bool = False, tts: bool = False) -> str:
    """'llama-3-70b, inference, int4, context 32,768 tokens, 4 users' from (some) request fields;
    `cards`: the cards named too ('2× RTX 4090 48 GB'), where nothing else on screen names them."""
    task = fields.get("task")
    names = _SETTINGS_BY_TASK.get(Task(task), _ALL_SETTINGS) if task in set(Task) else _ALL_SETTINGS
    speech = fields.get("beam_size") is not None
    tts = tts or _is_tts(fields.get("model"))  # a text-to-speech model: no context, users are texts
    names = _SPEECH_SETTINGS if speech else _TTS_SETTINGS if tts else names
    parts = [_model_word(fields["model"], _default_catalog())] if fields.get("model") else []
    if task:
        parts.append(label("task", str(task), lang))
    named = _cards_word(fields, lang) if cards else None
    if named:
        parts.append(named)
    for name in names:
        value = fields.get(name)
        if name == "lora_rank" and str(fields.get("method", "full")) == "full":
            continue
        if name == "num_gpus" and named:  # said with the card: '2× RTX 4090 48 GB'
            continue
        text = _SETTING[name](value, lang) if value is not None else None
        if speech and name == "concurrency" and value is not None:
            text = t("setting-windows", lang, count=int(value))
        if text:
            parts.append(text)
    return ", ".join(parts)


def _cards_word(fields: Mapping[str, Any], lang: str) -> str | None:
    """'2× RTX 4090 48 GB' for the cards named (the catalogue's short names), None when none is."""
    catalog = _default_catalog()
    if catalog is None:
        return None
    count = int(fields.get("num_gpus") or 1)
    names = []
    for gpu in fields.get("gpus") or ():
        try:
            spec = catalog.gpu(str(gpu))
        except CatalogError:
            continue
        names.append(t("config", lang, count=count, gpu=spec.short_name or spec.name))
    return ", ".join(names) or None


SMALL_BELOW = 1000 * MiB  # from here on, GB: '0,98 ГБ' rather than '1 003 МБ'


def format_bytes(n_bytes: float, lang: str) -> str:
    """'26.9 GB' / '26,9 ГБ': one unit, as cards are named — an "RTX 4090 48 GB" holds 48 × 2³⁰
    bytes, which is what drivers report — so a size reads straight against the card's name.
    Below 1000 MB in MB (2²⁰ bytes), so a size never reads as four digits of MB. The JSON contract
    keeps bytes."""
    if abs(n_bytes) < SMALL_BELOW:
        return t("bytes-small", lang, mb=_as_shown(n_bytes / MiB, _WHOLE))
    return t("bytes", lang, gb=_as_shown(n_bytes / GiB, _TENTHS))


_WHOLE, _TENTHS = Decimal(1), Decimal("0.1")  # the fraction digits of `bytes-small` and `bytes`


def _as_shown(value: float, quantum: Decimal) -> Decimal | float:
    """`value` rounded as the message shows it, so sizes that read alike are one translation, formatted
    once (`core.language.words`), not one per byte count. Babel, under Fluent's NUMBER, rounds the decimal of
    the
    float's repr in the current decimal context: the same steps here, so the text is the same. A
    negative value stays as it is: one rounded to -0 would share the translation cache's entry of 0
    (equal, and hashed alike), but reads "-0"."""
    return Decimal(repr(value)).quantize(quantum) if value >= 0 else value


# --- settings ----------------------------------------------------------------------------------


def _model_word(model: Any, catalog: Catalog | None) -> str:
    """The model as the catalogue names it ('Llama 3.1 8B', not its id), or its size."""
    if isinstance(model, CustomModel):
        return f"{model.params_b:g}B"
    if isinstance(model, Mapping) and "params_b" in model:
        return f"{model['params_b']:g}B"
    return _model_name(str(model), catalog)


def _switch(key: str) -> Callable[[Any, str], str | None]:
    return lambda value, lang: t(key, lang) if value else None


def _unless(group: str, *defaults: str) -> Callable[[Any, str], str | None]:
    """The value's label, unless it is what the estimator would take anyway (noise in a headline)."""
    return lambda value, lang: label(group, str(value), lang) if str(value) not in defaults else None


_SETTING: dict[str, Callable[[Any, str], str | None]] = {
    "precision": lambda v, lang: label("precision", str(v), lang),
    "engine": _unless("engine", "diffusers"),  # the engine decides the numbers: always named for LLMs
    "method": lambda v, lang: label("method", str(v), lang),
    "optimizer": lambda v, lang: label("optimizer", str(v), lang),
    "context_length": lambda v, lang: t("setting-context", lang, tokens=int(v)),
    "concurrency": lambda v, lang: t("setting-users", lang, count=int(v)),
    "kv_cache_precision": lambda v, lang: (
        t("setting-kv", lang, precision=label("precision", str(v), lang))
        if str(v) not in _KV_16_BIT
        else None
    ),
    "lora_rank": lambda v, lang: t("setting-lora-rank", lang, rank=int(v)),
    "batch_size": lambda v, lang: t("setting-batch", lang, count=int(v)),
    "seq_len": lambda v, lang: t("setting-seq-len", lang, tokens=int(v)),
    "gradient_accumulation_steps": lambda v, lang: (
        t("setting-accumulation", lang, steps=int(v)) if int(v) > 1 else None
    ),
    "gradient_checkpointing": _switch("setting-checkpointing"),
    "vae_tiling": _switch("setting-tiling"),
    "vae_slicing": _switch("setting-slicing"),
    "num_gpus": lambda v, lang: t("setting-gpus", lang, count=int(v)) if int(v) > 1 else None,
    "sharding": _unless("sharding", "none"),
    "cpu_offload": _unless("offload", "none"),
    "resolution": lambda v, lang: t("setting-resolution", lang, width=str(v[0]), height=str(v[1])),
    "images": lambda v, lang: t("setting-images", lang, count=int(v)),
    "frames": lambda v, lang: t("setting-frames", lang, count=int(v)),
    "images_per_prompt": lambda v, lang: t("setting-prompt-images", lang, count=int(v)) if int(v) else None,
    "beam_size": lambda v, lang: t("setting-beam", lang, count=int(v)),
}


# --- blocks of the answer --------------------------------------------------------------------


def verdicts_to_show(result: Result) -> list[Verdict]:
    """The GPU configurations an answer names, in order: the recommended one, its alternatives, then
    where the line runs: the biggest single card that is too small and the smallest that fit (several
    cards when nothing fits on one; the closest to fitting when nothing fits at all). The CLI and the
    bot both show these, so they never disagree on which cards to name."""
    chosen: dict[tuple[str, int], Verdict] = {}
    offered = [r for r in [result.recommendation, *result.alternatives] if r is not None]
    offered_rows = [verdict_of(r, result) for r in offered]
    for v in [*(v for v in offered_rows if v is not None), *_where_the_line_runs(result.verdicts)]:
        chosen.setdefault((v.gpu, v.count), v)
    return list(chosen.values())[:MAX_VERDICTS]


def _where_the_line_runs(verdicts: Sequence[Verdict]) -> list[Verdict]:
    singles = sorted((v for v in verdicts if v.count == 1), key=lambda v: v.usable_bytes)
    short = [v for v in singles if v.verdict == "does_not_fit"]
    fitting = [v for v in singles if v.verdict != "does_not_fit"]
    if not fitting:
        multi = (v for v in verdicts if v.count > 1 and v.verdict != "does_not_fit")
        fitting = sorted(multi, key=lambda v: (v.count, v.usable_bytes))
    if not fitting:  # nothing fits at all: the configurations closest to fitting
        fitting = sorted(verdicts, key=lambda v: v.headroom, reverse=True)[:2]
    return [*short[-1:], *fitting]


def verdict_of(rec: Recommendation, result: Result) -> Verdict | None:
    """The verdict of a recommended configuration. The verdicts stop at the first card count that
    fits, so an offer of more cards (8 where 4 fit) is sized here from the same card's memory."""
    rows = [v for v in result.verdicts if v.gpu == rec.gpu]
    exact = next((v for v in rows if v.count == rec.count), None)
    if exact is not None or not rows:
        return exact
    usable = rows[0].usable_bytes
    fields = verdict_fields(rec.gpu, rec.gpu_name, usable, rec.count, rec.bytes_per_gpu)
    return Verdict(**{**fields, "verdict": rec.verdict})  # the bands the estimate judged it by


def needs_mitigations(result: Result) -> bool:
    """Whether "what to do if it does not fit" is worth showing: the request does not fit the
    cards asked for on a rentable GPU, or only tightly. When it fits comfortably the list is noise."""
    rec = result.recommendation
    if not result.mitigations:
        return False
    return rec is None or not rec.in_offers or rec.verdict != "fits" or rec.count > result.request.num_gpus


# Mitigation parameters that hold an id: shown by their label (`precision-awq-int4` → "AWQ 4 бита").
_LABELLED_PARAMS = {
    "precision": "precision",
    "compute": "precision",
    "kv_cache_precision": "precision",
    "sharding": "sharding",
}


def action_text(m: Mitigation, lang: str) -> str:
    """What a mitigation does, in words: 'shorten the context to 16,384 tokens'. Ids among its
    parameters read as their labels, a model as its catalogue name."""
    params = _labelled(m.params, lang)
    if "model_name" in params:
        params["model"] = params["model_name"]
    return translate(concept_key("action", m.action), lang, **params) or _humanize(m.action, m.params)


def _humanize(code: str, params: Mapping[str, object]) -> str:
    """An action without a translation still reads: 'use flash decoding (block=16)'."""
    details = ", ".join(f"{k}={v}" for k, v in params.items())
    return code.replace("_", " ") + (f" ({details})" if details else "")


def assumption_texts(assumptions: Sequence[Assumption], lang: str) -> list[str]:
    """The assumptions in words, each once; the core's English text where no translation exists.
    A weight format among the parameters reads as its label ("GGUF Q4_K_M", not "q4_k_m")."""
    texts = [
        translate(concept_key("assumption", a.code), lang, **_labelled(a.params, lang)) or a.text
        for a in assumptions
    ]
    return list(dict.fromkeys(texts))


def _labelled(params: Mapping[str, str | int | float], lang: str) -> dict[str, str | int | float]:
    return {
        k: label(_LABELLED_PARAMS[k], str(v), lang) if k in _LABELLED_PARAMS else v for k, v in params.items()
    }


def _default_catalog() -> Catalog | None:
    try:
        return default_catalog()
    except CatalogError:  # names are a courtesy: without the data files, show the ids
        return None


def _model_name(model_id: str, catalog: Catalog | None) -> str:
    model = catalog.models.get(model_id) if catalog else None
    return model.name if model else model_id


def _is_tts(model: object) -> bool:
    catalog = _default_catalog()
    spec = catalog.models.get(str(model)) if catalog is not None and model else None
    return spec is not None and spec.kind == "tts"
