"""How long an inverse answer takes (issue 11: median <= 20 ms), parse to result, as the bot runs it.

    python bench/solve_speed.py [runs]

Each question is parsed (`core.parse.understand`) and answered (`core.inverse.solve.run`: the search over the
estimator and the final estimate, time & cost where asked), after one warm-up run; prints per question
the median and max milliseconds over `runs` runs (default 9) and the estimator runs the search took,
then the median over all questions.
"""

from __future__ import annotations

import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from core.catalogue.catalog import default_catalog
from core.inverse.solve import run
from core.parse import understand

TARGET_MS = 20.0
QUESTIONS = [
    "какой максимальный контекст влезет в 4090 48 для llama 3.1 8b",
    "what is the longest context llama 3.1 8b fits on a 3090",
    "сколько пользователей выдержит H100 с qwen2.5 32b awq при 8k",
    "how many users can H100 serve with llama 3.1 70b int4 at 8k",
    "какой батч влезет на 4090 48 для lora llama 3.1 8b",
    "максимальный контекст для qlora llama 3.1 8b на 3090",
    "какая точность влезет на 4090 48 для llama 3.1 70b",
    "какая точность влезет на 3090 для llama 3.1 405b",
    "какую самую большую модель можно запустить на 24 ГБ",
    "самая большая qwen на 4090 48",
    "сколько будет стоить дообучение llama 3.1 8b на 10000 примеров по 1000 токенов, 3 эпохи",
    "сколько стоит обслуживать 10000 запросов в день на llama 3.1 8b",
]


def main(runs: int = 9) -> int:
    catalog = default_catalog()
    medians = []
    print(f"{'median ms':>9} {'max ms':>7} {'runs':>5}  question")
    for question in QUESTIONS:
        times = []
        estimates = 0
        for i in range(runs + 1):
            start = time.perf_counter()
            result = run(understand(question, catalog).request, catalog)
            elapsed = (time.perf_counter() - start) * 1000
            if i:  # the first run warms the caches (catalogue, locales)
                times.append(elapsed)
            estimates = result.solved.estimates if result.solved else 1
        median = statistics.median(times)
        medians.append(median)
        print(f"{median:9.1f} {max(times):7.1f} {estimates:5d}  {question}")
    overall = statistics.median(medians)
    verdict = "ok" if overall <= TARGET_MS else "over the target"
    print(f"median over all questions: {overall:.1f} ms (target <= {TARGET_MS:.0f} ms): {verdict}")
    return 0


if __name__ == "__main__":
    sys.exit(main(int(sys.argv[1]) if len(sys.argv) > 1 else 9))
