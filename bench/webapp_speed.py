"""The Mini App's answer: the server's work for one `POST /app/api/answer` (the chat's estimate,
`core.inverse.solve.run` through `bot.dialog.estimate`, the answer built and laid out as the page's JSON),
for requests the page makes as a slider moves — each one new (no remembered estimate reused).

    python bench/webapp_speed.py [--n 200]

Prints the median, p90 and maximum in milliseconds; the page asks for ≤ 50 ms (issue 24).
"""

from __future__ import annotations

import argparse
import gc
import json
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bot import dialog
from bot.app import GC_THRESHOLDS
from bot.webapp import layout
from core.catalogue.catalog import default_catalog

BASES = [
    {"task": "inference", "model": "llama-3.1-8b"},
    {"task": "inference", "model": "llama-3.1-70b", "precision": "int4", "gpus": ["h100-sxm"], "num_gpus": 2},
    {"task": "inference", "model": "qwen2.5-7b", "gpus": ["rtx3090"]},
    {"task": "training", "method": "qlora", "model": "llama-3.1-8b"},
    {"task": "image_generation", "model": "flux.1-dev"},
]


def requests(n: int) -> list[dict[str, object]]:
    """`n` requests, a slider's positions over the bases: context (inference) or sequence length."""
    out = []
    for i in range(n):
        base = dict(BASES[i % len(BASES)])
        if base["task"] == "inference":
            base["context_length"] = 1024 + 97 * i
            base["concurrency"] = 1 + i % 16
        elif base["task"] == "training":
            base["seq_len"] = 256 + 31 * i
        else:
            side = 256 + 64 * (i % 28)
            base["resolution"] = [side, side]
        out.append(base)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--n", type=int, default=200)
    args = parser.parse_args()
    catalog = default_catalog()
    for base in BASES:  # imports and first-use caches (a task's formulas, the texts), not counted
        dialog.ESTIMATES.answer(dialog.estimate(base, catalog), "ru", currency="RUB")
    # As the running bot does after start-up (bot.app create_app's on_startup): what start-up built is
    # out of the collector's way. Without it a full collection over it adds 0.1-0.7 s now and then.
    gc.collect()
    gc.freeze()
    gc.set_threshold(*GC_THRESHOLDS)
    times = []
    for fields in requests(args.n):
        start = time.perf_counter()
        result = dialog.estimate(fields, catalog)
        answer = dialog.ESTIMATES.answer(result, "ru", currency="RUB")
        json.dumps(layout.page(result, answer, catalog), ensure_ascii=False)
        times.append((time.perf_counter() - start) * 1000)
    times.sort()
    p90 = times[int(len(times) * 0.9) - 1]
    median = statistics.median(times)
    print(f"{len(times)} answers: median {median:.1f} ms, p90 {p90:.1f} ms, max {times[-1]:.1f} ms")


if __name__ == "__main__":
    main()
