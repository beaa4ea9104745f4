"""What to do when the request does not fit the target cards: mitigations, cheapest first as in
practice, each sized in full (a request variant through the same formulas) and checked against the
target GPUs at the requested card count; when it still does not fit there, the fewest cards on
which it would. Each kind of mitigation is a rule of `_RULES`, run in that order; the list is then
sorted by fit (stable: that order stays within each fit). The rules live in `mitigation_rules`
(the model and how it is served) and `mitigation_training`; `mitigation_fit` sizes and checks each.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from pydantic import TypeAdapter

from core.catalogue.catalog import Catalog
from core.catalogue.gpus import GpuSpec
from core.catalogue.models import ModelSpec
from core.contract import Mitigation, Request

from .mitigation_fit import Found
from .mitigation_rules import (
    context_and_users,
    cpu_offload,
    diffusion,
    images,
    kv_cache_and_engine,
    more_gpus,
    prequantized,
    quantize,
    ram_offload,
    smaller,
    windows,
)
from .mitigation_training import training_method, training_steps
from .sizing import Sizer

# ~7 mitigations per estimate, validated in one call (as core.advice.sizing does the verdicts)
_MITIGATION_LIST = TypeAdapter(list[Mitigation])


def mitigations(
    req: Request,
    spec: ModelSpec,
    catalog: Catalog,
    sizer: Sizer,
    total: int,
    targets: list[GpuSpec],
    given: Request | None = None,
) -> list[Mitigation]:
    """Those that fit first, then those that fit on more cards, then the rest, CPU offload last;
    cheapest first as in practice within each, so a list cut for a phone never hides one that fits
    below a cheaper one that does not. Each is sized in full and checked against the target GPUs.
    `given`: the request as asked, for the defaults a method switch recomputes (`req` if None)."""
    found = Found(req, given or req, spec, catalog, sizer, total, targets)
    for rule in _RULES:
        rule(found)
    return _MITIGATION_LIST.validate_python(sorted(found.out, key=_fit_rank))


def _fit_rank(m: dict[str, Any]) -> int:
    """0: fits the requested cards; 1: fits on more cards; 2: does not fit anywhere tried; 3: CPU
    offload for experiments, the last resort whatever it fits (a diffusion pipeline's model offload
    is its standard recipe, ranked by fit like the rest). `m`: a mitigation's fields."""
    if m["action"] == "cpu_offload" and m["params"].get("experiments_only", 1):
        return 3
    if m["action"] == "more_gpus":
        return 1  # it fits by construction, on more cards than asked
    return 0 if m["fits"] else 1 if m["fits_count"] else 2


# The rules, cheapest first as in practice: each adds the mitigations of its kind that apply
# (`Found.add`); `mitigations` then puts those that fit first (a stable sort keeps this order within).
_RULES: tuple[Callable[[Found], None], ...] = (
    quantize,
    prequantized,
    images,
    windows,
    kv_cache_and_engine,
    context_and_users,
    training_steps,
    training_method,
    diffusion,
    smaller,
    more_gpus,
    ram_offload,
    cpu_offload,
)
