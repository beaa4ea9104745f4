"""The steps as data (`STEPS`), how a typed answer is read, and the order of the steps: which come
next or before given the answers so far, and what a changed answer resets."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from pydantic import ValidationError

from bot.callbacks import TYPICAL
from bot.flow.answers import build_request
from bot.flow.options import (
    FLOWS,
    MODEL_KIND,
    RESULT,
    SPEECH_FLOW,
    Accepted,
    Answers,
    Choose,
    Option,
    Rejected,
    Step,
    StepInput,
    method_options,
    model_default,
    model_options,
    model_tokens,
    numbers,
    precision_options,
    resolution_options,
    task_options,
)
from core import parse as core_parse
from core.catalogue.catalog import Catalog
from core.catalogue.models import ModelKind
from core.contract import CustomModel, Method, Request
from core.errors import ParseError, UnknownModelError
from core.language import words as core_texts
from core.sizing.defaults import default_context, default_seq_len

# Text models the LLM steps size too (BERT, T5: inference and training of a transformer); a speech
# model (Whisper) typed at the inference step is sized as speech (issue 22), its windows as users.
TEXT_KINDS = frozenset({ModelKind.LLM, ModelKind.ENCODER, ModelKind.ENCODER_DECODER, ModelKind.SPEECH})


def _decode_int(value: str) -> int:
    return int(value)


def _decode_resolution(value: str) -> list[int]:
    w, h = value.split("x")
    return [int(w), int(h)]


# ---------------------------------------------------------------- typed answers


def _validated(answers: Answers, name: str, value: Any) -> StepInput:
    """Accept `value` for `name` only if the whole request stays valid (bounds live in the contract)."""
    try:
        Request.model_validate({**build_request(answers), name: value})
    except (ValidationError, KeyError, ValueError):
        return Rejected("out_of_range", {"field": name, "value": value})
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
    """A catalogue name / alias / HF id, or a size such as `13B` (a language model's); ambiguous → a
    short choice; a model of another kind than the task's (`sdxl` for an LLM) → refused, saying so."""
    text = text.strip()
    if not text or len(text) > 200:
        return Rejected()
    try:
        return _of_the_tasks_kind(catalog.resolve_model(text).id, answers, catalog)
    except UnknownModelError:
        pass
    try:
        model = core_parse.parse(text, catalog).model
    except ParseError as e:
        options = model_choice(e.candidates, catalog)
        return Choose(options) if options else Rejected(e.code)
    if isinstance(model, CustomModel):
        if _kind_of_task(answers) != ModelKind.LLM:  # a size describes a language model
            return Rejected("size_not_allowed", {"kind": _kind_of_task(answers).value})
        return Accepted(model.model_dump(exclude_defaults=True))
    if isinstance(model, str):
        return _of_the_tasks_kind(model, answers, catalog)
    return Accepted(model)


def _kind_of_task(answers: Answers) -> ModelKind:
    return MODEL_KIND.get(answers.task or "", ModelKind.LLM)


def _of_the_tasks_kind(model_id: str, answers: Answers, catalog: Catalog) -> StepInput:
    """The catalogue model, if it is of the kind the task sizes (an LLM for inference and training)."""
    spec = catalog.models.get(model_id)
    wanted = _kind_of_task(answers)
    if spec is None:  # a size or a Hugging Face id: a language model's
        if wanted == ModelKind.LLM:
            return Accepted(model_id)
        return Rejected("size_not_allowed", {"kind": wanted.value})
    if spec.kind == wanted or (wanted == ModelKind.LLM and spec.kind in TEXT_KINDS):
        return Accepted(model_id)
    return Rejected("wrong_kind", {"model": spec.name, "kind": spec.kind.value, "wanted": wanted.value})


# ---------------------------------------------------------------- the steps


def _field_default(name: str) -> Callable[[Answers, Catalog], int]:
    """The contract's default of the field, whatever the answers."""
    default = Request.model_fields[name].default
    assert isinstance(default, int)
    return lambda answers, catalog: default


# "Typical" (the core's default) only where it is not one of the buttons: the precision the checkpoint
# ships in (fp8 for DeepSeek R1, mxfp4 for GPT-OSS), the model's own resolution and frame count.
# Elsewhere the default is a button (4K, 1 user, 2K): the step names it (`default`) instead.
STEPS: dict[str, Step] = {
    step.name: step
    for step in (
        Step("task", task_options, typical=False, read=None),
        Step("model", model_options, read=read_model, typical=False),
        Step(
            "method",
            method_options,
            read=_read_choice("method", method_options),
            typical=False,
            row_width=3,
        ),
        Step(
            "precision",
            precision_options,
            read=_read_choice("precision", precision_options),
            applies=lambda a: a.get("method") != Method.QLORA,
            row_width=4,
        ),
        Step(
            "context_length",
            model_tokens((2048, 4096, 8192, 16384, 32768, 131072)),
            decode=_decode_int,
            read=_read_number(core_parse.parse_context, "context_length"),
            row_width=3,
            default=model_default(default_context),
            typical=False,
        ),
        Step(
            "concurrency",
            numbers((1, 2, 4, 8, 16, 32, 64)),
            decode=_decode_int,
            read=_read_number(core_parse.parse_count, "concurrency"),
            row_width=4,
            default=_field_default("concurrency"),
            typical=False,
        ),
        Step(
            "batch_size",
            numbers((1, 2, 4, 8, 16, 32)),
            decode=_decode_int,
            read=_read_number(core_parse.parse_count, "batch_size"),
            row_width=3,
            default=_field_default("batch_size"),
            typical=False,
        ),
        Step(
            "seq_len",
            model_tokens((512, 1024, 2048, 4096, 8192, 16384)),
            decode=_decode_int,
            read=_read_number(core_parse.parse_context, "seq_len"),
            row_width=3,
            default=model_default(default_seq_len),
            typical=False,
        ),
        Step(
            "resolution",
            resolution_options,
            decode=_decode_resolution,
            read=_read_resolution,
            row_width=3,
        ),
        Step(
            "images",
            numbers((1, 2, 4, 8)),
            decode=_decode_int,
            read=_read_number(core_parse.parse_count, "images"),
            row_width=4,
            default=_field_default("images"),
            typical=False,
        ),
        Step(
            "frames",
            numbers((16, 33, 49, 81, 129)),
            decode=_decode_int,
            read=_read_number(core_parse.parse_count, "frames"),
            row_width=5,
        ),
    )
}


def accepts(step: Step, value: str, answers: Answers, catalog: Catalog) -> bool:
    """Whether a button's value can be an answer to the step (buttons can be old or forged; a
    "Typical" of a message sent before the step lost it still means the default; a number is
    accepted as it would be typed)."""
    if value == TYPICAL:
        return step.typical or step.default is not None
    if any(o.value == value for o in step.options(answers, catalog)):
        return True
    if step.decode is _decode_int and step.read is not None:
        # a number no button offers now (over the model's maximum: an earlier keyboard, or forged)
        # means what typing it would; only its plain digits, which `decode` reads
        typed = step.read(value, answers, catalog)
        return isinstance(typed, Accepted) and str(typed.value) == value
    # a model may also be one of the candidates of a clarifying question
    return step.name == "model" and value in catalog.models


def decode(step: Step, value: str) -> Any:
    """A button's value → the answer; `TYPICAL` → None (the core's default)."""
    return None if value == TYPICAL else step.decode(value)


def path(answers: Answers) -> list[str]:
    """The steps this dialog goes through, `task` first, given the answers so far."""
    steps = ["task", *(SPEECH_FLOW if answers.speech else FLOWS.get(answers.task or "", ()))]
    return [s for s in steps if STEPS[s].applies(answers)]


def next_step(answers: Answers, current: str) -> str:
    steps = path(answers)
    if answers.quick and current == "model":
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
