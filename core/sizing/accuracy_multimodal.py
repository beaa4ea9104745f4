"""Published figures of speech and vision-language models (`core/data/multimodal_figures.toml`),
validated at load, and the estimator's error on each: what the tests check and /about quotes."""

from __future__ import annotations

import statistics
from functools import lru_cache
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from core.catalogue.load import DATA_DIR, load_rows
from core.sizing.estimate import estimate

FIGURES_FILE = DATA_DIR / "multimodal_figures.toml"
MiB = 2**20


class Figure(BaseModel):
    model_config = ConfigDict(extra="forbid")

    id: str = Field(pattern=r"^[a-z0-9][a-z0-9._-]*$")
    kind: Literal["speech", "vision"]
    source: str = Field(min_length=1)
    meter: Literal["nvidia-smi", "allocated"]
    measured_mib: int = Field(gt=0)
    tolerance: float = Field(gt=0, lt=1)
    request: dict[str, Any]


def load_figures(path: Path = FIGURES_FILE) -> list[Figure]:
    return load_rows(path, "figure", Figure)


def estimated_mib(figure: Figure) -> float:
    """The estimate as the figure's meter reads it (allocated: without `overhead`)."""
    result = estimate(figure.request)
    total = result.total_bytes
    if figure.meter == "allocated":
        total -= result.breakdown.get("overhead", 0)
    return total / MiB


def error(figure: Figure) -> float:
    """(estimate - measured) / measured."""
    return (estimated_mib(figure) - figure.measured_mib) / figure.measured_mib


@lru_cache(maxsize=1)
def about_figures() -> dict[str, int | float]:
    """Per kind: cases, median and largest |error| in percent (one decimal), for /about."""
    out: dict[str, int | float] = {}
    figures = load_figures()
    for kind in ("speech", "vision"):
        errors = [abs(error(f)) * 100 for f in figures if f.kind == kind]
        out[f"{kind}_cases"] = len(errors)
        out[f"{kind}_median"] = round(statistics.median(errors), 1)
        out[f"{kind}_max"] = round(max(errors), 1)
    return out
