"""The estimator's measured accuracy, per workload class: core/data/accuracy.toml.

That file is generated (`python bench/calibration_table.py --write`) from the calibration cases
(tests/core/fixtures/calibration.jsonl) and committed; a test fails when it no longer matches what
the estimator gives on them. The answer's low/high range (core.sizing.estimate) is the p90 |error| of the
request's class, wider where the request lies outside the parameters that class was measured on;
/about, the README and docs/estimator.md quote the same file. No figure here is typed by hand.
"""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from core.catalogue.load import read_toml
from core.contract import Engine, Request, Task
from core.errors import CatalogError

ACCURACY_FILE = Path(__file__).parents[1] / "data" / "accuracy.toml"

# Fewer measured cases than this and a class's p90 says little: the overall p90 is used instead.
MIN_CLASS_CASES = 5
# Outside the measured parameters nothing was checked: the class's error bar is doubled (an error
# that grows with the distance from the measured cases is the usual shape; a factor, not a fit).
OUTSIDE_RANGE_FACTOR = 2.0
# Never quote a range narrower than this: the meters themselves (allocated vs reserved vs
# nvidia-smi) differ by the allocator's reserve and the CUDA context, about 5 % of a typical peak.
MIN_UNCERTAINTY = 0.05


def workload_class(req: Request) -> str:
    """`inference-<engine>` for LLM inference, `training-<method>` for training (LLM or diffusion),
    `image` and `video` for generation. `req` has its defaults filled (engine set)."""
    if req.task is Task.INFERENCE:
        engine = req.engine or Engine.TRANSFORMERS
        return f"inference-{engine.value.replace('.', '-')}"
    if req.task is Task.TRAINING:
        return f"training-{req.method.value}"
    return "image" if req.task is Task.IMAGE_GENERATION else "video"


Interval = tuple[float, float]


class ClassAccuracy(BaseModel):
    """One workload class: how many cases, how far off, and over which parameters."""

    model_config = ConfigDict(extra="forbid")

    id: str
    cases: int = Field(ge=0, description="measured cases (capacity cases counted apart)")
    median_abs_error: float | None = Field(default=None, ge=0)
    p90_abs_error: float | None = Field(default=None, ge=0)
    capacity_cases: int = Field(default=0, ge=0)
    capacity_fit: int = Field(default=0, ge=0, description="capacity cases the estimate fits")
    known_misses: int = Field(default=0, ge=0, description="cases outside their tolerance")
    params_b: Interval | None = Field(default=None, description="model sizes measured, billions")
    tokens: Interval | None = Field(default=None, description="context (inference) or seq_len (training)")
    batch: Interval | None = Field(default=None, description="concurrency (inference) or micro-batch")
    num_gpus: Interval | None = None
    megapixels: Interval | None = Field(default=None, description="image/frame area, width × height / 1e6")
    frames: Interval | None = None

    @model_validator(mode="after")
    def _consistent(self) -> ClassAccuracy:
        if self.cases and (self.median_abs_error is None or self.p90_abs_error is None):
            raise ValueError("a class with measured cases needs median_abs_error and p90_abs_error")
        if self.capacity_fit > self.capacity_cases:
            raise ValueError("capacity_fit exceeds capacity_cases")
        for name in ("params_b", "tokens", "batch", "num_gpus", "megapixels", "frames"):
            interval = getattr(self, name)
            if interval is not None and interval[0] > interval[1]:
                raise ValueError(f"{name}: low above high")
        return self


class Overall(BaseModel):
    model_config = ConfigDict(extra="forbid")

    cases: int = Field(gt=0)
    median_abs_error: float = Field(ge=0)
    p90_abs_error: float = Field(ge=0)
    rules_median_abs_error: float = Field(ge=0, description="weights × 1.2 / × 4 on the same cases")
    stated_cases: int = Field(ge=0)
    stated_median_abs_error: float = Field(ge=0)
    stated_rules_median_abs_error: float = Field(ge=0)
    capacity_cases: int = Field(ge=0)
    capacity_fit: int = Field(ge=0)
    known_misses: int = Field(ge=0)


class Accuracy(BaseModel):
    model_config = ConfigDict(extra="forbid")

    overall: Overall
    classes: list[ClassAccuracy]

    def by_id(self, class_id: str) -> ClassAccuracy | None:
        return next((c for c in self.classes if c.id == class_id), None)


def parse_accuracy(raw: dict[str, object], path: Path = ACCURACY_FILE) -> Accuracy:
    """Validate the file's content; an error names the file and the bad class row."""
    classes = raw.get("class", [])
    if not isinstance(classes, list) or not classes:
        raise CatalogError(f"{path}: expected a non-empty [[class]] array")
    for index, row in enumerate(classes, start=1):
        try:
            ClassAccuracy.model_validate(row)
        except ValidationError as e:
            row_id = row.get("id", "?") if isinstance(row, dict) else "?"
            first = e.errors()[0]
            where = ".".join(str(p) for p in first["loc"]) or "(row)"
            raise CatalogError(
                f"{path}: [[class]] row {index} (id={row_id!r}): {where}: {first['msg']}"
            ) from e
    try:
        return Accuracy.model_validate({"overall": raw.get("overall"), "classes": classes})
    except ValidationError as e:
        first = e.errors()[0]
        where = ".".join(str(p) for p in first["loc"])
        raise CatalogError(f"{path}: {where}: {first['msg']}") from e


@lru_cache(maxsize=1)
def load_accuracy(path: Path = ACCURACY_FILE) -> Accuracy:
    return parse_accuracy(read_toml(path), path)


class Outside(BaseModel):
    """A parameter of the request outside what its class was measured on."""

    dimension: str
    value: float
    low: float
    high: float


class Uncertainty(BaseModel):
    """The relative half-width of the answer's range and why."""

    fraction: float
    class_id: str
    cases: int = Field(description="measured cases of the class")
    measured: bool = Field(description="the class has enough measured cases for its own p90")
    outside: list[Outside] = Field(default_factory=list)


def request_point(req: Request, params_b: float) -> dict[str, float]:
    """The parameters of a filled request that the classes' measured ranges are given in."""
    point: dict[str, float] = {"params_b": params_b, "num_gpus": req.num_gpus}
    training = req.task is Task.TRAINING
    if req.resolution is not None:  # diffusion: generation or training
        point["megapixels"] = req.resolution[0] * req.resolution[1] / 1e6
        point["batch"] = req.batch_size if training else req.images
        if req.task is Task.VIDEO_GENERATION and req.frames:
            point["frames"] = req.frames
    elif training and req.seq_len:
        point["tokens"], point["batch"] = req.seq_len, req.batch_size
    elif req.context_length:
        point["tokens"], point["batch"] = req.context_length, req.concurrency
    return point


def uncertainty(req: Request, params_b: float, accuracy: Accuracy | None = None) -> Uncertainty:
    """p90 |error| of the request's class, × OUTSIDE_RANGE_FACTOR where a parameter of the request
    lies outside what the class was measured on; a class with fewer than MIN_CLASS_CASES measured
    cases takes the overall p90 (its own says too little). Never below MIN_UNCERTAINTY."""
    acc = accuracy or load_accuracy()
    class_id = workload_class(req)
    cls = acc.by_id(class_id)
    cases = cls.cases if cls is not None else 0
    if cls is None or cls.p90_abs_error is None or cases < MIN_CLASS_CASES:
        fraction = max(acc.overall.p90_abs_error, MIN_UNCERTAINTY)
        return Uncertainty(fraction=fraction, class_id=class_id, cases=cases, measured=False)
    outside = []
    for name, value in request_point(req, params_b).items():
        interval = getattr(cls, name)
        if interval is not None and not interval[0] <= value <= interval[1]:
            outside.append(Outside(dimension=name, value=value, low=interval[0], high=interval[1]))
    fraction = max(cls.p90_abs_error, MIN_UNCERTAINTY) * (OUTSIDE_RANGE_FACTOR if outside else 1.0)
    return Uncertainty(fraction=fraction, class_id=class_id, cases=cases, measured=True, outside=outside)


def about_figures(accuracy: Accuracy | None = None) -> dict[str, int | float]:
    """The figures /about quotes, in percent with one decimal, from the generated file."""
    o = (accuracy or load_accuracy()).overall
    measured = [c for c in (accuracy or load_accuracy()).classes if c.cases >= MIN_CLASS_CASES]
    p90s = [c.p90_abs_error for c in measured if c.p90_abs_error is not None]
    return {
        "cases": o.cases,
        "median": round(100 * o.median_abs_error, 1),
        "p90": round(100 * o.p90_abs_error, 1),
        "rules": round(100 * o.rules_median_abs_error, 1),
        "stated_cases": o.stated_cases,
        "stated_median": round(100 * o.stated_median_abs_error, 1),
        "stated_rules": round(100 * o.stated_rules_median_abs_error, 1),
        "classes": len(measured),
        "range_low": round(100 * max(min(p90s, default=0.0), MIN_UNCERTAINTY), 1),
        "range_high": round(100 * max(max(p90s, default=0.0), MIN_UNCERTAINTY), 1),
    }
