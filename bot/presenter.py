"""Core results and wizard screens → Telegram HTML. Every dynamic value is HTML-escaped here.

Frame texts come from the bot's locale files (`tr`); labels of core concepts (breakdown components,
verdicts, mitigation actions, assumptions, precision notes) from `core.language.words.t`. What to show (which
GPU configurations, which speed, whether savings, prices) is decided by `core.language.phrases`, as for the
CLI.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from html import escape
from typing import Any

from bot import flow
from bot.flow import Answers
from core.catalogue.catalog import Catalog
from core.contract import Assumption, Result
from core.errors import CoreError, UnknownModelError
from core.inverse.comparison import Compared, comparison_answer
from core.language import words as core_texts
from core.language.answer import Answer, build_answer
from core.language.phrases import format_bytes
from core.layouts.plain import offer_lines

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


COUNTED_STEPS = ("concurrency", "images", "frames", "batch_size")  # their labels take plural forms


def _value_label(step: str, value: Any) -> str | int:
    if step in COUNTED_STEPS and isinstance(value, int):
        return value
    if step in ("context_length", "seq_len") and isinstance(value, int):
        return flow.tokens_label(value)
    if step == "resolution" and isinstance(value, list | tuple):
        return f"{value[0]}×{value[1]}"
    return str(value)


def answers_line(answers: Answers, tr: Tr, lang: str, catalog: Catalog) -> str:
    """What the user chose so far, one line: `Run an LLM · Llama 3.1 8B · int4 · 32K`."""
    parts: list[str] = []
    task = answers.task
    if task:
        parts.append(escape(tr(f"task-{task}")))
    if answers.get("model"):
        parts.append(f"<b>{escape(model_name(answers, catalog))}</b>")
    for step in flow.path(answers)[2:]:
        value = answers.get(step)
        if value is None:
            continue
        if step in ("method", "precision"):
            label: str | int = core_texts.label(step, str(value), lang)
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
    lines.append(tr(flow.prompt_key("ask", step, answers), model=escape(model_name(answers, catalog))))
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


def render_result(
    result: Result,
    tr: Tr,
    lang: str,
    *,
    notes: Sequence[Assumption] = (),
    previous: Result | None = None,
) -> str:
    """The answer as a phone shows it: the decision in the first two lines (verdict, card, price,
    speed), then what holds the memory, the offers, how to make it fit, the server. The rest — every
    verdict, all mitigations, the assumptions — is `render_details`, behind the "More" button."""
    return layout_result(build_answer(result, lang, notes, previous), tr)


def solved_block(answer: Answer) -> list[str]:
    """The inverse answer first (the value found in bold), then a blank line: `Answer.solved`."""
    if not answer.solved:
        return []
    first, *rest = answer.solved
    return [f"<b>{escape(first)}</b>", *map(escape, rest), ""]


def cost_block(answer: Answer) -> list[str]:
    """Time and cost after the lead: `Answer.cost`, its heading in bold."""
    if not answer.cost:
        return []
    first, *rest = answer.cost
    return ["", f"<b>{escape(first)}</b>", *map(escape, rest)]


def load_block(answer: Answer) -> list[str]:
    """The servers a load takes ("10 RPS under 2 s"), after the lead: `Answer.load`, the count in bold."""
    if not answer.load:
        return []
    first, *rest = answer.load
    return ["", f"<b>{escape(first)}</b>", *map(escape, rest)]


def parts_block(answer: Answer, tr: Tr) -> list[str]:
    """The breakdown under its heading, which says per card or in total ('Where 42.0 GB per card
    goes:'), as the CLI shows it: a size without its unit's scope would be read either way."""
    rows = [tr("result-part", name=escape(name), size=escape(size)) for name, size in answer.parts]
    return [escape(answer.parts_title), *rows] if rows and answer.parts_title else rows


def layout_result(answer: Answer, tr: Tr) -> str:
    head = [*solved_block(answer), f"<b>{escape(answer.lead)}</b>", escape(answer.need)]
    if answer.card_read:
        head.append(escape(answer.card_read))
    if answer.tight:
        head.append(escape(answer.tight))
    if answer.taken:
        head.append(escape(answer.taken))
    if answer.change:
        head.append(f"↔ {escape(answer.change)}")
    head += [f"<i>{escape(answer.settings)}</i>", "", *parts_block(answer, tr)]
    head += ["", *map(escape, answer.extras)] if answer.extras else []
    offers = [escape(line) for line in offer_lines(answer) if not line.startswith("  ")]
    mitigations: list[str] = []
    if answer.mitigations:
        mitigations = ["", f"<b>{escape(answer.mitigations_title)}</b>", *map(escape, answer.mitigations)]
    sections = [
        head,
        cost_block(answer),
        load_block(answer),
        ["", *offers] if offers else [],
        mitigations,
        ["", f"🖥 {escape(answer.host)}"],
    ]
    return fit(sections, [(mitigations, 1)])


def render_details(result: Result, tr: Tr, lang: str, *, notes: Sequence[Assumption] = ()) -> str:
    """The details of an answer: the verdicts where the line runs, speed, every way to cut the memory
    and the assumptions — what the short answer leaves out."""
    return layout_details(build_answer(result, lang, notes), lang)


def layout_details(answer: Answer, lang: str) -> str:
    """`render_details` of a built answer."""
    lines = [*solved_block(answer), f"<b>{escape(answer.lead)}</b>", f"<i>{escape(answer.settings)}</i>"]
    lines += cost_block(answer)
    verdicts: list[str] = []
    if answer.verdicts:
        title = core_texts.t("answer-verdicts", lang)
        verdicts = ["", f"<b>{escape(title)}</b>", *map(escape, answer.verdicts)]
    speed = ["", f"⚡ {escape(answer.speed)}"] if answer.speed else []
    speed += [f"⏱ {escape(answer.ttft)}"] if answer.ttft and speed else []
    mitigations: list[str] = []
    rest = [*answer.mitigations, *answer.extra_mitigations]
    if rest:
        mitigations = ["", f"<b>{escape(answer.mitigations_title)}</b>", *map(escape, rest)]
    assumptions: list[str] = []
    if answer.assumptions:
        title = core_texts.t("answer-assumptions", lang)
        assumptions = ["", f"<b>{escape(title)}</b>", *(f"• {escape(a)}" for a in answer.assumptions)]
    sections = [lines, verdicts, speed, mitigations, assumptions]
    # while too long: the assumptions go first, then all but the cheapest fixes, then the cards
    cuts = [(assumptions, 0), (mitigations, KEEP_MITIGATIONS), (verdicts, 0), (mitigations, 0)]
    return fit(sections, cuts)


def render_comparison(rows: Sequence[Compared], lang: str, currency: str | None = None) -> str:
    """Cards side by side for one workload: a row each, then which is cheaper and which faster."""
    answer = comparison_answer(rows, lang, currency)
    lines = [f"<i>{escape(answer.title)}</i>", "", *map(escape, answer.rows)]
    if answer.verdict:
        lines += ["", f"<b>{escape(answer.verdict)}</b>"]
    return fit([lines], [])


# ---------------------------------------------------------------- inline mode


@dataclass(frozen=True)
class InlineArticle:
    """One inline-mode result: `title` and `description` are plain text (clients show them as is),
    `text` is the HTML message sent when the user picks it."""

    title: str
    description: str
    text: str


def render_inline(
    result: Result, tr: Tr, lang: str, notes: Sequence[Assumption] = (), currency: str | None = None
) -> InlineArticle:
    """Inline mode: the lead as the title, the memory as the description; picked, the same short
    answer as in the bot (lead, breakdown, offers) without the buttons that need a dialog. `notes`:
    the parser's (how a card named without its memory was read is said under the lead); prices in
    `currency` where the operator gave one."""
    answer = build_answer(result, lang, notes, currency=currency)
    parts = " · ".join(f"{name} {size}" for name, size in answer.parts)
    # with nothing to rent the short answer points at fixes below it; inline shows none: say where they are
    need = answer.need if answer.cheapest is not None else tr("inline-no-offer")
    head = [*solved_block(answer), f"<b>{escape(answer.lead)}</b>", escape(need)]
    head += [escape(answer.card_read)] if answer.card_read else []
    head += [f"<i>{escape(answer.settings)}</i>", "", *parts_block(answer, tr)]
    head += ["", *map(escape, answer.extras)] if answer.extras else []
    head += load_block(answer)
    offers = [escape(line) for line in offer_lines(answer) if not line.startswith("  ")]
    return InlineArticle(
        title=answer.solved[0] if answer.solved else answer.lead,  # an inverse question: the value found
        description=f"{need} · {parts}",
        text=fit([head, ["", *offers] if offers else []], []),
    )


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
    if core_texts.normalize_lang(lang) != "en":  # the core's own messages are English: name the field
        field = core_texts.translate(core_texts.concept_key("field", error.field or "request"), lang)
        field = field or core_texts.label("field", "request", lang)
        return core_texts.t("parse-error-invalid", lang, field=field)
    return error.message


def render_core_error(error: CoreError, tr: Tr, lang: str) -> str:
    return tr("error-estimate", reason=escape(core_error_reason(error, lang)))
