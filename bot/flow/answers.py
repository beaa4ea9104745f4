"""Answers ↔ core request. The dialog's answers say what the user chose and nothing more: every
default (precision, engine, context, mixed precision…) is the core's to decide (`core.sizing.estimate.
fill_defaults`), so a question sized through the dialog, free text, inline mode or the CLI gets one
answer."""

from __future__ import annotations

from typing import Any

from pydantic_core import to_jsonable_python

from bot.flow.options import CORE_TASK, Answers
from core import parse as core_parse
from core.catalogue.catalog import Catalog
from core.catalogue.models import ModelKind
from core.contract import Method, Request, Task

# The request fields the dialog's steps fill (a step's name is its field's name). Every other field
# a parsed request states travels in `answers["extra"]`, untouched, so a quick answer refined in the
# dialog keeps it (GPUs, card count, engine, KV-cache precision, sharding…).
REQUEST_FIELDS = (
    "precision",
    "method",
    "context_length",
    "concurrency",
    "batch_size",
    "seq_len",
    "resolution",
    "images",
    "frames",
)


def build_request(answers: Answers) -> dict[str, Any]:
    """The core request of the answers: exactly the fields they state, the fields left out taking the
    core's documented defaults (the bot re-decides none of them)."""
    request: dict[str, Any] = {
        **fields_of(answers),
        "task": CORE_TASK[answers["task"]].value,
        "model": answers["model"],
    }
    if "resolution" in request:
        request["resolution"] = list(request["resolution"])
    return request


def answers_from_request(request: Request, catalog: Catalog, *, quick: bool = True) -> Answers:
    """Answers equivalent to a parsed request, so a quick answer can be refined in the wizard:
    `build_request` of them is the same request."""
    fields = request.model_dump(mode="json", exclude_defaults=True)
    return answers_from_fields(fields, catalog, quick=quick)


def answers_from_fields(fields: dict[str, Any], catalog: Catalog, *, quick: bool = True) -> Answers:
    core_task = fields.get("task") or Task.INFERENCE.value
    task = next(k for k, v in CORE_TASK.items() if v.value == core_task)
    model = fields.get("model")
    full = fields.get("method", Method.FULL.value) == Method.FULL
    if task == "finetune" and full and not (isinstance(model, str) and model in catalog.models):
        task = "pretrain"  # full training of a model given by its size or architecture: from scratch
    answers: Answers = {"task": task, "quick": quick}
    if fields.get("model") is not None:
        answers = with_model(answers, fields["model"], catalog)  # a name, a size or an architecture
    extra: dict[str, Any] = {}
    for name, value in fields.items():
        if name in ("task", "model") or value is None:
            continue
        if name in REQUEST_FIELDS:
            answers[name] = value
        else:
            extra[name] = value
    if extra:
        answers["extra"] = extra
    return answers


# The steps a speech model's dialog and a language model's differ in: their answers are dropped when
# the model changes kind (an LLM's 8 users would be read as 8 Whisper windows, its Q4_K_M refused).
_KIND_STEPS = ("precision", "context_length", "concurrency", "batch_size")


def with_model(answers: Answers, model: Any, catalog: Catalog) -> Answers:
    """The answers with `model` chosen; a catalogue speech model (Whisper) is marked `speech`, which
    takes the dialog through the steps a speech request is sized by (`flow.SPEECH_FLOW`)."""
    spec = catalog.models.get(model) if isinstance(model, str) else None
    speech = spec is not None and spec.kind is ModelKind.SPEECH and answers.get("task") == "inference"
    kept = {k: v for k, v in answers.items() if k != "speech"}
    if speech != bool(answers.get("speech")):
        kept = {k: v for k, v in kept.items() if k not in _KIND_STEPS}
    kept["model"] = model
    if speech:
        kept["speech"] = True
    return kept


def fields_of(answers: Answers) -> dict[str, Any]:
    """The request fields the answers state, the model aside (the inverse of `answers_from_fields`);
    a step's answer wins over the same field in `extra`."""
    fields: dict[str, Any] = {}
    if answers.get("task") in CORE_TASK:
        fields["task"] = CORE_TASK[answers["task"]].value
    extra = answers.get("extra")
    if isinstance(extra, dict):
        fields.update({k: v for k, v in extra.items() if k not in ("task", "model")})
    fields.update({name: answers[name] for name in REQUEST_FIELDS if answers.get(name) is not None})
    return fields


def with_typed_fields(step: str, text: str, answers: Answers, catalog: Catalog) -> Answers:
    """The answers, with what a typed reply to a quick answer's model question states besides the model.

    Asked "which model?" after `int4 32k 4 users`, someone may type `llama 3.1 70b int4` or
    `qwen3 8b, 8 users`: what the core's parser reads in it is merged over what was understood before
    (the step's own reader still decides the model, or offers a choice). Wizard steps answer one
    question each, so their answers are returned as they are.
    """
    if step != "model" or not answers.get("quick"):
        return answers
    typed: dict[str, Any] = to_jsonable_python(core_parse.parse_partial(text, catalog))
    typed.pop("model", None)
    if not typed:
        return answers
    return answers_from_fields({**fields_of(answers), **typed}, catalog, quick=True)


def field_bounds(name: str) -> tuple[int, int] | None:
    """The smallest and largest value the contract allows for a numeric request field (`concurrency`
    → (1, 100000)); None for a field without both bounds."""
    from annotated_types import Ge, Gt, Le, Lt

    field = Request.model_fields.get(name)
    if field is None:
        return None
    low = high = None
    for bound in field.metadata:
        if isinstance(bound, Ge):
            low = int(bound.ge)  # type: ignore[call-overload]
        elif isinstance(bound, Gt):
            low = int(bound.gt) + 1  # type: ignore[call-overload]
        elif isinstance(bound, Le):
            high = int(bound.le)  # type: ignore[call-overload]
        elif isinstance(bound, Lt):
            high = int(bound.lt) - 1  # type: ignore[call-overload]
    return (low, high) if low is not None and high is not None else None
