"""The calibration error table: each published measurement, our estimate read with the same meter,
the simple rules (weights × 1.2 inference, × 4 Adam training), and the error PER WORKLOAD CLASS
(LLM inference by engine, LoRA, QLoRA, full training, image, video) with the parameters covered.

    python bench/calibration_table.py          # print the tables
    python bench/calibration_table.py --write  # regenerate core/data/accuracy.toml, docs/accuracy.md
                                               # and the generated blocks of README.md, docs/estimator.md

The answer's low/high range, /about, the README and docs/estimator.md read the generated file
(core/sizing/accuracy.py); tests/core/test_calibration.py fails when it no longer matches the estimator:
after a change of a formula or of the cases, run `--write` and commit what it changed.
"""

from __future__ import annotations

import argparse
import math
import re
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "core"))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from calibration_cases import Outcome, median_abs_error, p90_abs_error, run_all

from core.sizing.accuracy import MIN_CLASS_CASES, request_point

ROOT = Path(__file__).resolve().parents[1]
GiB = 2**30
ACCURACY_TOML = ROOT / "core" / "data" / "accuracy.toml"
ACCURACY_MD = ROOT / "docs" / "accuracy.md"
# Files that carry the per-class table between these markers; --write rewrites what is between.
EMBEDDED = (ROOT / "README.md", ROOT / "docs" / "estimator.md")
BEGIN, END = (
    "<!-- accuracy-table:begin (bench/calibration_table.py --write) -->",
    "<!-- accuracy-table:end -->",
)
CLASSES = (
    "inference-transformers",
    "inference-vllm",
    "inference-llama-cpp",
    "training-lora",
    "training-qlora",
    "training-full",
    "image",
    "video",
)
CLASS_NAMES = {
    "inference-transformers": "LLM inference, transformers",
    "inference-vllm": "LLM inference, vLLM",
    "inference-llama-cpp": "LLM inference, llama.cpp",
    "training-lora": "LoRA training",
    "training-qlora": "QLoRA training",
    "training-full": "full training",
    "image": "image generation",
    "video": "video generation",
}
DIMENSIONS = ("params_b", "tokens", "batch", "num_gpus", "megapixels", "frames")


@dataclass(frozen=True)
class Summary:
    """The headline figures: median |error| of the estimator and of the simple rules over the measured
    cases, and over those whose settings the source stated."""

    cases: int
    median: float
    p90: float
    rules: float
    stated_cases: int
    stated_median: float
    stated_rules: float

    def line(self) -> str:
        return (
            f"median |error|: estimator {self.median:.1%} (p90 {self.p90:.1%}), "
            f"simple rules {self.rules:.1%} "
            f"over {self.cases} measured cases; stated settings only: {self.stated_median:.1%} vs "
            f"{self.stated_rules:.1%} ({self.stated_cases} cases)"
        )


def summarize(outcomes: list[Outcome] | None = None) -> Summary:
    outcomes = run_all() if outcomes is None else outcomes
    measured = [o for o in outcomes if not o.case.is_bound]
    stated = [o for o in measured if o.case.settings_known]
    return Summary(
        cases=len(measured),
        median=median_abs_error(measured),
        p90=p90_abs_error(measured),
        rules=median_abs_error(measured, baseline=True),
        stated_cases=len(stated),
        stated_median=median_abs_error(stated),
        stated_rules=median_abs_error(stated, baseline=True),
    )


def _class_of(o: Outcome) -> str:
    return o.case.workload_class


def class_rows(outcomes: list[Outcome]) -> list[dict[str, object]]:
    """One row per class: counts, median and p90 |error|, and each parameter's measured interval."""
    rows: list[dict[str, object]] = []
    for class_id in CLASSES:
        mine = [o for o in outcomes if _class_of(o) == class_id]
        measured = [o for o in mine if not o.case.is_bound]
        capacity = [o for o in mine if o.case.is_bound]
        row: dict[str, object] = {
            "id": class_id,
            "cases": len(measured),
            "capacity_cases": len(capacity),
            "capacity_fit": sum(o.within_tolerance for o in capacity),
            "known_misses": sum(not o.within_tolerance for o in mine),
        }
        if measured:
            row["median_abs_error"] = round(median_abs_error(measured), 4)
            row["p90_abs_error"] = round(p90_abs_error(measured), 4)
            points = [request_point(o.filled, o.params_b) for o in measured]
            for name in DIMENSIONS:
                values = [p[name] for p in points if name in p]
                if values:
                    row[name] = (_round(min(values), math.floor), _round(max(values), math.ceil))
        rows.append(row)
    return rows


def _round(x: float, direction: Callable[[float], int]) -> float:
    """Four significant digits, rounded outwards (`math.floor` for a low bound, `math.ceil` for a
    high one), so the range still holds the values it was taken from (1024² px = 1.048576 MP)."""
    if x == 0:
        return 0.0
    scale = 10 ** (3 - math.floor(math.log10(abs(x))))
    return direction(round(x * scale, 6)) / scale  # round(): 0.335 × 1000 is 335.00000000000006


def overall_row(outcomes: list[Outcome]) -> dict[str, object]:
    s = summarize(outcomes)
    capacity = [o for o in outcomes if o.case.is_bound]
    return {
        "cases": s.cases,
        "median_abs_error": round(s.median, 4),
        "p90_abs_error": round(s.p90, 4),
        "rules_median_abs_error": round(s.rules, 4),
        "stated_cases": s.stated_cases,
        "stated_median_abs_error": round(s.stated_median, 4),
        "stated_rules_median_abs_error": round(s.stated_rules, 4),
        "capacity_cases": len(capacity),
        "capacity_fit": sum(o.within_tolerance for o in capacity),
        "known_misses": sum(not o.within_tolerance for o in outcomes),
    }


def _toml_value(v: object) -> str:
    if isinstance(v, tuple):
        return "[" + ", ".join(_toml_value(x) for x in v) + "]"
    if isinstance(v, str):
        return f'"{v}"'
    if isinstance(v, float):
        return repr(v)
    return str(v)


def accuracy_toml(outcomes: list[Outcome]) -> str:
    lines = [
        "# GENERATED by `python bench/calibration_table.py --write` from the calibration cases",
        "# (tests/core/fixtures/calibration.jsonl):",
        "# the estimator's |error| per workload class against published measurements. Do not edit by hand;",
        "# read by core/sizing/accuracy.py (the answer's range, /about). Errors are fractions; p90 by",
        "# nearest rank.",
        "# Ranges [low, high] are the parameters the class's measured cases cover (tokens: context for",
        "# inference, seq_len for training; batch: concurrency, micro-batch or images;",
        "# megapixels: w × h / 1e6).",
        "",
        "[overall]",
    ]
    lines += [f"{k} = {_toml_value(v)}" for k, v in overall_row(outcomes).items()]
    for row in class_rows(outcomes):
        lines += ["", "[[class]]"] + [f"{k} = {_toml_value(v)}" for k, v in row.items()]
    return "\n".join(lines) + "\n"


def _pct(x: object) -> str:
    return f"{float(x):.1%}" if isinstance(x, int | float) else "—"


def _interval(row: dict[str, object], name: str) -> str:
    v = row.get(name)
    if not isinstance(v, tuple):
        return "—"
    low, high = v
    return f"{low:g}" if low == high else f"{low:g}–{high:g}"


def class_table(outcomes: list[Outcome]) -> str:
    """The per-class markdown table (README, docs)."""
    o = overall_row(outcomes)
    out = [
        "| workload class | measured cases | median \\|error\\| | p90 \\|error\\| (the answer's ±) "
        "| capacity/OOM cases right "
        "| model sizes, B | tokens | batch | GPUs | megapixels | frames |",
        "|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for row in class_rows(outcomes):
        if not row["cases"] and not row["capacity_cases"]:
            continue
        own = int(str(row["cases"])) >= MIN_CLASS_CASES
        p90 = (
            _pct(row.get("p90_abs_error")) if own else f"{_pct(o['p90_abs_error'])} (overall: too few cases)"
        )
        out.append(
            f"| {CLASS_NAMES[str(row['id'])]} | {row['cases']} | "
            f"{_pct(row.get('median_abs_error'))} | {p90} | "
            f"{row['capacity_fit']}/{row['capacity_cases']} | "
            + " | ".join(_interval(row, d) for d in DIMENSIONS)
            + " |"
        )
    out.append(
        f"| **all** | {o['cases']} | {_pct(o['median_abs_error'])} | {_pct(o['p90_abs_error'])} | "
        f"{o['capacity_fit']}/{o['capacity_cases']} | | | | | | |"
    )
    out += [
        "",
        "Simple rules (weights × 1.2, × 4 for Adam) on the same cases: "
        f"median {_pct(o['rules_median_abs_error'])}; "
        f"stated settings only ({o['stated_cases']} cases): estimator {_pct(o['stated_median_abs_error'])}, "
        f"rules {_pct(o['stated_rules_median_abs_error'])}. Cases outside their tolerance (known misses, "
        f"listed in tests/core/test_calibration.py): {o['known_misses']}.",
    ]
    return "\n".join(out)


def case_table(outcomes: list[Outcome]) -> str:
    out = [
        "| case | class | model | meter | settings | measured GiB | estimate GiB | error | rule |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for o in outcomes:
        r = o.case.request
        settings = "stated" if o.case.settings_known else "assumed"
        if o.case.is_bound:
            side = "≤" if o.case.meter == "capacity" else ">"
            verdict = "right" if o.within_tolerance else "WRONG"
            out.append(
                f"| {o.case.id} | {o.case.workload_class} | {r['model']} | {o.case.meter} | {settings} | "
                f"{side} {o.case.measured / GiB:.2f} | {o.compared / GiB:.2f} | {verdict} | |"
            )
            continue
        out.append(
            f"| {o.case.id} | {o.case.workload_class} | {r['model']} | {o.case.meter} | {settings} | "
            f"{o.case.measured / GiB:.2f} | {o.compared / GiB:.2f} | {o.error:+.1%} | "
            f"{o.baseline_error:+.1%} |"
        )
    return "\n".join(out)


def accuracy_md(outcomes: list[Outcome]) -> str:
    return (
        "# Estimator accuracy (generated)\n\n"
        "Generated by `python bench/calibration_table.py --write` from the calibration cases in\n"
        "`tests/core/fixtures/calibration.jsonl` (each with its source, quote, settings and meter);\n"
        "do not edit.\n"
        "The answer's ± range is the p90 |error| of its class (the overall p90 where a class has fewer than\n"
        f"{MIN_CLASS_CASES} measured cases), doubled outside the parameters the class covers.\n\n"
        "## Per workload class\n\n"
        + class_table(outcomes)
        + "\n\n## Per case\n\n"
        + case_table(outcomes)
        + "\n"
    )


def embed(text: str, table: str) -> str:
    """`text` with what is between the markers replaced by `table` (unchanged if there are none)."""
    pattern = re.compile(re.escape(BEGIN) + r".*?" + re.escape(END), re.S)
    return pattern.sub(lambda _: f"{BEGIN}\n{table}\n{END}", text)


def generated(outcomes: list[Outcome]) -> dict[Path, str]:
    """Every generated file's expected content."""
    table = class_table(outcomes)
    files = {ACCURACY_TOML: accuracy_toml(outcomes), ACCURACY_MD: accuracy_md(outcomes)}
    for path in EMBEDDED:
        files[path] = embed(path.read_text(), table)
    return files


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--write", action="store_true", help="regenerate the accuracy files")
    args = parser.parse_args()
    outcomes = run_all()
    if args.write:
        for path, content in generated(outcomes).items():
            if not path.exists() or path.read_text() != content:
                path.write_text(content)
                print(f"wrote {path.relative_to(ROOT)}")
        return
    print(case_table(outcomes))
    print()
    print(class_table(outcomes))
    print()
    print(summarize(outcomes).line())


if __name__ == "__main__":
    main()
