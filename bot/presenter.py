"""Core results and wizard screens → Telegram HTML. Every dynamic value is HTML-escaped here.

Frame texts come from the bot's locale files (`tr`); labels of core concepts (breakdown components,
verdicts, mitigation actions, assumptions, precision notes) from `core.texts.t`. What to show (which
GPU configurations, which speed, whether savings, prices) is decided by `core.render`, as for the CLI.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from html import escape
from typing import Any

from bot import flow
from bot.flow import Answers
from core import texts as core_texts
from core.catalog import Catalog
from core.contract import Assumption, Result, Verdict
from core.errors import CoreError, UnknownModelError
from core.render import (
    action_text,
    assumption_texts,
    format_bytes,
    gpu_name,
    mitigation_outcome,
    needs_mitigations,
    price_text,
    speed_to_show,
    verdict_of,
    verdicts_to_show,
)

Tr = Callable[..., str]

MAX_MESSAGE = 4096  # Telegram's limit, after entity parsing (tags and &-escapes only shorten it)
BUDGET = 3800  # keep well under Telegram's limit, whatever the translations add
MAX_MITIGATIONS = 4
KEEP_MITIGATIONS = 2  # when the message runs long, the first (cheapest) savings stay
SECTION_HEAD = 2  # a blank line and the heading
MAX_ASSUMPTIONS = 6
VERDICT_ICONS = {"fits": "✅", "tight": "⚠️", "does_not_fit": "❌"}


def core_label(group: str, value: str, lang: str, **args: Any) -> str:
    """A core concept's label (`component`, `kv_cache`), HTML-escaped (core texts are plain text)."""
    return escape(core_texts.label(group, value, lang, **args))


def size(n: int, lang: str) -> str:
    """GB and GiB side by side, in the core's words for the language."""
    return escape(format_bytes(n, lang))


def model_name(answers: Answers, catalog: Catalog) -> str:
    model = answers.get("model")
    if isinstance(model, dict):
        return f"{model.get('params_b', '?')}B"
    if not model:
        return ""
    spec = catalog.models.get(str(model))
    return spec.name if spec else str(model)


def _value_label(step: str, value: Any) -> str:
    if step in ("context_length", "seq_len") and isinstance(value, int):
        return flow.tokens_label(value)
    if step == "resolution" and isinstance(value, list | tuple):
        return f"{value[0]}×{value[1]}"
    return str(value)


def answers_line(answers: Answers, tr: Tr, lang: str, catalog: Catalog) -> str:
    """What the user chose so far, one line: `Run an LLM · Llama 3.1 8B · int4 · 32K`."""
    parts: list[str] = []
    task = answers.get("task")
    if task:
        parts.append(escape(tr(f"task-{task}")))
    if answers.get("model"):
        parts.append(f"<b>{escape(model_name(answers, catalog))}</b>")
    for step in flow.path(answers)[2:]:
        value = answers.get(step)
        if value is None:
            continue
        if step in ("method", "precision"):
            label = core_texts.label(step, str(value), lang)
        else:
            label = _value_label(step, value)
        parts.append(escape(tr(f"field-{step}", value=label)))
    return " · ".join(parts)


def render_step(
    step: str, answers: Answers, tr: Tr, lang: str, catalog: Catalog, *, note: str | None = None
) -> str:
    """The text of a wizard screen: what was chosen so far, the question, and the step's notes."""
    lines: list[str] = []
    chosen = answers_line(answers, tr, lang, catalog)
    if step != "task" and chosen:
        lines += [chosen, ""]
    if note:
        lines += [note, ""]
    lines.append(tr(f"ask-{step}", model=escape(model_name(answers, catalog))))
    notes = {"precision": flow.precision_choices(answers), "method": flow.METHODS}.get(step, ())
    if notes:
        lines.append("")
    for value in notes:
        name, note = core_label(step, value, lang), core_label(f"{step}-note", value, lang)
        lines.append(f"<b>{name}</b> — {note}")
    return "\n".join(lines)


def render_other_task(tr: Tr) -> str:
    return tr("task-other-note")


# ---------------------------------------------------------------- the result


def _verdict_line(v: Verdict, tr: Tr, lang: str, *, mark: str = "") -> str:
    return tr(
        "result-verdict-line",
        icon=VERDICT_ICONS.get(v.verdict, ""),
        count=v.count,
        gpu=escape(v.gpu_name),
        verdict=core_label("verdict", v.verdict, lang),
        need=size(v.bytes_per_gpu, lang),
        usable=size(v.usable_bytes, lang),
        headroom=round(v.headroom * 100),
        mark=mark,
    )


def render_result(
    result: Result,
    answers: Answers,
    tr: Tr,
    lang: str,
    catalog: Catalog,
    *,
    notes: Sequence[Assumption] = (),
) -> str:
    """The whole answer, HTML, under `BUDGET` UTF-16 units (whole trailing lines dropped if needed)."""
    head = [answers_line(answers, tr, lang, catalog), "", *_total_lines(result, tr, lang)]

    verdicts = ["", tr("result-verdicts")]
    rec = result.recommendation
    marks = {
        (a.gpu, a.count): tr("result-alternative", reason=core_label("reason", a.reason, lang))
        for a in result.alternatives
    }
    if rec is not None:
        marks[(rec.gpu, rec.count)] = tr("result-recommended")
    for v in verdicts_to_show(result):
        verdicts.append(_verdict_line(v, tr, lang, mark=marks.get((v.gpu, v.count), "")))
    verdicts.append(_offer_line(result, tr, lang))

    speed: list[str] = []
    tp = speed_to_show(result)
    if tp is not None:
        speed = [
            "",
            tr(
                "result-speed",
                per_user=f"{tp.tokens_per_s:.0f}",
                total=f"{tp.aggregate_tokens_per_s:.0f}",
                count=tp.count,
                gpu=escape(gpu_name(tp.gpu, result)),
            ),
        ]

    mitigations: list[str] = []
    if needs_mitigations(result):  # as the CLI: only when it does not fit comfortably
        mitigations = ["", tr("result-mitigations")]
        for m in result.mitigations[:MAX_MITIGATIONS]:
            mitigations.append(
                tr(
                    "result-mitigation",
                    action=escape(action_text(m, lang)),
                    saves=size(m.saves_bytes, lang),
                    total=size(m.total_bytes, lang),
                    icon="✅" if m.fits else "❌",
                    outcome=escape(mitigation_outcome(m, lang, result.request.num_gpus)),
                )
            )

    host = [
        "",
        tr(
            "result-host",
            ram=size(result.host.ram_min_bytes, lang),
            ram_better=size(result.host.ram_recommended_bytes, lang),
            disk=size(result.host.disk_bytes, lang),
            disk_kind=escape(core_texts.t(f"disk-{result.host.disk_kind}", lang)),
        ),
    ]

    assumptions: list[str] = []
    shown_assumptions = assumption_texts([*notes, *result.assumptions], lang)[:MAX_ASSUMPTIONS]
    if shown_assumptions:
        assumptions = ["", tr("result-assumptions"), *(f"• {escape(a)}" for a in shown_assumptions)]

    sections = [head, verdicts, speed, mitigations, host, assumptions]
    return fit(sections, [(assumptions, 0), (mitigations, KEEP_MITIGATIONS), (mitigations, 0)])


def _total_lines(result: Result, tr: Tr, lang: str) -> list[str]:
    """The total per GPU with its range, then the breakdown, largest part first."""
    lines = [
        tr(
            "result-total",
            total=size(result.total_bytes, lang),
            low=size(result.range.low_bytes, lang),
            high=size(result.range.high_bytes, lang),
        )
    ]
    for component, n in _components(result):
        name = core_label("component", component, lang)
        lines.append(tr("result-component", name=name, size=size(n, lang)))
    return lines


def _components(result: Result) -> list[tuple[str, int]]:
    """The parts of the breakdown to show, largest first: those above zero, and the overhead always."""
    parts = sorted(result.breakdown.items(), key=lambda kv: -kv[1])
    return [(component, n) for component, n in parts if n > 0 or component == "overhead"]


def _offer_line(result: Result, tr: Tr, lang: str, *, none_key: str = "result-no-offer") -> str:
    """Our rental offer with its price, or why there is none (`none_key`: when nothing fits)."""
    rec = result.recommendation
    if rec is not None and rec.in_offers:
        price = escape(price_text(rec, lang))
        return tr("result-offer", count=rec.count, gpu=escape(rec.gpu_name), price=price)
    if rec is not None:  # the core found a configuration, but not among the rental offers
        return tr("result-not-offered", count=rec.count, gpu=escape(rec.gpu_name))
    return tr(none_key)


# ---------------------------------------------------------------- inline mode


@dataclass(frozen=True)
class InlineArticle:
    """One inline-mode result: `title` and `description` are plain text (clients show them as is),
    `text` is the HTML message sent when the user picks it."""

    title: str
    description: str
    text: str


def render_inline(result: Result, answers: Answers, tr: Tr, lang: str, catalog: Catalog) -> InlineArticle:
    """The one-line answer of inline mode: the verdict line as the title, the breakdown as the
    description, and a compact message (total, breakdown, the recommended configuration, the offer)."""
    total = format_bytes(result.total_bytes, lang)
    rec = result.recommendation
    verdict = verdict_of(rec, result) if rec is not None else None
    if rec is None:
        title = tr("inline-title-none", total=total)
    else:
        icon = VERDICT_ICONS.get(verdict.verdict if verdict else rec.verdict, "")
        title = tr("inline-title", icon=icon, total=total, count=rec.count, gpu=rec.gpu_name)
    description = " · ".join(
        tr("inline-component", name=core_texts.label("component", c, lang), size=format_bytes(n, lang))
        for c, n in _components(result)
    )
    lines = [answers_line(answers, tr, lang, catalog), "", *_total_lines(result, tr, lang), ""]
    if verdict is not None:
        lines.append(_verdict_line(verdict, tr, lang, mark=tr("result-recommended")))
    lines.append(_offer_line(result, tr, lang, none_key="inline-no-offer"))  # no savings shown here
    return InlineArticle(title=title, description=description, text=fit([lines], []))


def inline_help(tr: Tr, bot_username: str, *, reason: str | None = None) -> InlineArticle:
    """The "how to use" article for an empty query, or one the core could not size (`reason`, plain)."""
    return InlineArticle(
        title=tr("inline-help-title"),
        description=" ".join(reason.split()) if reason else tr("inline-help-description"),  # one line
        text=tr("inline-help", bot=escape(bot_username)),
    )


def fit(sections: Sequence[list[str]], cuts: Sequence[tuple[list[str], int]]) -> str:
    """The sections' lines joined, under `BUDGET`: while too long, whole lines are dropped from the end
    of each cut section in turn, down to its `keep` items (a section left with just its blank line and
    heading goes entirely). Each line is whole HTML, so the message stays valid where a cut at a
    character count could split a tag."""

    def joined() -> str:
        return "\n".join(line for section in sections for line in section)

    text = joined()
    for section, keep in cuts:
        while utf16_length(text) > BUDGET and len(section) > SECTION_HEAD + keep:
            section.pop()
            if len(section) == SECTION_HEAD:
                section.clear()
            text = joined()
    return text


def utf16_length(text: str) -> int:
    """Telegram counts a message's length in UTF-16 code units (an emoji such as 🚀 counts two)."""
    return len(text.encode("utf-16-le")) // 2


def summary(result: Result) -> dict[str, Any]:
    """What the dialog row keeps of a result (for sales and for support)."""
    rec = result.recommendation
    return {
        "model": result.model.name,
        "total_bytes": result.total_bytes,
        "breakdown": dict(result.breakdown),
        "recommendation": f"{rec.count}x {rec.gpu}" if rec else None,
        "price_per_hour": rec.price_per_hour if rec else None,
        "currency": rec.currency if rec else None,
    }


def core_error_reason(error: CoreError, lang: str) -> str:
    """Why the core could not size a request, plain text in the user's language where the core has it."""
    if isinstance(error, UnknownModelError):
        return core_texts.t("parse-error-unknown_model", lang, name=error.name)
    return error.message


def render_core_error(error: CoreError, tr: Tr, lang: str) -> str:
    return tr("error-estimate", reason=escape(core_error_reason(error, lang)))
