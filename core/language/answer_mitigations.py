"""The answer's lines of what to do when it does not fit (`Result.mitigations`), and what an answer
changed against the previous one (`Answer.change`): 'was … → now …'."""

from __future__ import annotations

from core.contract import Mitigation, Result, Verdict
from core.language.cards import config_text, price_of, short_gpu_name, shown_kind
from core.language.phrases import action_text, format_bytes
from core.language.words import label, t


def without_checkpointing_lines(result: Result, lang: str) -> tuple[str, ...]:
    """'Without gradient checkpointing: 79 GB per card', when that is more than the estimate."""
    without = result.without_checkpointing_bytes
    if without is None or without <= result.total_bytes:
        return ()
    return (t("answer-without-checkpointing", lang, need=format_bytes(without, lang)),)


def mitigations_title(target: Verdict | None, lang: str) -> str:
    if target is not None and target.verdict != "fits":  # "how to fit on your card" only when it does not
        return t("answer-mitigations-own", lang, config=config_text(target.count, target.gpu_name, lang))
    return t("answer-mitigations", lang)


def mitigation_line(m: Mitigation, lang: str, cards: int, from_shown: bool = True) -> str:
    return t(
        "answer-mitigation" if from_shown else "answer-mitigation-to",
        lang,
        icon="✅" if m.fits else "❌",
        action=action_text(m, lang),
        saves=format_bytes(m.saves_bytes, lang),
        total=format_bytes(m.total_bytes, lang),
        outcome=mitigation_outcome(m, lang, cards),
    )


def mitigation_outcome(m: Mitigation, lang: str, cards: int) -> str:
    """Whether a mitigation then fits, and where (`cards`: the requested number of GPUs)."""
    gpu = short_gpu_name(m.fits_gpu_name) if m.fits_gpu_name else None
    if gpu and m.fits_count and not m.fits and m.fits_count > cards:
        return t("mitigation-fits-with-more", lang, cards=cards, count=m.fits_count, gpu=gpu)
    if gpu and m.fits_count:
        return t("mitigation-fits-on", lang, count=m.fits_count, gpu=gpu)
    if m.fits:
        return t("mitigation-fits", lang)
    return t("mitigation-still-short", lang, count=cards)


def change_side(result: Result, lang: str, currency: str | None = None) -> str:
    """What the answer leads with, in one line: the user's own card and its verdict where the lead
    names it (another configuration than the one to rent), else the configuration to rent."""
    rec = result.recommendation
    target = result.target
    if target is not None and (rec is None or (target.gpu, target.count) != (rec.gpu, rec.count)):
        return t(
            "change-side-own",
            lang,
            total=format_bytes(target.bytes_per_gpu, lang),
            config=config_text(target.count, target.gpu_name, lang),
            verdict=label("verdict", shown_kind(target), lang),
        )
    if rec is None:
        return t("change-side-none", lang, total=format_bytes(result.total_bytes, lang))
    return t(
        "change-side",
        lang,
        total=format_bytes(rec.bytes_per_gpu, lang),  # per card, on the configuration it names
        config=config_text(rec.count, rec.gpu_name, lang),
        price=price_of(rec, lang, currency),
    )


def change_line(previous: Result, result: Result, lang: str, currency: str | None = None) -> str | None:
    """'Было: 16,4 ГБ · 1× RTX 4090 48 GB · 149 ₽/ч → стало: 9,1 ГБ · …' — like with like, what the
    lead shows on each side; None when nothing it shows changed (the line would compare equals)."""
    before, after = change_side(previous, lang, currency), change_side(result, lang, currency)
    if before == after:
        return None
    return t("change-line", lang, before=before, after=after)
