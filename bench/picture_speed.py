"""How long the answer's picture takes to draw (issue 11: ≤ 150 ms median, off the event loop).

    python bench/picture_speed.py [runs]

For a few typical answers (an LLM that fits, one that needs more cards than the user's, training,
image generation; ru and en), prints the median and max milliseconds of `core.layouts.picture.render_png`
over `runs` runs (default 9) after one warm-up, and the CPU time of the rendering thread (what the
figure would be on an idle machine: on a loaded one the wall time grows, the CPU time does not). Then the
same renders through the bot's path (`bot.pictures.Pictures.picture`, the worker process, no cache)
while the event loop runs a 5 ms ticker: the worker's start (the first picture), the median picture,
the CPU each picture costs this process (sending the answer, reading the PNG) and the worker, and
the ticker's worst lateness: how much the loop is held up while pictures are drawn beside it (a
blocked loop would be late by the whole render).
"""

from __future__ import annotations

import asyncio
import os
import statistics
import sys
import time
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bot.pictures import Pictures
from core.language.answer import Answer, build_answer
from core.layouts.picture import render_png
from core.parse import understand
from core.sizing.estimate import estimate

TARGET_MS = 150.0
TICK_S = 0.005
QUESTIONS = (
    ("llama 3.1 8b int4 32k 4 пользователя", "ru"),
    ("llama 3.1 70b fp16 on 3090", "en"),
    ("qwen2.5 32b на 4090 48", "ru"),
    ("train llama 3.1 8b full", "en"),
    ("flux dev 1024x1024", "en"),
)


def answer_of(question: str, lang: str) -> Answer:
    understood = understand(question)
    return build_answer(estimate(understood.request), lang, understood.notes)


def direct(answers: list[Answer], runs: int) -> list[float]:
    medians = []
    for (question, lang), answer in zip(QUESTIONS, answers, strict=True):
        render_png(answer)  # warm-up: fonts, the words' widths
        times, cpu = [], []
        for _ in range(runs):
            start, start_cpu = time.perf_counter(), time.thread_time()
            render_png(answer)
            times.append((time.perf_counter() - start) * 1000)
            cpu.append((time.thread_time() - start_cpu) * 1000)
        medians.append(statistics.median(times))
        print(
            f"{question!r:45} {lang}  median {medians[-1]:6.1f} ms  max {max(times):6.1f} ms  "
            f"(CPU {statistics.median(cpu):6.1f} ms)"
        )
    return medians


@dataclass
class Worker:
    start_ms: float  # the first picture: the worker's start and one render
    median_ms: float
    own_cpu_ms: float  # of this process, per picture
    worker_cpu_ms: float  # of the worker process, per picture
    late_ms: float  # the loop's ticker, at worst


def process_cpu_s(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


async def off_the_loop(answers: list[Answer], runs: int) -> Worker:
    late: list[float] = []
    stop = asyncio.Event()

    async def ticker() -> None:
        while not stop.is_set():
            start = time.perf_counter()
            await asyncio.sleep(TICK_S)
            late.append((time.perf_counter() - start - TICK_S) * 1000)

    tick = asyncio.create_task(ticker())
    pictures = Pictures(cache_size=0)  # no cache: every picture is drawn
    try:
        start = time.perf_counter()
        await pictures.picture(answers[0])
        start_ms = (time.perf_counter() - start) * 1000
        assert pictures.worker_pid is not None
        times = []
        own, worker = time.process_time(), process_cpu_s(pictures.worker_pid)
        for _ in range(runs):
            for answer in answers:
                start = time.perf_counter()
                await pictures.picture(answer)
                times.append((time.perf_counter() - start) * 1000)
        own = (time.process_time() - own) / len(times) * 1000
        worker = (process_cpu_s(pictures.worker_pid) - worker) / len(times) * 1000
    finally:
        await pictures.close()
    stop.set()
    await tick
    return Worker(start_ms, statistics.median(times), own, worker, max(late))


def main() -> None:
    runs = int(sys.argv[1]) if len(sys.argv) > 1 else 9
    answers = [answer_of(q, lang) for q, lang in QUESTIONS]
    medians = direct(answers, runs)
    overall = statistics.median(medians)
    print(f"render_png: median of medians {overall:.1f} ms (target ≤ {TARGET_MS:.0f} ms)")
    w = asyncio.run(off_the_loop(answers, max(runs // 3, 1)))
    print(
        f"through the bot's worker process: first picture (its start) {w.start_ms:.0f} ms, then median "
        f"{w.median_ms:.1f} ms; CPU per picture {w.own_cpu_ms:.1f} ms here, {w.worker_cpu_ms:.1f} ms in "
        f"the worker; the loop's {TICK_S * 1000:.0f} ms ticker was at worst {w.late_ms:.1f} ms late"
    )


if __name__ == "__main__":
    main()
