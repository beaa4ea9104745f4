"""How long an offload-to-RAM answer takes (issue 22: median <= 20 ms each), parse to result, as the
bot runs it, and how long its message is (<= 1,500 characters).

    python bench/offload_speed.py [runs]

Each question is parsed (`core.parse.understand`), answered (`core.inverse.solve.run`: the -ngl / --n-cpu-moe
search over the estimator and the final estimate) and laid out as the bot sends it
(`bot.presenter.render_result`, in the question's language), after one warm-up run; prints per question
the median and max milliseconds over `runs` runs (default 9) and the message length in Telegram's
UTF-16 units of the visible text, then the worst of each.
"""

from __future__ import annotations

import re
import statistics
import sys
import time
from html import unescape
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.message_length import translator
from bot.presenter import render_result, utf16_length
from core.catalogue.catalog import default_catalog
from core.inverse.solve import run
from core.parse import understand

TARGET_MS = 20.0
LIMIT = 1500
QUESTIONS = [
    ("ru", "qwen3 235b q4 на 4090 48 с выгрузкой в оперативку"),
    ("en", "Qwen3-235B-A22B Q4_K_M on 1x RTX 4090 48GB with --n-cpu-moe"),
    ("en", "gpt-oss-120b --n-cpu-moe on 4090 48gb"),
    ("en", "gpt-oss-120b --n-cpu-moe on 2x4090 48gb"),
    ("ru", "glm 4.5 air на 4090 48 с экспертами в оперативке"),
    ("ru", "glm 4.5 на 2x4090 48 с выгрузкой в оперативку"),
    ("en", "glm 4.5 on 4x rtx 4090 48gb offload to RAM"),
    ("ru", "сколько слоёв влезет на 4090 для llama 3.1 70b q4"),
    ("en", "llama 3.1 70b q4_k_m -ngl 40 on 4090"),
]


def visible(html: str) -> str:
    return unescape(re.sub(r"<[^>]+>", "", html))


def main(runs: int = 9) -> int:
    catalog = default_catalog()
    medians, lengths = [], []
    print(f"{'median ms':>9} {'max ms':>7} {'chars':>6}  question")
    for lang, question in QUESTIONS:
        times = []
        for i in range(runs + 1):
            start = time.perf_counter()
            result = run(understand(question, catalog).request, catalog)
            elapsed = (time.perf_counter() - start) * 1000
            if i:  # the first run warms the caches (catalogue, locales, GGUF sizes)
                times.append(elapsed)
        length = utf16_length(visible(render_result(result, translator(lang), lang)))
        median = statistics.median(times)
        medians.append(median)
        lengths.append(length)
        print(f"{median:9.1f} {max(times):7.1f} {length:6d}  {question}")
    worst_ms, worst_len = max(medians), max(lengths)
    ok = worst_ms <= TARGET_MS and worst_len <= LIMIT
    print(
        f"slowest median {worst_ms:.1f} ms (target <= {TARGET_MS:.0f}), longest message {worst_len} "
        f"(limit {LIMIT}): {'ok' if ok else 'over the target'}"
    )
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main(int(sys.argv[1]) if len(sys.argv) > 1 else 9))
