"""The human answer of `python -m core ask`: plain text from a `Result`, in Russian or English.

Every word comes from the locale files through `core.texts`; this module only chooses what to
show and in which order: the model and settings, the total, the breakdown, the recommended card
and a few others, speed, what to do if it does not fit, server advice, the assumptions.

The choices are public (`verdicts_to_show`, `speed_to_show`, `needs_mitigations`, `price_text`,
`action_text`, `assumption_texts`...) so that the bot's HTML answer makes the same ones.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any, get_args

from core.advice import verdict_fields
from core.catalog import Catalog, default_catalog
from core.contract import (
    Assumption,
    Component,
    CustomModel,
    Mitigation,
    Recommendation,
    Result,
    Task,
    Throughput,
    Verdict,
)
from core.errors import CatalogError, ParseError
from core.texts import concept_key, label, normalize_lang, t, translate
from core.units import GB, MB, GiB, MiB

MAX_VERDICTS = 5  # with the recommendation: enough to compare, short enough for a phone
MITIGATIONS = 6

# The settings worth naming for each task, in the order a practitioner says them.
_SETTINGS_BY_TASK: dict[Task, tuple[str, ...]] = {
    Task.INFERENCE: (
        "precision",
        "engine",
        "context_length",
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
_ALL_SETTINGS = tuple(dict.fromkeys(name for names in _SETTINGS_BY_TASK.values() for name in names))
_KV_16_BIT = ("bf16", "fp16")  # the KV cache follows the compute dtype unless asked otherwise
_COMPONENT_ORDER = get_args(Component)  # the contract's order: weights first, overhead last


def render_answer(result: Result, lang: str = "ru", notes: Sequence[Assumption] = ()) -> str:
    """The full answer; `notes` are the parser's assumptions (`core.parse.understand`)."""
    lang = normalize_lang(lang)
    blocks = [
        t(
            "answer-headline",
            lang,
            model=result.model.name,
            settings=describe_settings(result.request.model_dump(exclude={"model"}), lang),
        ),
        _total(result, lang),
        _breakdown(result, lang),
        _configurations(result, lang),
        _speed(result, lang),
        _mitigations(result, lang),
        _host(result, lang),
        _assumptions([*notes, *result.assumptions], lang),
    ]
    return "\n\n".join(block for block in blocks if block)


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
    understood = describe_settings(err.partial, lang)
    if understood:
        lines.append(t("parse-understood", lang, settings=understood))
    if err.code in ("empty", "missing_model", "unknown_model"):
        lines.append(t("parse-example-hint", lang, example=t("parse-example", lang)))
    return "\n".join(lines)


def describe_settings(fields: Mapping[str, Any], lang: str) -> str:
    """'llama-3-70b, inference, int4, context 32,768 tokens, 4 users' from (some) request fields."""
    task = fields.get("task")
    names = _SETTINGS_BY_TASK.get(Task(task), _ALL_SETTINGS) if task in set(Task) else _ALL_SETTINGS
    parts = [_model_word(fields["model"])] if fields.get("model") else []
    if task:
        parts.append(label("task", str(task), lang))
    for name in names:
        value = fields.get(name)
        if name == "lora_rank" and str(fields.get("method", "full")) == "full":
            continue
        text = _SETTING[name](value, lang) if value is not None else None
        if text:
            parts.append(text)
    return ", ".join(parts)


def format_bytes(n_bytes: float, lang: str) -> str:
    """'45.3 GB (42.2 GiB)' / '45,3 ГБ (42,2 ГиБ)': decimal and binary units, never a bare 'GB'."""
    if abs(n_bytes) < GB:
        return t("bytes-small", lang, mb=n_bytes / MB, mib=n_bytes / MiB)
    return t("bytes", lang, gb=n_bytes / GB, gib=n_bytes / GiB)


# --- settings ----------------------------------------------------------------------------------


def _model_word(model: Any) -> str:
    if isinstance(model, CustomModel):
        return f"{model.params_b:g}B"
    if isinstance(model, Mapping) and "params_b" in model:
        return f"{model['params_b']:g}B"
    return str(model)


def _switch(key: str) -> Callable[[Any, str], str | None]:
    return lambda value, lang: t(key, lang) if value else None


def _unless(group: str, *defaults: str) -> Callable[[Any, str], str | None]:
    """The value's label, unless it is what the estimator would take anyway (noise in a headline)."""
    return lambda value, lang: label(group, str(value), lang) if str(value) not in defaults else None


_SETTING: dict[str, Callable[[Any, str], str | None]] = {
    "precision": lambda v, lang: label("precision", str(v), lang),
    "engine": _unless("engine", "transformers", "diffusers"),
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
}


# --- blocks of the answer --------------------------------------------------------------------


def _total(result: Result, lang: str) -> str:
    lines = [t("answer-total", lang, bytes=format_bytes(result.total_bytes, lang))]
    low, high = result.range.low_bytes, result.range.high_bytes
    if high > low:
        lines.append(t("answer-range", lang, low=format_bytes(low, lang), high=format_bytes(high, lang)))
    return " ".join(lines)


def _breakdown(result: Result, lang: str) -> str:
    order = [*_COMPONENT_ORDER, *sorted(set(result.breakdown) - set(_COMPONENT_ORDER))]
    rows = [
        (label("component", c, lang), format_bytes(result.breakdown[c], lang))
        for c in order
        if result.breakdown.get(c) or (c == "overhead" and c in result.breakdown)
    ]
    width = max((len(name) for name, _ in rows), default=0)
    return "\n".join([t("answer-breakdown", lang), *(f"  {name:<{width}}  {size}" for name, size in rows)])


def _configurations(result: Result, lang: str) -> str:
    rec = result.recommendation
    offered = {(r.gpu, r.count) for r in [rec, *result.alternatives] if r is not None}
    if rec is None:
        lines = [t("answer-nothing-fits", lang)]
    else:
        lines = _offer_lines(rec, "answer-recommended", result, lang)
    for alt in result.alternatives:
        if rec is None or (alt.gpu, alt.count) != (rec.gpu, rec.count):
            lines += _offer_lines(alt, "answer-alternative", result, lang)
    others = [v for v in verdicts_to_show(result) if (v.gpu, v.count) not in offered]
    if others:
        lines.append(t("answer-others", lang))
        lines.extend(f"  {_verdict_line(v, lang)}" for v in others)
    return "\n".join(lines)


def _offer_lines(rec: Recommendation, key: str, result: Result, lang: str) -> list[str]:
    reason = label("reason", rec.reason, lang)
    line = t(key, lang, reason=reason, line=_offer_line(rec, result, lang), price=price_text(rec, lang))
    return [line, f"  {rec.url}"] if rec.url else [line]


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
    return Verdict(**verdict_fields(rec.gpu, rec.gpu_name, usable, rec.count, rec.bytes_per_gpu))


def _config(count: int, gpu_name: str, lang: str) -> str:
    return t("config", lang, count=count, gpu=gpu_name)


def _verdict_line(v: Verdict, lang: str) -> str:
    config, verdict = _config(v.count, v.gpu_name, lang), label("verdict", v.verdict, lang)
    if v.verdict == "does_not_fit":
        return t(
            "answer-short",
            lang,
            config=config,
            verdict=verdict,
            missing=format_bytes(-v.headroom_bytes, lang),
        )
    return t(
        "answer-free",
        lang,
        config=config,
        verdict=verdict,
        free=format_bytes(v.headroom_bytes, lang),
        percent=round(v.headroom * 100),
    )


def _offer_line(rec: Recommendation, result: Result, lang: str) -> str:
    verdict = verdict_of(rec, result)
    if verdict is not None:
        return _verdict_line(verdict, lang)
    return f"{_config(rec.count, rec.gpu_name, lang)}: {label('verdict', rec.verdict, lang)}"


def price_text(rec: Recommendation, lang: str) -> str:
    """'149 RUB/hour', 'price on request', or 'not in our offers' (plain text)."""
    if not rec.in_offers:
        return t("price-not-offered", lang)
    if rec.price_per_hour is None or rec.currency is None:
        return t("price-on-request", lang)
    return t("price-per-hour", lang, price=rec.price_per_hour, currency=rec.currency)


def speed_to_show(result: Result) -> Throughput | None:
    """The decode speed worth naming: on the recommended configuration, else the first one sized."""
    rec = result.recommendation
    return next(
        (s for s in result.throughput if rec and (s.gpu, s.count) == (rec.gpu, rec.count)),
        next(iter(result.throughput), None),
    )


def gpu_name(gpu: str, result: Result) -> str:
    """A GPU's name as the result gives it (verdicts, recommendations); its id if none names it."""
    named: list[Verdict | Recommendation] = [*result.verdicts, *result.alternatives]
    if result.recommendation:
        named.append(result.recommendation)
    return next((v.gpu_name for v in named if v.gpu == gpu), gpu)


def _speed(result: Result, lang: str) -> str:
    pick = speed_to_show(result)
    if pick is None:
        return ""
    return t(
        "answer-speed",
        lang,
        config=_config(pick.count, gpu_name(pick.gpu, result), lang),
        per_user=pick.tokens_per_s,
        total=pick.aggregate_tokens_per_s,
    )


def needs_mitigations(result: Result) -> bool:
    """Whether "what to do if it does not fit" is worth showing: the request does not fit the
    cards asked for on a rentable GPU, or only tightly. When it fits comfortably the list is noise."""
    rec = result.recommendation
    if not result.mitigations:
        return False
    return rec is None or not rec.in_offers or rec.verdict != "fits" or rec.count > result.request.num_gpus


def _mitigations(result: Result, lang: str) -> str:
    if not needs_mitigations(result):
        return ""
    lines = [t("answer-mitigations", lang)]
    cards = result.request.num_gpus
    lines.extend(f"  - {_mitigation_line(m, lang, cards)}" for m in result.mitigations[:MITIGATIONS])
    return "\n".join(lines)


def mitigation_outcome(m: Mitigation, lang: str, cards: int) -> str:
    """Whether a mitigation then fits, and where (`cards`: the requested number of GPUs)."""
    if m.fits_gpu_name and m.fits_count and not m.fits and m.fits_count > cards:
        return t("mitigation-fits-with-more", lang, cards=cards, count=m.fits_count, gpu=m.fits_gpu_name)
    if m.fits_gpu_name and m.fits_count:
        return t("mitigation-fits-on", lang, count=m.fits_count, gpu=m.fits_gpu_name)
    if m.fits:
        return t("mitigation-fits", lang)
    return t("mitigation-still-short", lang, count=cards)


def action_text(m: Mitigation, lang: str) -> str:
    """What a mitigation does, in words: 'shorten the context to 16,384 tokens'."""
    return translate(concept_key("action", m.action), lang, **m.params) or _humanize(m.action, m.params)


def _mitigation_line(m: Mitigation, lang: str, cards: int) -> str:
    outcome = mitigation_outcome(m, lang, cards)
    return t(
        "answer-mitigation",
        lang,
        action=action_text(m, lang),
        saves=format_bytes(m.saves_bytes, lang),
        total=format_bytes(m.total_bytes, lang),
        outcome=outcome,
    )


def _humanize(code: str, params: Mapping[str, object]) -> str:
    """An action without a translation still reads: 'use flash decoding (block=16)'."""
    details = ", ".join(f"{k}={v}" for k, v in params.items())
    return code.replace("_", " ") + (f" ({details})" if details else "")


def _host(result: Result, lang: str) -> str:
    host = result.host
    return t(
        "answer-host",
        lang,
        ram_min=format_bytes(host.ram_min_bytes, lang),
        ram_recommended=format_bytes(host.ram_recommended_bytes, lang),
        disk=format_bytes(host.disk_bytes, lang),
        disk_kind=label("disk", host.disk_kind, lang),
    )


def assumption_texts(assumptions: Sequence[Assumption], lang: str) -> list[str]:
    """The assumptions in words, each once; the core's English text where no translation exists."""
    texts = [translate(concept_key("assumption", a.code), lang, **a.params) or a.text for a in assumptions]
    return list(dict.fromkeys(texts))


def _assumptions(assumptions: Sequence[Assumption], lang: str) -> str:
    unique = assumption_texts(assumptions, lang)
    if not unique:
        return ""
    return "\n".join([t("answer-assumptions", lang), *(f"  - {text}" for text in unique)])


def _default_catalog() -> Catalog | None:
    try:
        return default_catalog()
    except CatalogError:  # names are a courtesy: without the data files, show the ids
        return None


def _model_name(model_id: str, catalog: Catalog | None) -> str:
    model = catalog.models.get(model_id) if catalog else None
    return model.name if model else model_id
