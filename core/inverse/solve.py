"""Inverse questions: the largest value of one request field that fits the target cards.

`solve(request)` answers `request.solve_for` on `gpus[0] × num_gpus` (or a bare `memory_gb` card):
the longest context, the most concurrent users, the largest micro-batch or training sequence, the
highest-quality precision, or the largest catalogue model of the family. It searches over the same
estimator (`core.sizing.estimate`), so an answer and its inverse never disagree: counts by a probe
and a binary search (`solve_counts`), precision down `PRECISION_LADDER` and models largest first,
the first that fits (`solve_steps`). The value found fits and the next one does not
(`Result.solved`); the margin is what stays free per card. `run(request)` is the one entry for any
request: plain estimate, inverse, and time & cost. The target and the judge are in
`core.inverse.judge`, the answer in `solved`.
"""

from __future__ import annotations

from typing import Any

from core.catalogue.catalog import Catalog, default_catalog
from core.contract import (
    Request,
    Result,
)
from core.errors import CoreError
from core.inverse.judge import solve_target
from core.inverse.solve_counts import COUNT_FIELDS, solve_count
from core.inverse.solve_steps import solve_step
from core.language.words import note
from core.model.hub import Hub
from core.sizing.estimate import estimate, parse_request


def run(
    request: Request | dict[str, Any], catalog: Catalog | None = None, *, hub: Hub | None = None
) -> Result:
    """Any request: `solve` when it has `solve_for`, else `estimate`; then its time and cost when it
    gives a dataset, requests a day or outputs to price (`core.inverse.cost`). `hub`: as `estimate` takes
    it."""
    from core.inverse.cost import attach_cost, wants_cost

    req = parse_request(request)
    catalog = catalog or default_catalog()
    result = solve(req, catalog, hub=hub) if req.solve_for is not None else estimate(req, catalog, hub=hub)
    return attach_cost(result, catalog) if wants_cost(req) else result


def solve(
    request: Request | dict[str, Any], catalog: Catalog | None = None, *, hub: Hub | None = None
) -> Result:
    """The estimate at the largest value of `solve_for` that fits, with `Result.solved`."""
    req = parse_request(request)
    catalog = catalog or default_catalog()
    if req.solve_for is None:
        raise CoreError("solve_for is not set", field="solve_for")
    target, target_notes = solve_target(req, catalog)
    base = req.model_copy(update={"solve_for": None, "gpus": [target.gpu.id] if target.gpu else req.gpus})
    if req.solve_for in COUNT_FIELDS:
        result, solved = solve_count(base, req.solve_for, target, catalog, hub)
    else:
        result, solved = solve_step(base, req.solve_for, target, catalog, hub)
    notes = [*result.assumptions, *target_notes, note("solve_search", field=str(req.solve_for))]
    return result.model_copy(update={"request": _echo(result, req), "solved": solved, "assumptions": notes})


def _echo(result: Result, req: Request) -> Request:
    return result.request.model_copy(update={"solve_for": req.solve_for, "memory_gb": req.memory_gb})
