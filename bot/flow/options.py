"""What the dialog asks: the tasks and their steps in order, the buttons each step offers, and the
step itself as data (how its answer is read lives in `bot.flow.steps`). No Telegram here."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, field_validator

from core.catalogue.catalog import Catalog
from core.catalogue.models import ModelKind, ModelSpec
from core.contract import Method, Precision, Task
from core.sizing import partial
from core.sizing.defaults_multimodal import SPEECH_PRECISIONS, SPEECH_SIZED_BY

# Wizard tasks (what the user picks at step 1) → the core task.
CORE_TASK: dict[str, Task] = {
    "inference": Task.INFERENCE,
    "finetune": Task.TRAINING,
    "pretrain": Task.TRAINING,
    "image": Task.IMAGE_GENERATION,
    "video": Task.VIDEO_GENERATION,
}


class Answers(BaseModel):
    """The dialog so far: the core request being put together (`core.sizing.partial`: the fields the
    user stated, by their contract names, nothing defaulted) and the wizard's own position in it."""

    model_config = ConfigDict(frozen=True, extra="ignore")

    task: str | None = None  # the wizard's task (TASKS): which steps are asked (`FLOWS`)
    request: dict[str, Any] = Field(default_factory=dict)  # the partial core request
    quick: bool = False  # a quick answer asked only for its model: its result follows the model step
    speech: bool = False  # a speech model (`core.sizing.partial.sized_as_speech`): `SPEECH_FLOW`
    card_read: dict[str, Any] | None = None  # how a card named without its memory was read (a note)

    @field_validator("request", mode="before")
    @classmethod
    def _stated(cls, value: Any) -> Any:
        return partial.stated(value) if isinstance(value, dict) else value

    def get(self, name: str) -> Any:
        """The request field `name` as stated (None: not stated, the core's default)."""
        return self.request.get(name)

    def setting(self, name: str, value: Any) -> Answers:
        """The answers with the request field `name` set as given (None: left to the core)."""
        request = {k: v for k, v in self.request.items() if k != name}
        if value is not None:
            request[name] = value
        return self.model_copy(update={"request": partial.stated(request)})

    def record(self) -> dict[str, Any]:
        """What the dialog's database row keeps: the wizard's task and the request's fields."""
        return {**{k: v for k, v in self.request.items() if k != "task"}, "task": self.task}


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
# A speech model (Whisper) named at the inference model step: asked only what it is sized by (core's
# SPEECH_SIZED_BY: no context, the windows at once as the batch); `Answers.speech` marks it.
SPEECH_FLOW: tuple[str, ...] = ("model", *SPEECH_SIZED_BY)
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
    default: Callable[[Answers, Catalog], int] | None = None
    """The core's default for the answers so far when it is one of the buttons: then no "Typical" (it
    would say the same)."""
    applies: Callable[[Answers], bool] = lambda answers: True
    row_width: int = 2


def prompt_key(kind: str, step: str, answers: Answers) -> str:
    """The locale key of a step's question (`kind` 'ask') or hint ('hint'): an image or video model is
    named, never given by its size (a size describes a language model)."""
    if step == "model" and MODEL_KIND.get(answers.task or "") in (ModelKind.IMAGE, ModelKind.VIDEO):
        return f"{kind}-model-generation"
    if step == "batch_size" and answers.speech:
        return f"{kind}-batch_size-speech"  # 30-second windows at once, not a training micro-batch
    return f"{kind}-{step}"


# ---------------------------------------------------------------- options


def numbers(values: tuple[int, ...], label: Callable[[int], str] = str) -> Callable[..., list[Option]]:
    def options(answers: Answers, catalog: Catalog) -> list[Option]:
        return [Option(str(v), label=label(v)) for v in values]

    return options


def model_tokens(values: tuple[int, ...]) -> Callable[[Answers, Catalog], list[Option]]:
    """Token counts (context, sequence length) up to the catalogue model's own maximum (`max_context`),
    that maximum itself the top button where it is none of `values` and not beyond the largest (a 40K
    model: ... 32K, 40K). All of `values` for a size, an architecture or a model the catalogue lacks
    (no maximum of its own). Beyond the buttons a length is typed, as before."""

    def options(answers: Answers, catalog: Catalog) -> list[Option]:
        spec = partial.catalogue_model(answers.request, catalog)
        top = spec.max_context if spec is not None else None
        shown = values if top is None or top >= values[-1] else (*(v for v in values if v < top), top)
        return [Option(str(v), label=tokens_label(v)) for v in shown]

    return options


def model_default(rule: Callable[[ModelSpec | None], int]) -> Callable[[Answers, Catalog], int]:
    """A step's default as the core's `rule` decides it for the model the answers name, as it is sized
    (`core.sizing.partial.model_spec`): the button a user leaves the step at sizes what a request
    leaving the field out does."""

    def default(answers: Answers, catalog: Catalog) -> int:
        return rule(partial.model_spec(answers.request, catalog))

    return default


def tokens_label(value: int) -> str:
    """4096 → 4K, 131072 → 128K: how people say context lengths."""
    return f"{value // 1024}K" if value >= 1024 and value % 1024 == 0 else str(value)


def task_options(answers: Answers, catalog: Catalog) -> list[Option]:
    return [Option(task, label_key=f"task-{task}") for task in TASKS]


def popular_models(task: str, catalog: Catalog) -> list[Option]:
    """The catalogue's popular models of the task's kind, the most asked first (their `popularity`),
    grouped by family: a family comes where its most asked model does, its models in their order."""
    kind = MODEL_KIND.get(task, ModelKind.LLM)
    ranked = catalog.popular(kind)
    first: dict[str, int] = {}
    for position, m in enumerate(ranked):
        first.setdefault(m.family, position)
    models = sorted(ranked, key=lambda m: first[m.family])  # stable: each family keeps its order
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


def model_options(answers: Answers, catalog: Catalog) -> list[Option]:
    task = answers.task or "inference"
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
    task = answers.task
    if answers.speech:
        return SPEECH_PRECISIONS  # what faster-whisper and transformers run Whisper in
    if task == "inference":
        return PRECISIONS["inference"]
    if task in ("image", "video"):
        return PRECISIONS["generation"]
    return PRECISIONS["lora"] if answers.get("method") == Method.LORA else PRECISIONS["full"]


def precision_options(answers: Answers, catalog: Catalog) -> list[Option]:
    return [Option(p.value, core_group="precision") for p in precision_choices(answers)]


METHODS: tuple[str, ...] = (Method.LORA.value, Method.QLORA.value, Method.FULL.value)


def method_options(answers: Answers, catalog: Catalog) -> list[Option]:
    return [Option(m, core_group="method") for m in METHODS]


RESOLUTIONS: tuple[tuple[int, int], ...] = ((512, 512), (768, 768), (1024, 1024), (1280, 720), (1920, 1080))


def resolution_options(answers: Answers, catalog: Catalog) -> list[Option]:
    return [Option(f"{w}x{h}", label=f"{w}×{h}") for w, h in RESOLUTIONS]
