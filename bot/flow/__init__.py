"""The guided dialog as data: which steps a task goes through, their options and free-entry parsers.

No Telegram here. One generic mechanism drives every step: a step has a name (also the name of its
FSM state and of the request field it fills), the buttons it offers, how to read a typed answer, and
whether it applies to the answers so far. Handlers only move between steps.

- `bot.flow.options`: the tasks, their steps in order, each step's buttons, `Step` itself;
- `bot.flow.steps`: `STEPS`, the typed-answer readers, moving between steps;
- `bot.flow.answers`: answers ↔ the core request (the fields the user chose, no defaults of its own).
"""

from bot.flow.answers import (
    REQUEST_FIELDS,
    answers_from_fields,
    answers_from_request,
    build_request,
    field_bounds,
    fields_of,
    with_typed_fields,
)
from bot.flow.options import (
    CORE_TASK,
    FLOWS,
    METHODS,
    MODEL_KIND,
    MODELS_PER_PAGE,
    PRECISIONS,
    PRETRAIN_SIZES,
    RESOLUTIONS,
    RESULT,
    TASKS,
    Accepted,
    Answers,
    Choose,
    Option,
    Rejected,
    Step,
    StepInput,
    groups,
    paginate,
    popular_models,
    precision_choices,
    prompt_key,
    tokens_label,
)
from bot.flow.steps import (
    MAX_MODEL_CHOICES,
    STEPS,
    accepts,
    affected_steps,
    decode,
    forget_after,
    model_choice,
    next_step,
    option_names,
    path,
    previous_step,
    read_model,
)

__all__ = [
    "CORE_TASK",
    "FLOWS",
    "MAX_MODEL_CHOICES",
    "METHODS",
    "MODELS_PER_PAGE",
    "MODEL_KIND",
    "PRECISIONS",
    "PRETRAIN_SIZES",
    "REQUEST_FIELDS",
    "RESOLUTIONS",
    "RESULT",
    "STEPS",
    "TASKS",
    "Accepted",
    "Answers",
    "Choose",
    "Option",
    "Rejected",
    "Step",
    "StepInput",
    "accepts",
    "affected_steps",
    "answers_from_fields",
    "answers_from_request",
    "build_request",
    "decode",
    "field_bounds",
    "fields_of",
    "forget_after",
    "groups",
    "model_choice",
    "next_step",
    "option_names",
    "paginate",
    "path",
    "popular_models",
    "precision_choices",
    "previous_step",
    "prompt_key",
    "read_model",
    "tokens_label",
    "with_typed_fields",
]
