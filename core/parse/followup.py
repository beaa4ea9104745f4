"""After an answer: a follow-up that changes part of the request, and comparisons of cards.

"а в int4?", "а на двух?", "what about 32k context?" change only what they name in the previous
request; a text that names a model is a new question (`understand`). "сравни 4090 48 и h100 для
llama 3.1 70b" and, after an answer, "сравни с h100" read a workload and the cards to size it on.
A caller tries `comparison_follow_up`, then `follow_up`, then `understand`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from pydantic import ValidationError

from core.catalogue.catalog import Catalog
from core.contract import Assumption, Engine, Precision, Request, SolveFor, StackModel, Task
from core.formulas.precision import is_gguf
from core.language.words import note
from core.parse.grammar import _GGUF_OF
from core.parse.reading import catalog_or_default, read
from core.parse.text import Reading, _normalize, _validation_error
from core.parse.vocabulary import vocabulary
from core.sizing import stack

Config = tuple[str, int]
_MODEL_ERRORS = ("missing_model", "ambiguous_model", "unknown_model")
_GENERAL_ENGINES = (Engine.LLAMA_CPP, Engine.TRANSFORMERS, Engine.VLLM)  # chosen for a weight format


@dataclass(frozen=True)
class FollowUp:
    """The previous request with what the follow-up names changed (validated), and which fields did."""

    request: Request
    changed: tuple[str, ...]  # Request field names whose value changed, in the contract's order
    notes: list[Assumption] = field(default_factory=list)


@dataclass(frozen=True)
class Comparison:
    """One workload to size on several configurations (GPU id, card count), at least two distinct.

    `request` has no `gpus` and one card; size each configuration with
    `request.model_copy(update={"gpus": [gpu], "num_gpus": count})`.
    """

    request: Request
    configs: tuple[Config, ...]


def follow_up(text: str, previous: Request, catalog: Catalog | None = None) -> FollowUp | None:
    """The previous request changed as `text` says; None when `text` names a model (a new
    question), compares cards (`comparison_follow_up`), or names nothing a request holds.

    A card named replaces `gpus` (the count stays unless given); a count alone keeps the card.
    Raises `ParseError` when a value it names is out of range ("а с контекстом 10^12?").
    """
    return follow_up_reading(text, previous, catalog_or_default(catalog))[0]


def follow_up_reading(
    text: str, previous: Request, catalog: Catalog
) -> tuple[FollowUp | None, Reading | None]:
    """`follow_up`, and the reading when the text names a model: a new question, read with the previous
    request's task as its base (`core.parse.understand_message` reads it no second time)."""
    stack = _stack_change(text, previous, catalog)
    if stack is not None:
        return stack, None
    if comparison_follow_up(text, previous, catalog) is not None or not text.strip():
        return None, None
    reading = read(text, catalog, base=previous.task)
    if reading.names_model:
        return None, reading
    if reading.error is not None:
        raise reading.error
    _images_of_a_vision_model(reading, previous)
    named = _named(reading)
    if not named or not _changes(reading, previous):
        return None, None
    request = _apply(previous, named)
    changed = tuple(n for n in Request.model_fields if getattr(request, n) != getattr(previous, n))
    return FollowUp(request, changed, reading.notes), None


def comparison(text: str, catalog: Catalog | None = None) -> Comparison | None:
    """ "сравни 4090 48 и h100 для llama 3.1 70b int4", "4090 48 vs 2× h100 for qwen2.5 32b".

    None unless the text asks to compare ("сравни", "vs", "или", "лучше"…) at least two distinct
    configurations of a workload whose model it names: without one ("сравни 4090 и h100") it may
    be `comparison_follow_up` to an answer, or `understand` asks which model. Raises `ParseError`
    when a value it names is out of range.
    """
    if not vocabulary().compare.search(_normalize(text)):
        return None
    reading = read(text, catalog_or_default(catalog))
    configs = _configs(reading)
    if len(configs) < 2:
        return None
    for fields in (reading.fields, *([reading.error.partial] if reading.error else [])):
        fields.pop("gpus", None)
        fields.pop("num_gpus", None)
    if reading.error is not None and reading.error.code in _MODEL_ERRORS:
        return None
    return Comparison(reading.build(), tuple(configs))


def comparison_follow_up(text: str, previous: Request, catalog: Catalog | None = None) -> Comparison | None:
    """ "сравни с h100", "compare with 2× h100" after an answer: the previous card first (when it
    named one), then those of the text; other settings the text names change as in `follow_up`."""
    if not vocabulary().compare.search(_normalize(text)):
        return None
    reading = _read_after(text, previous, catalog_or_default(catalog))
    if reading is None:
        return None
    own = _configs(reading)
    first = [(previous.gpus[0], previous.num_gpus)] if previous.gpus else []
    configs = list(dict.fromkeys(first + own))
    if not own or len(configs) < 2:
        return None
    named = {k: v for k, v in _named(reading).items() if k not in ("gpus", "num_gpus")}
    request = _apply(previous, {**named, "gpus": None, "num_gpus": 1})
    return Comparison(request, tuple(configs))


_LEAD_WORDS = ("а", "and", "what", "about", "how", "а если", "ну", "теперь", "now")


def _stack_change(text: str, previous: Request, catalog: Catalog) -> FollowUp | None:
    """ "а без реранкера?", "without the embedder", "а без rag?" take models out of the previous
    stack; "а с bge-m3?", "+ реранкер", "and with bge-large" add one, replacing the stack's model of
    the same role ("с bge-large" after bge-m3 swaps the embedder). None when the text is not only that.
    """
    cleaned = _normalize(text).replace("+", " + ").strip().rstrip("?!.").strip()
    words = [w.strip(",") for w in cleaned.split() if w not in ("the", "a", "an")]
    while words and words[0] in _LEAD_WORDS:
        words = words[1:]
    if len(words) < 2 or words[0] not in (*stack.ADD_WORDS, *stack.REMOVE_WORDS):
        return None
    rest = " ".join(words[1:])
    extras = list(previous.extra_models)
    if words[0] in stack.REMOVE_WORDS:
        if rest in stack.stack_words().rag:
            kept: list[StackModel] = []
        else:
            role, named = stack.role_named(rest), stack.stack_model_named(rest, catalog)
            if role is None and named is None:
                return None
            kept = [
                e
                for e in extras
                if e.model != named and (role is None or stack.stack_role(e.model, catalog, e.role) != role)
            ]
        return _stack_follow_up(previous, kept, [])  # nothing of the kind in it: the same stack
    role = stack.role_named(rest)
    model = stack.stack_model_named(rest, catalog)
    if model is None and role is not None:
        defaults = stack.stack_words()
        model = defaults.default_reranker if role == "reranker" else defaults.default_embedding
    if model is None:
        return None
    notes = [note("stack_default_model", model=catalog.models[model].name)] if stack.role_named(rest) else []
    if any(e.model == model for e in extras):
        return _stack_follow_up(previous, extras, notes)  # already in the stack: the same answer
    role = stack.stack_role(model, catalog)
    same = [i for i, e in enumerate(extras) if stack.stack_role(e.model, catalog, e.role) == role]
    if same:  # in the place of the model of that role
        extras[same[0]] = StackModel(model=model)
        extras = [e for i, e in enumerate(extras) if i not in same[1:]]
    else:
        extras.append(StackModel(model=model))
    return _stack_follow_up(previous, extras, notes)


def _stack_follow_up(previous: Request, extras: list[StackModel], notes: list[Assumption]) -> FollowUp:
    request = _apply(previous, {"extra_models": extras})
    changed = ("extra_models",) if request.extra_models != previous.extra_models else ()
    return FollowUp(request, changed, notes)


def _read_after(text: str, previous: Request, catalog: Catalog) -> Reading | None:
    """The reading of a follow-up, or None when it is a new question or empty."""
    if not text.strip():
        return None
    reading = read(text, catalog, base=previous.task)
    if reading.names_model:
        return None
    if reading.error is not None:
        raise reading.error
    return reading


_GENERATION = (Task.IMAGE_GENERATION, Task.VIDEO_GENERATION)


def _images_of_a_vision_model(reading: Reading, previous: Request) -> None:
    """ "а с 4 картинками?" after a vision-language model's answer (its request has
    `images_per_prompt`) is images in each prompt, not a question about generating images."""
    f = reading.fields
    if previous.images_per_prompt is None or "images" not in f:
        return
    f["images_per_prompt"] = f.pop("images")
    if f.get("task") in _GENERATION:
        f["task"], reading.task_defaulted = previous.task, True


def _changes(reading: Reading, previous: Request) -> bool:
    """Whether the text is recognisably a change of the last request and nothing else: every word of
    it read (a word not understood — "стейбл диффужн" before the vocabulary knew it — is no licence
    to change the answer), no other kind of task ("картинки 1024" after a language model), and no
    search over models ("какая самая большая модель…" is a question of its own)."""
    if reading.unread or reading.fields.get("solve_for") == SolveFor.MODEL:
        return False
    task = None if reading.task_defaulted else reading.fields.get("task")
    return task is None or (task in _GENERATION) == (previous.task in _GENERATION)


def _named(reading: Reading) -> dict[str, Any]:
    """The fields the text itself states (not a task it merely defaulted to)."""
    named = dict(reading.fields)
    if reading.task_defaulted:
        named.pop("task", None)
    return named


def _configs(reading: Reading) -> list[Config]:
    """Distinct (card, count) pairs; a count said once for all ("на двух картах") fills the rest."""
    given = reading.gpu_configs
    shared = 1 if any(count for _, count in given) else int(reading.fields.get("num_gpus", 1))
    return list(dict.fromkeys((gpu, count or shared) for gpu, count in given))


def _apply(previous: Request, named: dict[str, Any]) -> Request:
    """`previous` with `named` set, keeping it consistent: a weight format the previous engine
    does not run clears that engine (the defaults choose again), as does training a GGUF file."""
    update = dict(named)
    if previous.solve_for is not None and previous.solve_for.value in named and "solve_for" not in named:
        update["solve_for"] = None  # "а при 8k?" after "the longest context": that value, not solved
    precision = update.get("precision", previous.precision)
    task = update.get("task", previous.task)
    if "precision" in update and "engine" not in update and previous.engine in _GENERAL_ENGINES:
        gguf = isinstance(precision, Precision) and is_gguf(precision)
        if gguf != (previous.engine is Engine.LLAMA_CPP):
            update["engine"] = None
    if update.get("engine") is Engine.LLAMA_CPP and "precision" not in update and precision in _GGUF_OF:
        update["precision"] = _GGUF_OF[precision]  # "а в llama.cpp?" after int4: its GGUF type
    previous_gguf = previous.precision is not None and is_gguf(previous.precision)
    if task is Task.TRAINING and previous_gguf and "precision" not in named:
        update["precision"] = None  # GGUF files are not trained: the training default instead
        if previous.engine is Engine.LLAMA_CPP and "engine" not in named:
            update["engine"] = None
    data = {**previous.model_dump(), **update}
    try:
        return Request(**data)
    except ValidationError as e:
        raise _validation_error(e, data) from None
