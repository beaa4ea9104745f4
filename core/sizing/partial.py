"""A request put together field by field (a guided dialog, a quick answer asking for its model): the
fields stated so far, in the contract's names and JSON values, and the rules that decide what follows
from them, so that no front end re-decides them.

- `stated` keeps the keys that are request fields (their values are checked when sized);
- `trains_from_scratch`: full training of a model given by its size or architecture is pretraining;
- `sized_as_speech`: inference of a catalogue speech model is sized by the speech fields;
- `model_spec`: the model the fields name as it is sized, where that is known offline;
- `answered` sets one field as a user answered it, dropping what that answer makes stale.
A field left out takes the contract's documented default; nothing here fills one in.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pydantic import ValidationError

from core.catalogue.catalog import Catalog
from core.catalogue.models import ModelKind, ModelSpec
from core.contract import CustomModel, Method, Request, Task
from core.errors import CoreError
from core.model.resolve import resolve_model

Fields = dict[str, Any]
"""Request fields by their contract names, JSON values (`Request.model_dump(mode="json")`'s)."""

# Fields a speech model's request and a language model's read differently: 8 users of an LLM would be
# read as 8 Whisper windows, its Q4_K_M refused. A model changing kind keeps none of them.
KIND_FIELDS = ("precision", "context_length", "concurrency", "batch_size")


def stated(data: Mapping[str, Any]) -> Fields:
    """The request fields of `data` (other keys left out, and None: the default). Values are checked
    when the request is sized: a number out of the contract's bounds is refused there, saying so."""
    return {name: value for name, value in data.items() if name in Request.model_fields and value is not None}


def trains_from_scratch(fields: Mapping[str, Any], catalog: Catalog) -> bool:
    """Full training (stated, or the default method) of a model given by its size or architecture, not
    a catalogue model: there are no weights to fine-tune, it is pretraining from scratch."""
    if fields.get("task") != Task.TRAINING.value:
        return False
    if fields.get("method", Method.FULL.value) != Method.FULL.value:
        return False
    if fields.get("model") is None:
        return True  # no model yet: a bare size is what the wizard then offers
    spec = model_spec(fields, catalog)  # a Hugging Face id (None offline) has weights to fine-tune
    return spec is not None and catalog.models.get(spec.id) is not spec


def sized_as_speech(fields: Mapping[str, Any], catalog: Catalog) -> bool:
    """Inference of a catalogue speech model (Whisper): sized by the speech fields (`SPEECH_SIZED_BY`)."""
    if fields.get("task") != Task.INFERENCE.value:
        return False
    spec = catalogue_model(fields, catalog)
    return spec is not None and spec.kind is ModelKind.SPEECH


def model_spec(fields: Mapping[str, Any], catalog: Catalog) -> ModelSpec | None:
    """The model the fields name, as a request of them is sized (`resolve_model`): a catalogue model,
    a size's typical shape, an architecture. None where that needs the network (a Hugging Face id the
    catalogue lacks), or no model is named, or the core refuses the one named."""
    model = fields.get("model")
    try:
        if isinstance(model, Mapping):
            model = CustomModel.model_validate(model)
        if isinstance(model, (str, CustomModel)):
            return resolve_model(model, catalog, hf_lookup=False)[0]
    except (CoreError, ValidationError):
        pass
    return None


def catalogue_model(fields: Mapping[str, Any], catalog: Catalog) -> ModelSpec | None:
    """The catalogue's own model the fields name (`model_spec`; None: a size, an architecture, a
    Hugging Face id): what the front ends bound a model's context and sequence length by."""
    spec = model_spec(fields, catalog)
    return spec if spec is not None and catalog.models.get(spec.id) is spec else None


def answered(fields: Mapping[str, Any], name: str, value: Any, catalog: Catalog) -> Fields:
    """The fields with `name` set to what the user answered (None: the default), and what the answer
    makes stale dropped: a field an inverse question solved for, once answered, is no longer solved;
    QLoRA fixes the base precision (nf4), so a precision chosen before it goes; a model of another
    kind (speech ↔ language) drops the fields the two read differently (`KIND_FIELDS`)."""
    result = {k: v for k, v in fields.items() if k != name}
    if value is not None:
        result[name] = value
    if value is not None and fields.get("solve_for") == name:
        result.pop("solve_for")
    if name == "method" and value == Method.QLORA.value:
        result.pop("precision", None)
    if name == "model" and sized_as_speech(fields, catalog) != sized_as_speech(result, catalog):
        for kind_field in KIND_FIELDS:
            result.pop(kind_field, None)
    return result
