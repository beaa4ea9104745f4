"""The guided dialog as data: which steps a task goes through, their options and free-entry parsers.

No Telegram here. One generic mechanism drives every step: a step has a name (also the name of its
FSM state and of the request field it fills), the buttons it offers, how to read a typed answer, and
whether it applies to the answers so far. Handlers only move between steps.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from pydantic import ValidationError
from pydantic_core import to_jsonable_python

from bot.callbacks import TYPICAL
from core import parse as core_parse
from core import texts as core_texts
from core.catalog import Catalog
from core.contract import CustomModel, Method, Precision, Request, Task
from core.errors import ParseError, UnknownModelError
from core.specs import ModelKind

Answers = dict[str, Any]

# Wizard tasks (what the user picks at step 1) → the core task.
CORE_TASK: dict[str, Task] = {
    "inference": Task.INFERENCE,
    "finetune": Task.TRAINING,
    "pretrain": Task.TRAINING,
    "image": Task.IMAGE_GENERATION,
    "video": Task.VIDEO_GENERATION,
}
TASKS: tuple[str, ...] = (*CORE_TASK, "other")
MODEL_KIND: dict[str, ModelKind] = {
    "inference": ModelKind.LLM,
    "finetune": ModelKind.LLM,
    "pretrain": ModelKind.LLM,
    "image": ModelKind.IMAGE,
    "video": ModelKind.VIDEO,
}

# Steps of each task after `task`, in order; `result` follows the last one.
FLOWS: dict[str, tuple[str, ...]] = {
    "inference": ("model", "precision", "context_length", "concurrency"),
    "finetune": ("model", "method", "precision", "batch_size", "seq_len"),
    "pretrain": ("model", "precision", "batch_size", "seq_len"),
    "image": ("model", "precision", "resolution", "images"),
    "video": ("model", "precision", "resolution", "frames"),
}
RESULT = "result"
MODELS_PER_PAGE = 8


@dataclass(frozen=True)
class Option:
    """One button of a step, labelled by a literal (model names, numbers), a bot locale key, or the
    core's name of a concept (`core_group`: method, precision)."""

    value: str
    label: str | None = None
    label_key: str | None = None
    core_group: str | None = None
    group: str | None = None
    """Options of one group (a model family) share their rows and, when they fit, one page."""


@dataclass(frozen=True)
class Accepted:
    value: Any


@dataclass(frozen=True)
class Choose:
    """The typed answer is ambiguous: offer these options."""

    options: list[Option]


@dataclass(frozen=True)
class Rejected:
    """The typed answer was not understood: show the step's hint."""

    reason: str = "invalid"
    args: dict[str, Any] = field(default_factory=dict)


StepInput = Accepted | Choose | Rejected


@dataclass(frozen=True)
class Step:
    name: str
    options: Callable[[Answers, Catalog], list[Option]]
    decode: Callable[[str], Any] = str
    read: Callable[[str, Answers, Catalog], StepInput] | None = None
    typical: bool = True
    applies: Callable[[Answers], bool] = lambda answers: True
    row_width: int = 2


# ---------------------------------------------------------------- options


def _numbers(values: tuple[int, ...], label: Callable[[int], str] = str) -> Callable[..., list[Option]]:
    def options(answers: Answers, catalog: Catalog) -> list[Option]:
        return [Option(str(v), label=label(v)) for v in values]

    return options


def tokens_label(value: int) -> str:
    """4096 → 4K, 131072 → 128K: how people say context lengths."""
    return f"{value // 1024}K" if value >= 1024 and value % 1024 == 0 else str(value)


def _task_options(answers: Answers, catalog: Catalog) -> list[Option]:
    return [Option(task, label_key=f"task-{task}") for task in TASKS]


def popular_models(task: str, catalog: Catalog) -> list[Option]:
    """The catalogue's popular models of the task's kind, grouped by family: families in alphabetical
    order (the order of their names on the buttons), each from its smallest model to its largest."""
    kind = MODEL_KIND.get(task, ModelKind.LLM)
    models = sorted(catalog.popular(kind), key=lambda m: (m.family, m.params_b, m.name))
    return [Option(m.id, label=m.name, group=m.family) for m in models]


def groups(options: list[Option]) -> list[list[Option]]:
    """Runs of consecutive options of the same group (options without a group make one run)."""
    runs: list[list[Option]] = []
    for option in options:
        if runs and runs[-1][0].group == option.group:
            runs[-1].append(option)
        else:
            runs.append([option])
    return runs


def paginate(options: list[Option], per_page: int = MODELS_PER_PAGE) -> list[list[Option]]:
    """Pages of at most `per_page` options, a group never split across pages unless it is itself
    longer than a page (then it fills pages in order)."""
    pages: list[list[Option]] = []
    page: list[Option] = []
    for run in groups(options):
        if page and len(page) + len(run) > per_page:
            pages.append(page)
            page = []
        for option in run:
            if len(page) == per_page:
                pages.append(page)
                page = []
            page.append(option)
    if page or not pages:
        pages.append(page)
    return pages


# Training from scratch defines a model by its size: the core sizes a typical architecture for it.
PRETRAIN_SIZES: tuple[str, ...] = ("0.5B", "1B", "3B", "7B", "13B", "34B", "70B")


def _model_options(answers: Answers, catalog: Catalog) -> list[Option]:
    task = answers.get("task", "inference")
    if task == "pretrain":
        return [Option(size, label=size) for size in PRETRAIN_SIZES]
    return popular_models(task, catalog)


PRECISIONS: dict[str, tuple[Precision, ...]] = {
    "inference": (
        Precision.BF16,
        Precision.FP16,
        Precision.FP8,
        Precision.INT8,
        Precision.INT4,
        Precision.AWQ_INT4,
        Precision.Q8_0,
        Precision.Q4_K_M,
    ),
    "lora": (Precision.BF16, Precision.FP16, Precision.INT8),
    "full": (Precision.BF16, Precision.FP16, Precision.FP32),
    "generation": (Precision.BF16, Precision.FP16, Precision.FP8, Precision.INT8, Precision.NF4),
}


def precision_choices(answers: Answers) -> tuple[Precision, ...]:
    task = answers.get("task")
    if task == "inference":
        return PRECISIONS["inference"]
    if task in ("image", "video"):
        return PRECISIONS["generation"]
    return PRECISIONS["lora"] if answers.get("method") == Method.LORA else PRECISIONS["full"]


def _precision_options(answers: Answers, catalog: Catalog) -> list[Option]:
    return [Option(p.value, core_group="precision") for p in precision_choices(answers)]


METHODS: tuple[str, ...] = (Method.LORA.value, Method.QLORA.value, Method.FULL.value)


def _method_options(answers: Answers, catalog: Catalog) -> list[Option]:
    return [Option(m, core_group="method") for m in METHODS]


RESOLUTIONS: tuple[tuple[int, int], ...] = ((512, 512), (768, 768), (1024, 1024), (1280, 720), (1920, 1080))


def _resolution_options(answers: Answers, catalog: Catalog) -> list[Option]:
    return [Option(f"{w}x{h}", label=f"{w}×{h}") for w, h in RESOLUTIONS]


def _decode_int(value: str) -> int:
    return int(value)


def _decode_resolution(value: str) -> list[int]:
    w, h = value.split("x")
    return [int(w), int(h)]


# ---------------------------------------------------------------- typed answers


def _validated(answers: Answers, name: str, value: Any) -> StepInput:
    """Accept `value` for `name` only if the whole request stays valid (bounds live in the contract)."""
    try:
        Request.model_validate(build_request({**answers, name: value}))
    except (ValidationError, KeyError, ValueError):
        return Rejected("out_of_range")
    return Accepted(value)


def _read_number(parse: Callable[[str], int | None], name: str) -> Callable[..., StepInput]:
    def read(text: str, answers: Answers, catalog: Catalog) -> StepInput:
        value = parse(text)
        if value is None:
            return Rejected()
        return _validated(answers, name, int(value))

    return read


def _read_resolution(text: str, answers: Answers, catalog: Catalog) -> StepInput:
    value = core_parse.parse_resolution(text)
    if value is None:
        return Rejected()
    return _validated(answers, "resolution", [int(value[0]), int(value[1])])


def _read_choice(
    name: str, step_options: Callable[[Answers, Catalog], list[Option]]
) -> Callable[..., StepInput]:
    """Typed text naming one of the step's options: its label (`GGUF Q4_K_M`) or what the core's
    parser reads in it (`awq`, `4 бита`, `лора`), if that is one of the options."""

    def read(text: str, answers: Answers, catalog: Catalog) -> StepInput:
        wanted = text.strip().lower()
        options = step_options(answers, catalog)
        for option in options:
            if wanted in {option.value.lower(), *(n.lower() for n in option_names(option))}:
                return Accepted(option.value)
        parsed = core_parse.parse_partial(text, catalog).get(name)
        if parsed is not None and any(o.value == str(parsed) for o in options):
            return Accepted(str(parsed))
        return Rejected()

    return read


def option_names(option: Option) -> list[str]:
    """What a user may type to pick an option: its label in every language."""
    if option.label is not None:
        return [option.label]
    if option.core_group is not None:
        return [core_texts.label(option.core_group, option.value, lang) for lang in core_texts.LANGUAGES]
    return []


MAX_MODEL_CHOICES = 6


def model_choice(candidates: list[str], catalog: Catalog) -> list[Option]:
    """The catalogue models among a parser's candidates for an ambiguous name, as a short choice
    (a button can only name a catalogue model: see `accepts`)."""
    known = [c for c in candidates if c in catalog.models]
    return [Option(c, label=catalog.models[c].name) for c in known[:MAX_MODEL_CHOICES]]


def read_model(text: str, answers: Answers, catalog: Catalog) -> StepInput:
    """A catalogue name / alias / HF id, or a size such as `13B`; ambiguous → a short choice."""
    text = text.strip()
    if not text or len(text) > 200:
        return Rejected()
    try:
        return Accepted(catalog.resolve_model(text).id)
    except UnknownModelError:
        pass
    try:
        model = core_parse.parse(text, catalog).model
    except ParseError as e:
        options = model_choice(e.candidates, catalog)
        return Choose(options) if options else Rejected(e.code)
    if isinstance(model, CustomModel):
        return Accepted(model.model_dump(exclude_defaults=True))
    return Accepted(model)


# ---------------------------------------------------------------- the steps


STEPS: dict[str, Step] = {
    step.name: step
    for step in (
        Step("task", _task_options, typical=False, read=None),
        Step("model", _model_options, read=read_model, typical=False),
        Step(
            "method",
            _method_options,
            read=_read_choice("method", _method_options),
            typical=False,
            row_width=3,
        ),
        Step(
            "precision",
            _precision_options,
            read=_read_choice("precision", _precision_options),
            applies=lambda a: a.get("method") != Method.QLORA,
            row_width=4,
        ),
        Step(
            "context_length",
            _numbers((2048, 4096, 8192, 16384, 32768, 131072), tokens_label),
            decode=_decode_int,
            read=_read_number(core_parse.parse_context, "context_length"),
            row_width=3,
        ),
        Step(
            "concurrency",
            _numbers((1, 2, 4, 8, 16, 32, 64)),
            decode=_decode_int,
            read=_read_number(core_parse.parse_count, "concurrency"),
            row_width=4,
        ),
        Step(
            "batch_size",
            _numbers((1, 2, 4, 8, 16, 32)),
            decode=_decode_int,
            read=_read_number(core_parse.parse_count, "batch_size"),
            row_width=3,
        ),
        Step(
            "seq_len",
            _numbers((512, 1024, 2048, 4096, 8192, 16384), tokens_label),
            decode=_decode_int,
            read=_read_number(core_parse.parse_context, "seq_len"),
            row_width=3,
        ),
        Step(
            "resolution",
            _resolution_options,
            decode=_decode_resolution,
            read=_read_resolution,
            row_width=3,
        ),
        Step(
            "images",
            _numbers((1, 2, 4, 8)),
            decode=_decode_int,
            read=_read_number(core_parse.parse_count, "images"),
            row_width=4,
        ),
        Step(
            "frames",
            _numbers((16, 33, 49, 81, 129)),
            decode=_decode_int,
            read=_read_number(core_parse.parse_count, "frames"),
            row_width=5,
        ),
    )
}


def accepts(step: Step, value: str, answers: Answers, catalog: Catalog) -> bool:
    """Whether a button's value can be an answer to the step (buttons can be old or forged)."""
    if value == TYPICAL:
        return step.typical
    if any(o.value == value for o in step.options(answers, catalog)):
        return True
    # a model may also be one of the candidates of a clarifying question
    return step.name == "model" and value in catalog.models


def decode(step: Step, value: str) -> Any:
    """A button's value → the answer; `TYPICAL` → None (the core's default)."""
    return None if value == TYPICAL else step.decode(value)


def path(answers: Answers) -> list[str]:
    """The steps this dialog goes through, `task` first, given the answers so far."""
    task = answers.get("task")
    steps = ["task", *FLOWS.get(task or "", ())]
    return [s for s in steps if STEPS[s].applies(answers)]


def next_step(answers: Answers, current: str) -> str:
    steps = path(answers)
    if answers.get("quick") and current == "model":
        return RESULT  # a quick answer only asked for the missing model
    if current not in steps:
        return steps[-1] if current == RESULT else RESULT
    index = steps.index(current)
    return steps[index + 1] if index + 1 < len(steps) else RESULT


def previous_step(answers: Answers, current: str) -> str | None:
    steps = path(answers)
    if current == RESULT:
        return steps[-1] if len(steps) > 1 else None
    if current not in steps:
        return None
    index = steps.index(current)
    return steps[index - 1] if index > 0 else None


def affected_steps(step: str) -> list[str]:
    """Changing `step` from the result asks these again (a new method offers other precisions)."""
    return ["method", "precision"] if step == "method" else [step]


def forget_after(answers: Answers, step: str) -> Answers:
    """Answers valid for `step`'s screen: a changed task or method resets what depends on it."""
    kept = dict(answers)
    if step == "task":
        return {"quick": False}
    if step == "method" and answers.get("method") == Method.QLORA:
        kept.pop("precision", None)
    return kept


# ---------------------------------------------------------------- answers ↔ request

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
    """The core request of the answers; fields left out take the core's documented defaults."""
    task = answers["task"]
    request: dict[str, Any] = {"task": CORE_TASK[task].value, "model": answers["model"]}
    for name in REQUEST_FIELDS:
        if answers.get(name) is not None:
            request[name] = answers[name]
    extra = answers.get("extra")
    if isinstance(extra, dict):
        request.update({k: v for k, v in extra.items() if k not in request})
    if task == "pretrain":
        request["method"] = Method.FULL.value
    if CORE_TASK[task] == Task.TRAINING:
        method = request.get("method", Method.FULL.value)
        if method == Method.QLORA:
            request["precision"] = Precision.NF4.value
        elif method == Method.FULL and request.get("precision") == Precision.FP32:
            request.setdefault("mixed_precision", "none")
        elif method == Method.FULL and request.get("precision") == Precision.FP16:
            request.setdefault("mixed_precision", "fp16")
    if "resolution" in request:
        request["resolution"] = list(request["resolution"])
    return request


def answers_from_request(request: Request, catalog: Catalog, *, quick: bool = True) -> Answers:
    """Answers equivalent to a parsed request, so a quick answer can be refined in the wizard."""
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
        answers["model"] = fields["model"]  # a name, a size or an architecture (dict)
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


def fields_of(answers: Answers) -> dict[str, Any]:
    """The request fields the answers state, the model aside (the inverse of `answers_from_fields`)."""
    fields: dict[str, Any] = {}
    if answers.get("task") in CORE_TASK:
        fields["task"] = CORE_TASK[answers["task"]].value
    extra = answers.get("extra")
    if isinstance(extra, dict):
        fields.update(extra)
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
