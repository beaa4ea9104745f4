"""Print the calibration error table: each published measurement, our estimate read with the same
meter, and the simple rules (weights × 1.2 inference, × 4 Adam training).

    python bench/calibration_table.py
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "core"))

from calibration_cases import median_abs_error, run_all

GiB = 2**30


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
    measured = [o for o in outcomes if o.case.meter != "capacity"]
    stated = [o for o in measured if o.case.settings_known]
    print()
    print(
        f"median |error|: estimator {median_abs_error(measured):.1%}, "
        f"simple rules {median_abs_error(measured, baseline=True):.1%} over {len(measured)} measured cases; "
        f"stated settings only: {median_abs_error(stated):.1%} vs "
        f"{median_abs_error(stated, baseline=True):.1%} ({len(stated)} cases)"
    )


if __name__ == "__main__":
    main()
