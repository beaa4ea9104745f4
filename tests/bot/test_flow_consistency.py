"""One question, one answer, whichever way it reaches the core: the request itself (the CLI, the
library), the quick answer's path (`answers_from_request` → `build_request`) and the dialog's steps
answered one by one (buttons, or typed where no button says it) size the same total and recommend the
same configuration. Hypothesis, bounded and derandomized: the same examples on every run."""

from __future__ import annotations

from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bot import flow
from bot.callbacks import TYPICAL
from core.catalogue.catalog import default_catalog
from core.catalogue.models import ModelKind
from core.contract import Method, Precision, Request, Task
from core.errors import CoreError
from core.sizing.estimate import estimate

CATALOG = default_catalog()
LLMS = sorted(m.id for m in CATALOG.models.values() if m.kind is ModelKind.LLM)
GPUS = sorted(CATALOG.gpus)
BOUNDED = settings(
    max_examples=25,
    deadline=None,
    derandomize=True,  # deterministic: the same examples every run, never a flaky one
    database=None,
    suppress_health_check=[HealthCheck.too_slow],
)

Outcome = tuple[Any, ...]


def outcome(request: Request | dict[str, Any]) -> Outcome:
    """What a user is told: the total and the recommended configuration, or the core's refusal."""
    try:
        result = estimate(request, CATALOG)
    except CoreError as e:
        return ("refused", type(e).__name__, e.field)
    rec = result.recommendation
    return (result.total_bytes, (rec.gpu, rec.count, rec.offer_id) if rec else None)


def typed(step: str, value: Any) -> str:
    """What someone types for a value no button offers."""
    return CATALOG.models[value].name if step == "model" else str(value)


def answer(step_name: str, value: Any, answers: flow.Answers) -> Any:
    """One step answered as a user would: its button when one says it, else typed."""
    step = flow.STEPS[step_name]
    if value is None and not step.typical and step.default is not None:
        value = step.default(answers, CATALOG)  # no "Typical" where the default is a button: that one
    button = TYPICAL if value is None else str(value)
    if any(o.value == button for o in step.options(answers, CATALOG)) or button == TYPICAL:
        assert flow.accepts(step, button, answers, CATALOG), (step_name, button)
        return flow.decode(step, button)
    assert step.read is not None
    read = step.read(typed(step_name, value), answers, CATALOG)
    assert isinstance(read, flow.Accepted), (step_name, value, read)
    return read.value


def dialog_answers(task: str, request: Request) -> flow.Answers:
    """The wizard's answers after its steps, each answered with the request's field (as
    `handlers.wizard.answer_step` records them); fields no step asks stay as the request states
    them, as a quick answer naming cards keeps them while its steps are changed in the dialog."""
    answers = flow.answered(flow.Answers(), "task", task, CATALOG)
    step = flow.next_step(answers, "task")
    while step != flow.RESULT:
        answers = flow.answered(answers, step, answer(step, getattr(request, step), answers), CATALOG)
        step = flow.next_step(answers, step)
    asked = set(flow.path(answers))
    for name, value in request.model_dump(mode="json", exclude_defaults=True).items():
        if name not in asked and name not in ("task", "model"):
            answers = answers.setting(name, value)
    return answers


def assert_same_everywhere(task: str, request: Request) -> None:
    quick = flow.answers_from_request(request, CATALOG)
    assert Request.model_validate(flow.build_request(quick)) == request, "a quick answer keeps every field"
    wizard = dialog_answers(task, request)
    direct = outcome(request)
    assert outcome(flow.build_request(quick)) == direct, ("quick answer", quick)
    assert outcome(flow.build_request(wizard)) == direct, ("dialog", wizard)


CONTEXTS = st.one_of(
    st.none(),
    st.sampled_from([int(o.value) for o in flow.STEPS["context_length"].options(flow.Answers(), CATALOG)]),
    st.integers(min_value=512, max_value=200_000),
)
CARDS = st.one_of(st.none(), st.tuples(st.sampled_from(GPUS), st.integers(min_value=1, max_value=8)))


@BOUNDED
@given(
    model=st.sampled_from(LLMS),
    precision=st.one_of(st.none(), st.sampled_from(flow.PRECISIONS["inference"])),
    context=CONTEXTS,
    concurrency=st.integers(min_value=1, max_value=16),
    cards=CARDS,
)
def test_llm_inference_is_sized_alike_on_every_path(
    model: str,
    precision: Precision | None,
    context: int | None,
    concurrency: int,
    cards: tuple[str, int] | None,
) -> None:
    fields: dict[str, Any] = {"gpus": [cards[0]], "num_gpus": cards[1]} if cards else {}
    request = Request(
        task=Task.INFERENCE,
        model=model,
        precision=precision,
        context_length=context,
        concurrency=concurrency,
        **fields,
    )
    assert_same_everywhere("inference", request)


@st.composite
def fine_tuning(draw: st.DrawFn) -> Request:
    """Fine-tuning a catalogue LLM, with a precision the dialog offers for the method (none for QLoRA:
    the dialog does not ask it, the core reads the base as NF4)."""
    method = draw(st.sampled_from(list(Method)))
    choices = flow.precision_choices(flow.Answers(task="finetune", request={"method": method.value}))
    precision = None if method is Method.QLORA else draw(st.one_of(st.none(), st.sampled_from(choices)))
    seq_lens = [int(o.value) for o in flow.STEPS["seq_len"].options(flow.Answers(), CATALOG)]
    return Request(
        task=Task.TRAINING,
        model=draw(st.sampled_from(LLMS)),
        method=method,
        precision=precision,
        batch_size=draw(st.integers(min_value=1, max_value=16)),
        seq_len=draw(st.one_of(st.none(), st.sampled_from(seq_lens), st.integers(256, 32_768))),
    )


@BOUNDED
@given(request=fine_tuning())
def test_fine_tuning_is_sized_alike_on_every_path(request: Request) -> None:
    assert_same_everywhere("finetune", request)
