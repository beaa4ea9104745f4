"""Which model the text names: a Hugging Face id, a catalogue name, or a size."""

from __future__ import annotations

import re

from pydantic import ValidationError

from core.catalogue.catalog import Catalog
from core.catalogue.models import ModelKind, ModelSpec
from core.catalogue.names import MAX_SEARCH_WORDS, name_words
from core.catalogue.sizes import SIZE, SIZE_MOE, size_of
from core.contract import CustomModel, Precision
from core.errors import ParseError
from core.language.words import note
from core.model.hub import hf_id_from_url
from core.parse.names import Names
from core.parse.text import MAX_CANDIDATES, Reading, _Text, _validation_error
from core.parse.vocabulary import vocabulary

# A link to a model's page on the Hub (its tree or a file of it may follow the id).
_HF_URL = re.compile(r"(?:https?://)?(?:www\.)?(?:huggingface\.co|hf\.co)/[^\s,;!?()\"']+", re.IGNORECASE)


def _take_hf_id(raw: str) -> tuple[str, str | None]:
    """`org/name` is a Hugging Face id; kept in its own case, since the Hub is case-sensitive. A link
    to the model's page on huggingface.co names it too."""
    for url in _HF_URL.finditer(raw):
        hf_id = hf_id_from_url(url.group(0))
        if hf_id is not None:
            return raw[: url.start()] + " " + raw[url.end() :], hf_id
    match = re.search(r"(?<![\w./-])([A-Za-z0-9][\w.-]*/[A-Za-z0-9][\w.-]*[A-Za-z0-9])(?![\w/])", raw)
    if not match:
        return raw, None
    return raw[: match.start()] + " " + raw[match.end() :], match.group(1)


def _read_model(
    text: _Text, catalog: Catalog, hf_id: str | None, names: Names, reading: Reading
) -> tuple[str | None, ModelKind | None]:
    size_match = text.take(SIZE_MOE) or text.take(SIZE)
    found_size = size_of(size_match) if size_match else None
    size = found_size.total_b if found_size else None
    if size is not None and reading.error is None:
        try:
            CustomModel(params_b=size)
        except ValidationError as e:
            reading.error = _validation_error(e, {})
            reading.error.field = "model"
    if hf_id:
        return _from_hf_id(catalog, hf_id, reading)
    if len(names.models) == 1:
        return names.models[0], catalog.models[names.models[0]].kind
    size_word = found_size.word if found_size else ""
    candidates = names.models or _fuzzy_candidates(text, catalog, size, size_word)
    if len(candidates) == 1:
        return candidates[0], catalog.models[candidates[0]].kind
    if candidates:
        if reading.error is None:
            reading.error = ParseError(
                "ambiguous_model",
                "several models match",
                field="model",
                candidates=_ranked(catalog, candidates),
            )
        return None, _common_kind(catalog, candidates)
    if size is None or reading.error is not None:
        return None, None
    query = _name_words(text)
    meant = _meant(query, catalog)
    if meant != query:  # "lamma 3.1 8b": which model it was, not a typical 8B
        typed = _typed_words(text)
        name = " ".join([*typed, size_word.lower()])
        found = catalog.search(" ".join([*_meant(typed, catalog), size_word]), MAX_CANDIDATES)
        sized = [m for m in found if _same_size(m, size, size_word, catalog.model_words(m.id))]
        suggestions = [m.id for m in sized or found]
        if suggestions:
            reading.error = ParseError(
                "unknown_model", f"unknown model {name!r}", field="model", candidates=suggestions, value=name
            )
            return None, None
    if query:
        reading.notes.append(note("parse_model_by_size", name=" ".join(query), size=size_word))
    return size_word, None


MIN_TYPO_LETTERS = 4  # shorter words are too often near some name by chance ("mix" ~ "mixtral")


def _typed_words(text: _Text) -> list[str]:
    """The words of a name left unread, version numbers with them ("lamma 3.1"), as typed."""
    filler = vocabulary().filler
    words = (w.strip(".") for w in re.findall(r"[^\s,;!?()\"'=:+]+", text.rest))
    return [w for w in words if w and not filler.fullmatch(w)]


def _meant(words: list[str], catalog: Catalog) -> list[str]:
    """`words` with each that is no catalogue word but close to one ("lamma") as that word ("llama")."""
    out = []
    for index, word in enumerate(words):  # as many as the catalogue's search reads, no more
        unknown = index < MAX_SEARCH_WORDS and len(word) >= MIN_TYPO_LETTERS
        unknown = unknown and not catalog.name_query([word])
        near = catalog.near_words(word) if unknown else []
        out.append(near[0] if near else word)
    return out


def _from_hf_id(catalog: Catalog, hf_id: str, reading: Reading) -> tuple[str, ModelKind | None]:
    lowered = hf_id.lower()  # quantized repos say so in their names: "...-AWQ", "...-GGUF"
    for word, precision in (
        ("awq", Precision.AWQ_INT4),
        ("gptq", Precision.GPTQ_INT4),
        ("gguf", Precision.Q4_K_M),
        ("fp8", Precision.FP8),
    ):
        if word in lowered:
            reading.fields.setdefault("precision", precision)
            break
    found = catalog.find_model(hf_id)
    if found is None:  # not catalogued: the estimator may still read it from the Hub
        return hf_id, None
    return found[0].id, found[0].kind


def _name_words(text: _Text) -> list[str]:
    filler = vocabulary().filler
    words = re.findall(r"[^\s,;!?()\"'=:+]+", text.rest)
    return [w.strip(".") for w in words if _has_letter(w) and not filler.fullmatch(w.strip("."))]


def _fuzzy_candidates(text: _Text, catalog: Catalog, size: float | None, size_word: str) -> list[str]:
    """Models whose names hold every name word left in the text (`Catalog.models_named`), then
    filtered by size."""
    filler = vocabulary().filler
    query = catalog.name_query(w.strip(".") for w in re.findall(r"[^\s,;!?()\"'=:+]+", text.rest))
    query -= {t for t in query if filler.fullmatch(t)}
    if not any(_has_letter(t) for t in query):  # a stray number names no model
        moe_word = size_word.lower()
        return [i for i in catalog.models if "x" in moe_word and moe_word in catalog.model_words(i)]
    for wanted in (query, {t for t in query if _has_letter(t)}):  # then without version numbers
        found = catalog.models_named(wanted)
        if size is not None:
            found = [
                i for i in found if _same_size(catalog.models[i], size, size_word, catalog.model_words(i))
            ]
        if found:
            # "qwen 7b" is Qwen's own 7B rather than DeepSeek's distill of it: prefer the family named
            own = [i for i in found if name_words(catalog.models[i].family) & wanted]
            return own or found
    return []


def _has_letter(word: str) -> bool:
    return re.search(r"[^\W\d_]", word) is not None


def _same_size(model: ModelSpec, size: float, size_word: str, names: frozenset[str]) -> bool:
    return size_word.lower() in names or abs(model.params_b - size) <= 0.15 * size


def _ranked(catalog: Catalog, ids: list[str]) -> list[str]:
    """Popular models first, then by size, so a clarifying question offers the likely ones."""
    ordered = sorted(ids, key=lambda i: (not catalog.models[i].popular, catalog.models[i].params_b, i))
    return ordered[:MAX_CANDIDATES]


def _common_kind(catalog: Catalog, ids: list[str]) -> ModelKind | None:
    kinds = {catalog.models[i].kind for i in ids}
    return kinds.pop() if len(kinds) == 1 else None


def _no_model_error(text: _Text, catalog: Catalog) -> ParseError:
    words = _name_words(text)
    if not words:
        return ParseError("missing_model", "no model named", field="model")
    name = " ".join(words)
    suggestions = [m.id for m in catalog.search(name, 5)]
    return ParseError(
        "unknown_model", f"unknown model {name!r}", field="model", candidates=suggestions, value=name
    )
