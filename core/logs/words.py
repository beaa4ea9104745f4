"""A log's answer in words (`core/locales/<lang>/logs.ftl`): what was read, what the run needed, what
to change, what to rent. Plain text lines; the bot escapes them for HTML, the CLI prints them."""

from __future__ import annotations

from dataclasses import dataclass

from core.catalogue.catalog import Catalog
from core.catalogue.offers import RentalOffer
from core.language.answer import build_answer
from core.language.cards import config_text, offer_price, short_gpu_name
from core.language.phrases import format_bytes
from core.language.words import normalize_lang, t

from .advice import LogAdvice, advise_log
from .parse import MAX_LOG_CHARS, read_log

MAX_CARDS_NAMED = 3
MAX_MITIGATIONS = 3
MAX_PROCESSES = 3


@dataclass(frozen=True)
class LogAnswer:
    lines: tuple[str, ...]
    offer: RentalOffer | None  # what the rent button points at
    advice: LogAdvice | None  # None: the text held no log this reader knows

    @property
    def text(self) -> str:
        return "\n".join(self.lines)


def answer_log(text: str, catalog: Catalog, lang: str, currency: str | None = None) -> LogAnswer:
    """The answer to a pasted text: the log's reading and advice, or the one clear "unknown format"."""
    lang = normalize_lang(lang)
    reading = read_log(text)
    if reading is None:
        return LogAnswer((t("log-unknown", lang, limit=MAX_LOG_CHARS),), None, None)
    advice = advise_log(reading, catalog)
    lines = [t(f"log-title-{reading.kind}", lang), *_card_lines(advice, lang), *_read_lines(advice, lang)]
    lines += _need_lines(advice, lang)
    lines += ["", *_change_lines(advice, lang)]
    offer, rent_line = _rent(advice, catalog, lang, currency)
    if rent_line:
        lines += ["", rent_line]
    return LogAnswer(tuple(lines), offer, advice)


def _rent(a: LogAdvice, catalog: Catalog, lang: str, currency: str | None) -> tuple[RentalOffer | None, str]:
    """The offer where the measured need fits; without a measured need, the estimate's own
    recommendation for the model the log names (said to be estimated)."""
    if a.rent is not None and a.rent.offer is not None:
        config = config_text(a.rent.offer.count, a.rent.gpu.name, lang)
        return a.rent.offer, t(
            "log-rent", lang, config=config, price=offer_price(a.rent.offer, lang, currency)
        )
    if a.need_bytes is not None:
        return None, t("log-rent-none", lang, need=format_bytes(a.need_bytes, lang))
    rec = a.result.recommendation if a.result is not None else None
    offer = next((o for o in catalog.offers if rec is not None and o.id == rec.offer_id), None)
    if offer is None or rec is None:
        return None, ""
    config = config_text(offer.count, rec.gpu_name, lang)
    return offer, t("log-rent-estimated", lang, config=config, price=offer_price(offer, lang, currency))


def _card_lines(a: LogAdvice, lang: str) -> list[str]:
    r = a.reading
    total = format_bytes(r.total_bytes, lang) if r.total_bytes else None
    count = f"{r.gpu_count}× " if r.gpu_count > 1 else ""
    if a.cards:
        names = t("log-or", lang).join(short_gpu_name(g.name) for g in a.cards[:MAX_CARDS_NAMED])
        key = "log-card" if total else "log-card-named"
        return [t(key, lang, cards=count + names, total=total or "")]
    if r.gpu_name or total:
        name = (r.gpu_name or "").strip(" .") or t("log-card-nameless", lang)
        return [t("log-card-unknown", lang, name=count + name, total=total or "—")]
    return []


def _read_lines(a: LogAdvice, lang: str) -> list[str]:
    r = a.reading
    out = []
    if r.used_bytes is not None and r.kind != "nvidia_smi":
        out.append(t("log-used", lang, used=format_bytes(r.used_bytes, lang)))
    if r.kind == "nvidia_smi":
        out += [
            t("log-smi-gpu", lang, index=g.index, used=format_bytes(g.used_bytes, lang),
              total=format_bytes(g.total_bytes, lang))
            for g in r.gpus[:4]
        ]  # fmt: skip
        out += [
            t("log-smi-process", lang, name=name[-40:], used=format_bytes(used, lang))
            for _, name, used in sorted(r.processes, key=lambda p: -p[2])[:MAX_PROCESSES]
        ]
    parts = [
        (key, value)
        for key, value in (
            ("weights", r.weights_bytes),
            ("kv", r.kv_cache_bytes),
            ("compute", r.activation_bytes),
        )
        if value
    ]
    if parts:
        shown = " · ".join(t(f"log-part-{key}", lang, size=format_bytes(v, lang)) for key, v in parts)
        out.append(shown)
    if r.kv_tokens and r.context_length and r.kind == "vllm":
        out.append(t("log-kv-tokens", lang, tokens=r.kv_tokens, context=r.context_length))
    if r.kv_needed_bytes and r.kv_cache_bytes is not None:
        needed, kv = format_bytes(r.kv_needed_bytes, lang), format_bytes(r.kv_cache_bytes, lang)
        out.append(t("log-kv-needed", lang, context=r.context_length or 0, needed=needed, kv=kv))
    if r.layers:
        out.append(t("log-layers", lang, done=r.layers[0], total=r.layers[1]))
    if r.failed_bytes is not None:
        out.append(t("log-failed", lang, failed=format_bytes(r.failed_bytes, lang)))
    return out


def _need_lines(a: LogAdvice, lang: str) -> list[str]:
    if a.need_bytes is None:
        short = a.short_bytes
        return [t("log-short", lang, short=format_bytes(short, lang))] if short else []
    line = t(f"log-need-{a.need}", lang, need=format_bytes(a.need_bytes, lang))
    short = a.short_bytes
    if short and a.reading.failure:
        line += " " + t("log-short", lang, short=format_bytes(short, lang))
    return [line]


def _change_lines(a: LogAdvice, lang: str) -> list[str]:
    out = [t("log-change", lang)]
    out += ["• " + t(f"log-action-{x.code}", lang, **_shown(x.params, lang)) for x in a.actions]
    if a.result is not None:
        answer = build_answer(a.result, lang)
        out += [f"• {m}" for m in (*answer.mitigations, *answer.extra_mitigations)[:MAX_MITIGATIONS]]
        name = a.model.name if a.model else ""
        if a.cards:
            config = config_text(a.reading.gpu_count, a.cards[0].name, lang)
            out.append(t("log-model", lang, model=name, config=config))
        else:
            out.append(t("log-model-any", lang, model=name))
    else:
        out.append(
            t("log-ask-model", lang)
            if a.reading.model is None
            else t("log-unknown-model", lang, model=a.reading.model[-60:])
        )
    return out


def _shown(params: dict[str, str | int | float], lang: str) -> dict[str, str | int | float]:
    """Byte counts among the parameters read as sizes."""
    return {k: format_bytes(float(v), lang) if k in ("cached", "asked") else v for k, v in params.items()}
