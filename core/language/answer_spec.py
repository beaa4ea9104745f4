"""The answer's lines for speculative decoding and hybrid models (`Answer.extras`), shown under the
breakdown: the draft's share with and without it and the expected speed-up; how many layers of a
hybrid keep a KV cache and the state the others keep per request."""

from __future__ import annotations

from core.catalogue.catalog import default_catalog
from core.contract import Result
from core.language.phrases import format_bytes
from core.language.words import t
from core.sizing.speculative import PARTS


def _decimal(x: float, lang: str) -> str:
    text = f"{x:.1f}"
    return text.replace(".", ",") if lang == "ru" else text


def _range(low: float, high: float, lang: str) -> str:
    """'2,2–3,4' / '1.8' (one figure where both round alike)."""
    a, b = _decimal(low, lang), _decimal(high, lang)
    return a if a == b else f"{a}–{b}"


def speculative_line(result: Result, breakdown: dict[str, int], lang: str) -> str | None:
    """'⚡ Speculative decoding (EAGLE-3 head, k = 3): +0.9 GB per card, 17.6 GB without it. …' on the
    configuration whose breakdown is shown."""
    spec = result.speculative
    if spec is None:
        return None
    extra = sum(breakdown.get(key, 0) for key in PARTS)
    method = t(f"speculative-method-{spec.method.value}", lang, draft=_draft_name(result))
    return t(
        "answer-speculative",
        lang,
        method=method,
        tokens=spec.num_speculative_tokens,
        extra=format_bytes(extra, lang),
        without=format_bytes(sum(breakdown.values()) - extra, lang),
        speedup=_range(spec.speedup_low, spec.speedup_high, lang),
        accept_low=round(spec.acceptance_low * 100),
        accept_high=round(spec.acceptance_high * 100),
        cite=spec.cite,
    )


def _draft_name(result: Result) -> str:
    draft = result.speculative.draft_model if result.speculative else None
    spec = default_catalog().models.get(draft or "")
    return spec.name if spec else (draft or "")


def hybrid_line(result: Result, lang: str) -> str | None:
    """'🧬 Hybrid model: only 12 of 48 layers keep a KV cache; …' from the note `hybrid_state`."""
    said = next((a for a in result.assumptions if a.code == "hybrid_state"), None)
    if said is None:
        return None
    p = said.params
    return t(
        "answer-hybrid",
        lang,
        attention=p["attention"],
        layers=p["layers"],
        recurrent=p["recurrent"],
        state=format_bytes(float(p["per_sequence_bytes"]), lang),
        fp32=str(p["fp32"]),
    )


def feature_lines(result: Result, breakdown: dict[str, int], lang: str) -> tuple[str, ...]:
    lines = (hybrid_line(result, lang), speculative_line(result, breakdown, lang))
    return tuple(line for line in lines if line)
