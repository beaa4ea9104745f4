"""The reading itself: names first, then settings, the task, the model and bare numbers (`read`).

Bounded work: only the first `MAX_TEXT_CHARS` characters are read (a longer message gets the note
`parse_text_cut`), runs of words are looked up only when their joined key is a catalogue key
(`Catalog.is_name_key`, a run growing only while its key starts a name: `Catalog.is_name_prefix`),
and fuzzy search reads at most `core.catalogue.names.MAX_SEARCH_WORDS` words, each compared once per
catalogue (`Catalog.fuzzy_comparisons` counts the comparisons). A number-led pattern runs only where
its keyword is in the text (`patterns.gated`), a word table's rows only where their joined pattern
finds something (`patterns.table_gate`): a text full of numbers is not backtracked per pattern. Every
step is linear in the words read, so a message of any length parses in a few milliseconds.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from core.catalogue.catalog import Catalog, default_catalog
from core.catalogue.models import ModelKind
from core.catalogue.names import name_words
from core.contract import (
    ANY_MODEL,
    Assumption,
    SolveFor,
    Task,
)
from core.errors import CatalogError, ParseError
from core.language.words import note
from core.parse import latency, questions
from core.parse.models import _name_words, _no_model_error, _read_model, _take_hf_id, _typed_words
from core.parse.names import take_names
from core.parse.settings import _read_settings, _take_first
from core.parse.speculative import split_speculative
from core.parse.task import _GENERATION, _read_task, _settle_batch, _settle_numbers, _settle_task
from core.parse.text import MAX_TEXT_CHARS, Fields, Reading, _cut, _normalize, _Text
from core.parse.vocabulary import Table, table_gate, vocabulary
from core.sizing.stack import split_stack


def catalog_or_default(catalog: Catalog | None) -> Catalog:
    if catalog is not None:
        return catalog
    try:
        return default_catalog()
    except CatalogError:  # data files missing or broken: still read settings, models by size only
        return Catalog([], [], [])


def read(raw: str, catalog: Catalog, base: Task | None = None) -> Reading:
    """Read `raw`; with `base` (a follow-up to a request of that task) a model need not be named.

    Hugging Face ids first, then the longest runs of words naming a catalogue model or GPU (`names`:
    so "phi 3 mini 4k" stays a name and "4k" is not taken as a context; "4090 48" is the 48 GB card
    and "2× h100" two of them), then keywords and numbers with their units (`vocabulary`: the words
    are data, `core/data/vocabulary.toml`, validated at load; the fixed shapes in `grammar`; the
    settings in `settings`, the task and bare numbers in `task`), each match consumed so no word
    counts twice. Model names are matched by the catalogue (`Catalog.find_model`,
    `Catalog.models_named`, `Catalog.search`) and sizes read by its one size reader
    (`core.catalogue.sizes.find_size`, the one `core.model.resolve.parse_size` uses too)."""
    reading = Reading()
    if not raw.strip():
        reading.error = ParseError("empty", "the text is empty", field="text")
        return reading
    raw, cut = _cut(raw)
    if cut:
        reading.notes.append(note("parse_text_cut", chars=MAX_TEXT_CHARS))
    raw, speculative = split_speculative(raw, catalog)  # "с драфт моделью llama 3.2 1b", "eagle3"
    raw, extra_models, stack_notes = split_stack(raw, catalog)  # "+ bge-m3 + reranker": core.sizing.stack
    reading.notes.extend(stack_notes)
    raw, hf_id = _take_hf_id(raw)
    text = _Text(_normalize(raw))
    f = reading.fields
    asks_cost = questions.take_cost(text, f)  # "1B токенов" before sizes are read
    latency.take_latency(text, f)  # "10 rps under 2s": before "2s" is read as anything else
    _take_first(text, f, "engine", vocabulary().engines)
    aside = _take_aside(text)
    names = take_names(text, catalog, f)
    reading.gpu_configs = names.configs
    reading.notes += _card_memory_notes(names.bare, catalog)
    questions.take_solve(text, f)
    _read_settings(text, f, reading)
    _read_task(text, f, reading)
    model, kind = _read_model(text, catalog, hf_id, names, reading)
    reading.names_model = model is not None or (
        reading.error is not None and reading.error.code == "ambiguous_model"
    )
    _settle_task(f, kind, reading, base)
    _settle_numbers(text, f, reading)
    _settle_batch(f)
    reading.notes += questions.settle(f, asks_cost)
    latency.settle(f)
    if model is not None:
        f["model"] = model
    _any_model(f, reading)
    if extra_models:
        f["extra_models"] = extra_models
    f.update(speculative)
    if reading.error is None and "model" not in f and base is None:
        reading.error = _no_model_error(text, catalog)
    _settle_aside(aside, names.models, f, reading, catalog)
    settle_images(f, catalog)
    reading.unread = _name_words(text)
    if reading.error is None and f.get("model") in catalog.models:  # a size says its own note
        _note_unread(text, catalog, f["model"], reading)
    if reading.error is not None:
        reading.error.partial = {**f, **reading.error.partial}
    return reading


@dataclass(frozen=True)
class _Aside:
    """What a text says besides a sizing question: small talk, a topic sized elsewhere, a model kind
    not sized yet (the first of each named)."""

    chat: bool
    off_topic: str | None
    unsized: str | None


def _take_aside(text: _Text) -> _Aside:
    words = vocabulary()
    chat = _take_all(text, words.chit_chat)  # "привет! спасибо": all of it, no word read as a name
    return _Aside(chat, _first_value(text, words.off_topic), _first_value(text, words.unsized))


def _first_value(text: _Text, table: Table) -> str | None:
    gate = table_gate(table)
    if gate is not None and gate.search(text.rest) is None:
        return None
    found = None
    for pattern, value in table:
        if _take_all(text, pattern):
            found = found or value
    return found


def _take_all(text: _Text, pattern: re.Pattern[str]) -> bool:
    """Take every match of `pattern` in one scan (blanking keeps the positions); whether there was one."""
    matches = list(pattern.finditer(text.rest))
    for match in matches:
        text.blank(match.start(), match.end())
    return bool(matches)


_NO_QUESTION = ("missing_model", "unknown_model", "ambiguous_model")


def _settle_aside(aside: _Aside, named: list[str], f: Fields, reading: Reading, catalog: Catalog) -> None:
    """A model kind not sized yet ("whisper large v3") is said so, never offered other models; a topic
    sized elsewhere (rendering, buying, payment) without a model named gets its own answer; a text of
    only thanks or greetings (and filler) is small talk, not a missing model."""
    error = reading.error
    asks_nothing = error is not None and error.code in _NO_QUESTION
    if aside.unsized in _STEERED:
        _steer(aside.unsized, named, f, reading, catalog)
        return
    if aside.unsized is not None and not named:
        reading.error = ParseError("unsized_model", "not sized yet", field="model", value=aside.unsized)
    elif aside.off_topic is not None and not reading.names_model and (error is None or asks_nothing):
        reading.error = ParseError("off_topic", "not a sizing question", field="text", value=aside.off_topic)
    elif aside.chat and error is not None and _asks_nothing_else(error) and set(f) <= {"task"}:
        reading.error = ParseError("chit_chat", "small talk", field="text")
    else:
        return
    f.pop("model", None)


_STEERED = ("asr", "vision")


def _steer(kind: str, named: list[str], f: Fields, reading: Reading, catalog: Catalog) -> None:
    """Speech recognition without a model named is asked of the catalogue's popular speech model
    (Whisper large-v3); a vision-language model asked about "with images" or "vision" reads one
    image per prompt unless a count was given (`images_per_prompt`). The catalogue says which
    models are which (`ModelKind.SPEECH`, `ModelSpec.vision`)."""
    if kind == "asr" and not named:
        speech = catalog.popular(ModelKind.SPEECH)
        error = reading.error
        if speech and (error is None or error.code in _NO_QUESTION):
            f["model"], reading.error = speech[0].id, None
            f["task"] = Task.INFERENCE
    elif kind == "vision":
        spec = catalog.models.get(str(f.get("model", "")))
        if spec is not None and spec.vision is not None:
            f.setdefault("images_per_prompt", 1)


def settle_images(f: Fields, catalog: Catalog) -> None:
    """ "с 4 картинками" about a vision-language model is four images in each prompt, not an image
    generation batch: the count moves to `images_per_prompt` and the task stays inference."""
    spec = catalog.models.get(str(f.get("model", "")))
    if spec is None or spec.vision is None or "images" not in f:
        return
    f["images_per_prompt"] = f.pop("images")
    if f.get("task") in _GENERATION:
        f["task"] = Task.INFERENCE


def _asks_nothing_else(error: ParseError) -> bool:
    """With thanks or a greeting: no model named, nor a word like one ("спасибо, бро")."""
    return error.code == "missing_model" or (error.code == "unknown_model" and not error.candidates)


def _of_another_name(word: str, catalog: Catalog) -> bool:
    """A word that may change which model or card is meant: it has a digit ("4060", "v2") or names
    other catalogue models ("mini" of "phi 4 mini", a model the catalogue lacks)."""
    return re.search(r"\d", word) is not None or bool(catalog.name_query([word]))


def _note_unread(text: _Text, catalog: Catalog, model: str, reading: Reading) -> None:
    """A word left unread that may change the model or the card ("на 4060", a card the catalogue lacks;
    "phi 4 mini") is said in the answer's notes, never silently dropped; words of the model's own name
    are read, not left over."""
    own = catalog.model_words(model)
    left = [w for w in _typed_words(text) if _of_another_name(w, catalog) and not name_words(w) <= own]
    if left:
        reading.notes.append(note("parse_unread", words=" ".join(left)))


def _any_model(f: Fields, reading: Reading) -> None:
    """ "Какую самую большую модель…": no model (or only a family, "qwen") is a question about the
    catalogue — every model of the task's kind, or that family."""
    if f.get("solve_for") != SolveFor.MODEL or "model" in f:
        return
    error = reading.error
    if error is not None and error.code == "ambiguous_model" and error.candidates:
        f["model"], reading.error = error.candidates[0], None
    elif error is None:
        f["model"] = ANY_MODEL


def _card_memory_notes(bare: list[str], catalog: Catalog) -> list[Assumption]:
    """A card named without its memory where the catalogue has the same chip with other memory ("4090":
    the 24 GB retail card, read as typed; the 48 GB rebuild is `same_compute_as` it): said, with the
    other card's id, so an answer can offer to switch (`parse_card_memory`)."""
    notes = []
    for gpu_id in bare:
        gpu = catalog.gpus[gpu_id]
        other = next((g for g in catalog.gpus.values() if g.same_compute_as == gpu_id), None)
        if other is not None:
            card, named = gpu.short_name or gpu.name, other.short_name or other.name
            notes.append(note("parse_card_memory", card=card, card_id=gpu_id, other=named, other_id=other.id))
    return notes
