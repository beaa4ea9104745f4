"""Answers ↔ core request. The dialog's answers are the core request being put together (the fields
the user stated, by their contract names: `core.sizing.partial`) and the wizard's position in it.
Every default (precision, engine, context, mixed precision…) is the core's to decide
(`core.sizing.estimate.fill_defaults`), and so is every rule on what an answer implies
(`core.sizing.partial`), so a question sized through the dialog, free text, inline mode or the CLI
gets one answer. `from_stored` reads the answers an earlier version kept (a flat dict)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pydantic_core import to_jsonable_python

from bot.flow.options import CORE_TASK, Answers
from core import parse as core_parse
from core.catalogue.catalog import Catalog
from core.contract import Request, Task
from core.language.answer import CARD_READ
from core.sizing import partial

# The request fields the dialog's steps fill (a step's name is its field's name); a parsed request's
# other fields (GPUs, card count, engine, KV-cache precision, sharding…) stay in the request as they
# are, so a quick answer refined in the dialog keeps them.
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
    core's documented defaults (the bot re-decides none of them). KeyError without a task or model."""
    request = dict(answers.request)
    if "task" not in request or "model" not in request:
        raise KeyError("task" if "task" not in request else "model")
    return request


def answers_from_request(request: Request, catalog: Catalog, *, quick: bool = True) -> Answers:
    """Answers equivalent to a parsed request, so a quick answer can be refined in the wizard:
    `build_request` of them is the same request."""
    fields = request.model_dump(mode="json", exclude_defaults=True)
    return answers_from_fields(fields, catalog, quick=quick)


def answers_from_fields(fields: Mapping[str, Any], catalog: Catalog, *, quick: bool = True) -> Answers:
    """Answers stating `fields` (a request's, maybe without its model); the wizard's task is the one
    whose steps ask them (`core.sizing.partial.trains_from_scratch`: pretraining, not fine-tuning)."""
    stated = partial.stated({**fields, "task": fields.get("task") or Task.INFERENCE.value})
    if partial.trains_from_scratch(stated, catalog):
        task = "pretrain"
    else:
        task = next(k for k, v in CORE_TASK.items() if v.value == stated["task"])
    return Answers(task=task, request=stated, quick=quick, speech=partial.sized_as_speech(stated, catalog))


def answered(answers: Answers, step: str, value: Any, catalog: Catalog) -> Answers:
    """The answers with a step answered (None: "Typical", the core's default): a task starts a new
    dialog; any other step sets its request field, the core deciding what that makes stale
    (`core.sizing.partial.answered`); a model may take the dialog through the speech steps."""
    if step == "task":
        core_task = CORE_TASK.get(value)
        return Answers(task=value, request={"task": core_task.value} if core_task else {})
    request = partial.answered(answers.request, step, value, catalog)
    return answers.model_copy(
        update={"request": partial.stated(request), "speech": partial.sized_as_speech(request, catalog)}
    )


def with_model(answers: Answers, model: Any, catalog: Catalog) -> Answers:
    """The answers with `model` chosen; a catalogue speech model (Whisper) asked for inference takes
    the dialog through the steps a speech request is sized by (`flow.SPEECH_FLOW`)."""
    return answered(answers, "model", model, catalog)


def fields_of(answers: Answers) -> dict[str, Any]:
    """The request fields the answers state, the model aside."""
    return {k: v for k, v in answers.request.items() if k != "model"}


def with_typed_fields(step: str, text: str, answers: Answers, catalog: Catalog) -> Answers:
    """The answers, with what a typed reply to a quick answer's model question states besides the model.

    Asked "which model?" after `int4 32k 4 users`, someone may type `llama 3.1 70b int4` or
    `qwen3 8b, 8 users`: what the core's parser reads in it is merged over what was understood before
    (the step's own reader still decides the model, or offers a choice). Wizard steps answer one
    question each, so their answers are returned as they are.
    """
    if step != "model" or not answers.quick:
        return answers
    typed: dict[str, Any] = to_jsonable_python(core_parse.parse_partial(text, catalog))
    typed.pop("model", None)
    if not typed:
        return answers
    merged = answers_from_fields({**fields_of(answers), **typed}, catalog, quick=True)
    return merged.model_copy(update={"card_read": answers.card_read})


def from_stored(data: Any) -> Any:
    """The answers as an earlier version kept them (a flat dict: the wizard's task, the steps' fields,
    the other request fields in "extra", "quick", "speech", the card note) in this version's shape;
    anything else as it is (then validated as `Answers`)."""
    if not isinstance(data, Mapping) or "request" in data:
        return data
    task = data.get("task")
    extra = data.get("extra")
    request: dict[str, Any] = dict(extra) if isinstance(extra, Mapping) else {}
    request.update({name: data[name] for name in (*REQUEST_FIELDS, "model") if data.get(name) is not None})
    core_task = CORE_TASK.get(task) if isinstance(task, str) else None
    request["task"] = core_task.value if core_task else None
    card_read = data.get(CARD_READ)
    return {
        "task": task if isinstance(task, str) else None,
        "request": partial.stated(request),
        "quick": data.get("quick") is True,
        "speech": data.get("speech") is True,
        "card_read": card_read if isinstance(card_read, Mapping) else None,
    }


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
