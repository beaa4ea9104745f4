"""The same family's next smaller model in a catalogue: of those under 80 % of the parameters, the
same generation first ("llama-3.1-70b" → "llama-3.1-8b", not "llama-2-13b"), then the largest;
with its `Arch`, remembered per catalogue (catalogue facts, the same for every request).
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Any
from weakref import WeakKeyDictionary

from core.catalogue.catalog import Catalog
from core.catalogue.models import ModelSpec
from core.formulas.params import Arch, arch_of

# Per catalogue (the offers-only copies the bot makes share its models): a model's smaller one and
# its Arch, by what `_smaller_model` reads of the model. Catalogue facts, the same for every request.
_SMALLER: WeakKeyDictionary[Catalog, dict[tuple[Any, ...], tuple[ModelSpec, Arch | None] | None]]
_SMALLER = WeakKeyDictionary()


def smaller_of(spec: ModelSpec, catalog: Catalog) -> tuple[ModelSpec, Arch | None] | None:
    """`_smaller_model` and its Arch, memoised per catalogue."""
    known = _SMALLER.setdefault(catalog, {})
    key = (spec.id, spec.family, spec.kind, spec.params_b)
    if key not in known:
        smaller = _smaller_model(spec, catalog)
        known[key] = (smaller, arch_of(smaller)) if smaller is not None else None
    return known[key]


def _smaller_model(spec: ModelSpec, catalog: Catalog) -> ModelSpec | None:
    same = [m for m in catalog.family_models(spec.family, spec.kind) if m.params_b < spec.params_b * 0.8]
    # the same generation first ("llama-3.1-70b" → "llama-3.1-8b", not "llama-2-13b"), then the largest
    line = _model_line(spec.id)
    return max(same, key=lambda m: (_common_prefix(_model_line(m.id), line), m.params_b)) if same else None


_SIZE_SUFFIX = re.compile(r"-\d+(?:\.\d+)?(?:x\d+(?:\.\d+)?)?[bm](?:-.*)?$")


@lru_cache(maxsize=1024)
def _model_line(model_id: str) -> str:
    """A catalogue id without its size: "llama-3.1-70b" → "llama-3.1", "qwen3-30b-a3b" → "qwen3"."""
    return _SIZE_SUFFIX.sub("", model_id)


def _common_prefix(a: str, b: str) -> int:
    n = 0
    for x, y in zip(a, b, strict=False):
        if x != y:
            break
        n += 1
    return n
