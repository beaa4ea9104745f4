"""`estimate(request) -> Result`: the one entry point of the estimator.

Validate the request, resolve the model, fill every default (echoed back in `Result.request`),
size the peak per GPU from the component formulas, then advise (core.advice).
"""

from __future__ import annotations

from typing import Any

from pydantic import ValidationError

from core.advice import advise
from core.advice.latency import attach_latency
from core.advice.launch import with_launch
from core.advice.offload import answer as offload_answer
from core.advice.offload import notes as offload_notes_of
from core.advice.offload import offload_request
from core.advice.offload import prepare as prepare_offload
from core.catalogue.catalog import Catalog, default_catalog
from core.catalogue.models import ModelSpec
from core.contract import (
    Assumption,
    Engine,
    Range,
    Request,
    ResolvedModel,
    Result,
    Task,
    max_model_split,
)
from core.errors import CoreError, EstimateError
from core.formulas.params import Arch, arch_of
from core.formulas.peak import peak_breakdown
from core.language.words import note
from core.model.hub import Hub
from core.model.resolve import resolve_model
from core.sizing.accuracy import uncertainty
from core.sizing.defaults import fill_defaults
from core.sizing.hybrid import hybrid_notes
from core.sizing.notes import method_notes
from core.sizing.speculative import speculative_notes, speculative_result
from core.sizing.stack import filled_stack, size_stack

# Range around the point estimate: the measured p90 |error| of the request's workload class
# (core/sizing/accuracy.py, generated from the calibration cases); a model known by size only adds this
# (layers, KV heads and vocab guessed). The low end never goes below zero: capped at ±90%.
TYPICAL_ARCH_UNCERTAINTY = 0.15
MAX_UNCERTAINTY = 0.9


def estimate(
    request: Request | dict[str, Any], catalog: Catalog | None = None, *, hub: Hub | None = None
) -> Result:
    """Peak GPU memory, fit verdicts, the cheapest configuration and mitigations for one request.

    `hub`: where a Hugging Face id outside the catalogue is read (the bot passes the models it has
    looked up, `core.model.hub.MemoryHub`); without it, only with GPUFIT_HF_LOOKUP=1 (`core.model.resolve`).
    Raises a `CoreError` subclass naming the request field at fault.
    """
    req = parse_request(request)
    catalog = catalog or default_catalog()
    lookup = True if hub is not None else None  # None: as GPUFIT_HF_LOOKUP says
    spec, resolved, assumptions = resolve_model(req.model, catalog, hf_lookup=lookup, hub=hub)
    named = [catalog.gpus[g] for g in req.gpus or [] if g in catalog.gpus]
    req, offload_notes = offload_request(req, spec)
    filled, default_notes = fill_defaults(
        req,
        spec,
        no_bf16=bool(named) and not any(g.bf16 for g in named),
        no_fp8=bool(named) and not any(g.fp8 for g in named),
    )
    arch = arch_of(spec)
    limit = max_model_split(filled.task, filled.engine, arch.L, arch.a) if arch else None
    if limit is not None and filled.num_gpus > limit:
        raise EstimateError(
            f"num_gpus ({filled.num_gpus}) is more than {spec.name} can be split into: {limit}", "num_gpus"
        )
    filled = prepare_offload(filled, spec, arch, catalog)
    parts = peak_breakdown(filled, spec, arch)
    breakdown = {k: round(v) for k, v in parts.items() if v > 0 or k == "overhead"}
    stack, stack_notes = size_stack(filled, catalog, hub) if filled.extra_models else ([], [])
    extra = sum(p.total_bytes for p in stack)
    if stack:
        breakdown["extra_models"] = extra
        filled = filled.model_copy(update={"extra_models": filled_stack(filled, stack)})
    total = sum(breakdown.values())
    advice = advise(filled, spec, arch, catalog, total, extra, given=req, parts=parts)
    value_range, range_notes = _range(total, filled, resolved)
    offload = offload_answer(filled, spec, arch, catalog, total)
    notes = [
        *assumptions,
        *offload_notes,
        *default_notes,
        *method_notes(filled, spec, arch, parts),
        *stack_notes,
        *hybrid_notes(filled, spec),
        *speculative_notes(filled),
        *advice.assumptions,
        *range_notes,
        *offload_notes_of(offload),
    ]
    result = Result(
        request=filled,
        model=resolved,
        total_bytes=total,
        breakdown=breakdown,
        range=value_range,
        verdicts=advice.verdicts,
        recommendation=advice.recommendation,
        alternatives=advice.alternatives,
        target=advice.target,
        mitigations=advice.mitigations,
        without_checkpointing_bytes=_without_checkpointing(filled, spec, arch),
        throughput=advice.throughput,
        host=advice.host,
        assumptions=notes,
        serving_capacity=advice.serving,
        stack=stack,
        speculative=speculative_result(filled, spec, arch, breakdown, total) if arch else None,
        offload=offload,
    )
    return with_launch(attach_latency(result, spec, arch, catalog), spec, arch, catalog)


def _without_checkpointing(req: Request, spec: ModelSpec, arch: Arch | None) -> int | None:
    """Training with gradient checkpointing on: the peak per GPU with it off (Unsloth cannot turn it
    off). Shown beside the estimate, so a user with memory to spare sees the faster setting."""
    if req.task is not Task.TRAINING or not req.gradient_checkpointing or req.engine is Engine.UNSLOTH:
        return None
    variant = req.model_copy(update={"gradient_checkpointing": False})
    return round(sum(peak_breakdown(variant, spec, arch).values()))


def parse_request(request: Request | dict[str, Any]) -> Request:
    if isinstance(request, Request):
        return request
    if not isinstance(request, dict):
        raise CoreError("the request must be a JSON object", field=None)
    try:
        return Request.model_validate(request)
    except ValidationError as e:
        errors = e.errors()
        # `model` is a union (name or architecture): report the branch the caller meant
        branch = "CustomModel" if isinstance(request.get("model"), dict) else "str"
        first = next((x for x in errors if x["loc"][:2] == ("model", branch)), errors[0])
        loc = [str(p) for p in first["loc"] if not isinstance(p, int) and p not in ("str", "CustomModel")]
        field = ".".join(loc) or None
        raise CoreError(f"{field or 'request'}: {first['msg']}", field=field) from e


def _range(total: int, req: Request, resolved: ResolvedModel) -> tuple[Range, list[Assumption]]:
    """± the measured p90 |error| of the request's workload class (core/data/accuracy.toml), doubled
    outside the parameters that class was measured on (said in a note); a model known by its size
    only adds TYPICAL_ARCH_UNCERTAINTY (its architecture is guessed, which no case measures)."""
    found = uncertainty(req, resolved.params_b)
    u = found.fraction
    if resolved.source == "size":
        u += TYPICAL_ARCH_UNCERTAINTY
    percent = round(100 * min(u, MAX_UNCERTAINTY))
    notes = [
        note(
            "outside_measured_range",
            workload=found.class_id,
            dimension=o.dimension,
            # numbers, formatted in the user's locale by the message
            value=_significant(o.value),
            low=_significant(o.low),
            high=_significant(o.high),
            percent=percent,
        )
        for o in found.outside
    ]
    if not found.measured:
        notes.append(note("few_measured_cases", workload=found.class_id, cases=found.cases, percent=percent))
    u = min(u, MAX_UNCERTAINTY)
    return Range(low_bytes=round(total * (1 - u)), high_bytes=round(total * (1 + u))), notes


def _significant(x: float) -> int | float:
    """A whole number as it is (32768 tokens); a fraction to 3 significant digits: 70.554 → 70.6."""
    return int(x) if float(x).is_integer() else float(f"{x:.3g}")
