"""The task a text asks (training words, a diffusion model's kind, the task words; inference by default)
and the numbers read by it. The parser's defaults, reported as notes so an answer can say so:
"fine-tune" / "дообучение" without a method means LoRA, what almost everyone runs unless they say
"full"; plain "training" / "обучение" and "from scratch" keep the default, full; "gguf" without a
type means Q4_K_M, the most common GGUF download (`core.parse.settings`); a name with a size the
catalogue lacks ("llama 13b" when only other Llamas are known) falls back to the size alone, sized
with a typical architecture (`core.parse.models`). Several users of a language model with no engine
named are sized as a vLLM server by `core.sizing.defaults.fill_defaults` (note `parse_serving_vllm`).
Conventions: "32k" is 32 × 1024 tokens (model cards' "128k" is 131072); a bare number of 256 or more
is the context (the sequence length when training) for LLMs, a square resolution for image/video
models; an inference "batch N" is N sequences generated together (the concurrency), for image
generation N images per batch; a small number after "на"/"on" ("на двух") is a number of cards."""

from __future__ import annotations

import re

from core.catalogue.models import ModelKind
from core.contract import Engine, Method, Task
from core.language.words import note
from core.parse.grammar import _BARE_K, _BARE_NUMBER
from core.parse.patterns import table_gate
from core.parse.settings import _resolution, _set_resolution, _take_first
from core.parse.text import MIN_BARE_NUMBER, Fields, Reading, _number, _Text, _tokens_count
from core.parse.vocabulary import vocabulary


def _read_task(text: _Text, f: Fields, reading: Reading) -> None:
    words = vocabulary()
    if text.take(words.scratch):
        f.update(task=Task.TRAINING, method=Method.FULL)
    _take_first(text, f, "method", words.methods)
    fine_tune = text.take(words.fine_tune) is not None or f.get("engine") == Engine.UNSLOTH  # a tuning tool
    training = text.take(words.training) is not None
    if "method" in f or fine_tune or training:
        f.setdefault("task", Task.TRAINING)
    if fine_tune and "method" not in f:
        f["method"] = Method.LORA
        reading.notes.append(note("parse_finetune_lora"))
    gate = table_gate(words.tasks)
    for pattern, task in words.tasks if gate is None or gate.search(text.rest) else []:
        if text.take(pattern) and reading.task_word is None:
            reading.task_word = task


def _settle_task(f: Fields, kind: ModelKind | None, reading: Reading, base: Task | None = None) -> None:
    """Training words win; then a diffusion model's kind; then the words; inference by default.

    A language model implies no task (it may be run or trained), so it leaves the default marked
    as one: `parse_partial` then does not override a task the dialog already knows.
    """
    word = reading.task_word
    if "task" in f:
        return
    if kind == ModelKind.IMAGE:
        f["task"] = Task.IMAGE_GENERATION
    elif kind == ModelKind.VIDEO:
        f["task"] = Task.VIDEO_GENERATION
    elif word is not None and (kind is None or word == Task.INFERENCE):  # "картинки llama" is noise
        f["task"] = word
    elif kind is None and "frames" in f:
        f["task"] = Task.VIDEO_GENERATION
    elif kind is None and ("resolution" in f or "images" in f):
        f["task"] = Task.IMAGE_GENERATION
    else:
        f["task"] = base or Task.INFERENCE
        reading.task_defaulted = True
    if word in _GENERATION and kind not in (None, ModelKind.IMAGE, ModelKind.VIDEO):
        reading.notes.append(note("parse_task_not_for_model", task=word.value))  # said, not dropped


_GENERATION = (Task.IMAGE_GENERATION, Task.VIDEO_GENERATION)
_ON_WORD = re.compile(r"(?:^|\s)(?:на|on|in|в)\s*$")
_ROUND = 64  # contexts and image sides are multiples of this ("на 1024", "в 8192"); "на 4060" is a card


def _a_size(text: _Text, match: re.Match[str]) -> bool:
    """Whether a bare number is a context, sequence length or resolution: large, and no card's name."""
    return _number(match.group(1)) >= MIN_BARE_NUMBER and not _on_a_card(text, match)


def _on_a_card(text: _Text, match: re.Match[str]) -> bool:
    """ "на 4060", "в 3060": a number after "на"/"в"/"on"/"in", with no unit and not a round size, names
    a card (one the catalogue lacks, else it was read), not a context or a resolution: left unread, so
    the answer says so (`parse_unread`)."""
    after_on = _ON_WORD.search(text.rest, max(0, match.start() - 8), match.start()) is not None
    return after_on and _number(match.group(1)) % _ROUND != 0


def _settle_batch(f: Fields) -> None:
    """An inference "batch N" is N sequences generated together: the concurrency. Whether that
    makes a server (vLLM) is the estimator's default (`core.sizing.defaults.fill_defaults`), not the
    parser's."""
    if f.get("task") == Task.INFERENCE and "batch_size" in f:
        batch = f.pop("batch_size")
        f.setdefault("concurrency", batch)


def _settle_numbers(text: _Text, f: Fields, reading: Reading) -> None:
    """Numbers without a keyword, read by the task: a context, a sequence length or a resolution."""
    generation = f["task"] in (Task.IMAGE_GENERATION, Task.VIDEO_GENERATION)
    if generation:
        if "batch_size" in f and "images" not in f and f["task"] == Task.IMAGE_GENERATION:
            f["images"] = f.pop("batch_size")
        bare = text.take(_BARE_NUMBER, lambda m: _a_size(text, m))
        if bare:
            _set_resolution(f, _resolution(bare), reading)
        return
    training = f["task"] == Task.TRAINING
    if training and "context_length" in f:  # "lora 8k context" means the training sequence length
        f.setdefault("seq_len", f.pop("context_length"))
    name = "seq_len" if training else "context_length"
    match = text.take(_BARE_K) or text.take(_BARE_NUMBER, lambda m: _a_size(text, m))
    if match and name not in f:
        f[name] = _tokens_count(match)
