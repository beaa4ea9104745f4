"""Print the calibration error table: each published measurement, our estimate read with the same
meter, and the simple rules (weights × 1.2 inference, × 4 Adam training).

    python bench/calibration_table.py
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "core"))

from calibration_cases import Outcome, median_abs_error, run_all

GiB = 2**30


@dataclass(frozen=True)
class Summary:
    """The headline figures: median |error| of the estimator and of the simple rules over the measured
    cases, and over those whose settings the source stated (the bot's /about quotes these)."""

    cases: int
    median: float
    rules: float
    stated_cases: int
    stated_median: float
    stated_rules: float

    def line(self) -> str:
        return (
            f"median |error|: estimator {self.median:.1%}, simple rules {self.rules:.1%} over {self.cases} "
            f"measured cases; stated settings only: {self.stated_median:.1%} vs {self.stated_rules:.1%} "
            f"({self.stated_cases} cases)"
        )


def summarize(outcomes: list[Outcome] | None = None) -> Summary:
    outcomes = run_all() if outcomes is None else outcomes
    measured = [o for o in outcomes if o.case.meter != "capacity"]
    stated = [o for o in measured if o.case.settings_known]
    return Summary(
        cases=len(measured),
        median=median_abs_error(measured),
        rules=median_abs_error(measured, baseline=True),
        stated_cases=len(stated),
        stated_median=median_abs_error(stated),
        stated_rules=median_abs_error(stated, baseline=True),
    )


def main() -> None:
    outcomes = run_all()
    print("| case | model | workload | meter | settings | measured GiB | estimate GiB | error | rule |")
    print("|---|---|---|---|---|---|---|---|---|")
    for o in outcomes:
        r = o.case.request
        work = r["task"] if r["task"] != "training" else f"training {r.get('method', 'full')}"
        if o.case.meter == "capacity":
            print(
                f"| {o.case.id} | {r['model']} | {work} | fits {o.case.measured / GiB:.1f} GiB card | "
                f"{'stated' if o.case.settings_known else 'assumed'} | ≤ {o.case.measured / GiB:.2f} | "
                f"{o.compared / GiB:.2f} | {'fits' if o.compared <= o.case.measured else 'DOES NOT FIT'} | |"
            )
            continue
        print(
            f"| {o.case.id} | {r['model']} | {work} | {o.case.meter} | "
            f"{'stated' if o.case.settings_known else 'assumed'} | {o.case.measured / GiB:.2f} | "
            f"{o.compared / GiB:.2f} | {o.error:+.1%} | {o.baseline_error:+.1%} |"
        )
    print()
    print(summarize(outcomes).line())


if __name__ == "__main__":
    main()
