"""The reading itself: names first, then settings, the task, the model and bare numbers.

Only the first `MAX_TEXT_CHARS` characters of a text are read (note `parse_text_cut`), and every
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
    MAX_LAYERS,
    Assumption,
    CpuOffload,
    Engine,
    KvPrecision,
    Method,
    OffloadMode,
    Precision,
    SolveFor,
    Task,
)
from core.errors import CatalogError, ParseError
from core.language.words import note
from core.parse import latency, questions
from core.parse.models import _name_words, _no_model_error, _read_model, _take_hf_id, _typed_words
from core.parse.names import take_names
from core.parse.speculative import split_speculative
from core.parse.text import (
    MAX_RESOLUTION_SIDE,
    MAX_TEXT_CHARS,
    MIN_BARE_NUMBER,
    MIN_RESOLUTION_SIDE,
    Fields,
    Reading,
    _cut,
    _normalize,
    _number,
    _Text,
    _tokens_count,
)
from core.parse.vocabulary import (
    _BARE_K,
    _BARE_NUMBER,
    _CONTEXT,
    _GGUF_OF,
    _KV_CACHE,
    _LORA_RANK,
    _ON_CARDS,
    _RESOLUTION,
    _SEQ_LEN,
    _VIDEO_P,
    Table,
    table_gate,
    vocabulary,
)
from core.sizing.stack import split_stack


def catalog_or_default(catalog: Catalog | None) -> Catalog:
    if catalog is not None:
        return catalog
    try:
        return default_catalog()
    except CatalogError:  # data files missing or broken: still read settings, models by size only
        return Catalog([], [], [])


def read(raw: str, catalog: Catalog, base: Task | None = None) -> Reading:
    """Read `raw`; with `base` (a follow-up to a request of that task) a model need not be named."""
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


def _take_first(text: _Text, f: Fields, name: str, table: Table) -> None:
    gate = table_gate(table)  # one scan where no row is in the text, not one per row
    if gate is not None and gate.search(text.rest) is None:
        return
    for pattern, value in table:
        if text.take(pattern):
            f.setdefault(name, value)


def _read_ram_offload(text: _Text, f: Fields, table: Table) -> None:
    """llama.cpp offload to RAM ("с выгрузкой в оперативку", "--n-cpu-moe 30", "-ngl 40"); a number
    written right after the flag is its value: -ngl → gpu_layers, anything of experts → n_cpu_moe."""
    for pattern, mode in table:
        match = text.take(pattern)
        if match is None:
            continue
        number = next((g for g in match.groups() if g and g.isdigit()), None)
        if number is None:
            f.setdefault("offload", mode)
        else:
            name = "n_cpu_moe" if mode is OffloadMode.EXPERTS else "gpu_layers"
            f.setdefault(name, min(int(number), MAX_LAYERS))


def _flag(text: _Text, pattern: re.Pattern[str]) -> bool | None:
    match = text.take(pattern)
    return None if match is None else not match.group("neg")


def _read_settings(text: _Text, f: Fields, reading: Reading) -> None:
    words = vocabulary()
    for pattern in _KV_CACHE:
        match = text.take(pattern)
        if match:
            f.setdefault("kv_cache_precision", _kv_precision(match.group(1)))
    _take_first(text, f, "optimizer", words.optimizers)
    gguf = text.take(words.gguf) is not None
    _take_first(text, f, "precision", words.precisions)
    if gguf:  # "gguf" alone is Q4_K_M; "gguf 8bit" is its 8-bit type
        if "precision" not in f:
            reading.notes.append(note("parse_gguf_default"))
        precision = f.get("precision", Precision.INT4)
        f["precision"] = _GGUF_OF.get(precision, precision)
    _take_first(text, f, "sharding", words.sharding)
    _take_first(text, f, "attention", words.attention)
    _read_ram_offload(text, f, words.ram_offload)
    for pattern, offload in words.offload:
        enabled = _flag(text, pattern)
        if enabled is not None:
            f.setdefault("cpu_offload", offload if enabled else CpuOffload.NONE)
    for name, pattern in (
        ("vae_tiling", words.tiling),
        ("vae_slicing", words.slicing),
        ("gradient_checkpointing", words.checkpointing),
    ):
        enabled = _flag(text, pattern)
        if enabled is not None:
            f[name] = enabled
    rank = text.take(_LORA_RANK)
    if rank:
        f["lora_rank"] = int(_number(rank.group(1) or rank.group(2)))
        if rank.group(0).startswith("lora"):  # "lora rank 64": the method named with its rank
            f.setdefault("method", Method.LORA)
    resolution = text.take(_RESOLUTION) or text.take(_VIDEO_P)
    if resolution:
        _set_resolution(f, _resolution(resolution), reading)
    for name, patterns in words.counted:
        for pattern in patterns:
            match = text.take(pattern, _a_count if name in _PICTURE_COUNTS else lambda m: True)
            if match:
                f.setdefault(name, int(_number(match.group(1))))
    for name, patterns in (("seq_len", _SEQ_LEN), ("context_length", _CONTEXT)):
        for pattern in patterns:
            match = text.take(pattern)
            if match:
                f.setdefault(name, _tokens_count(match))
    on_cards = text.take(_ON_CARDS)
    if on_cards:
        f.setdefault("num_gpus", int(on_cards.group(1)))


_PICTURE_COUNTS = ("images", "frames")


def _a_count(match: re.Match[str]) -> bool:
    """ "картинки 1024" is the resolution, not 1,024 images: a count of pictures is a small number."""
    return _number(match.group(1)) < MIN_BARE_NUMBER


def _kv_precision(word: str) -> KvPrecision:
    if word.startswith("8"):
        return KvPrecision.INT8
    if word.startswith("4"):
        return KvPrecision.INT4
    return KvPrecision(word)


def _resolution(match: re.Match[str]) -> tuple[int, int]:
    if match.re is _VIDEO_P:
        height = int(match.group(1))
        return (round(height * 16 / 9 / 16) * 16, height)  # "720p" is 16:9, sides multiples of 16
    if match.re is _BARE_NUMBER:
        side = int(_number(match.group(1)))
        return (side, side)
    return (int(_number(match.group(1))), int(_number(match.group(2))))


def _resolution_in_bounds(size: tuple[int, int]) -> bool:
    return min(size) >= MIN_RESOLUTION_SIDE and max(size) <= MAX_RESOLUTION_SIDE


def _set_resolution(f: Fields, size: tuple[int, int], reading: Reading) -> None:
    if not _resolution_in_bounds(size):
        if reading.error is None:
            code = "too_large" if max(size) > MAX_RESOLUTION_SIDE else "invalid"
            reading.error = ParseError(
                code, f"resolution {size[0]}x{size[1]} is out of range", field="resolution"
            )
        return
    f.setdefault("resolution", size)


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
