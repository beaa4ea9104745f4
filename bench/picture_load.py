"""`bench/bot_load.py` with the pictures' share of the work shown: the bot's child processes' CPU (the
picture worker) beside the bot process's own, and what the bot sent as photos.

    python bench/picture_load.py [bot_load's options: --users 50 ...]

bot_load reads only the bot process's CPU (/proc/<pid>/stat): a render in a worker process would
look free. Here each of its CPU readings also sums the CPU of the bot's descendants alive at that
moment (found by their parent ids in /proc), so a worker started before the measured users (with the
bot) is counted for what it did during the run. Prints, after each
bot's line of bot_load: its children's CPU per update, and its sendPhoto calls in the measured run
(uploads, by file id) against its answers (sendMessage). As in bot_load, the full bot's warm-up
waits for its users' pictures: the one-off start of the renderer is not counted in the measured run.
Figures, not a test; Linux only.
"""

from __future__ import annotations

import asyncio
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import bot_load

own_cpu = bot_load.cpu_seconds
readings: list[tuple[float, float]] = []  # (monotonic time, the descendants' CPU seconds) per reading
sandboxes: list[Any] = []


def descendants(pid: int) -> list[int]:
    parents: dict[int, int] = {}
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rpartition(")")[2].split()
        except OSError:  # gone meanwhile
            continue
        parents[int(stat.parent.name)] = int(fields[1])
    found, frontier = [], [pid]
    while frontier:
        parent = frontier.pop()
        children = [child for child, of in parents.items() if of == parent]
        found += children
        frontier += children
    return found


def cpu_seconds(pid: int) -> float:
    """bot_load's figure (the bot process's own CPU), noting its descendants' beside it."""
    children = 0.0
    for child in descendants(pid):
        try:
            children += own_cpu(child)
        except OSError:
            continue
    readings.append((time.monotonic(), children))
    return own_cpu(pid)


class Arrivals(bot_load.Arrivals):
    def __init__(self, sandbox: Any) -> None:
        super().__init__(sandbox)
        sandboxes.append(sandbox)


def report(name: str, figures: bot_load.Figures, users: int) -> None:
    bot_load_report(name, figures, users)
    (began, before), (_, after) = readings[-2:]
    requests = [r for r in sandboxes[-1].telegram.requests if r.at >= began and not r.error]
    photos = [r for r in requests if r.method.lower() == "sendphoto"]
    uploads = sum(str(r.params.get("photo", "")).startswith("attach://") for r in photos)
    answers = sum(r.method.lower() == "sendmessage" for r in requests)
    per_update = (after - before) / max(figures.updates, 1) * 1000
    print(
        f"{'':9} children cpu {per_update:.1f} ms/update ({after - before:.2f} s)  sendPhoto {len(photos)}"
        f" ({uploads} uploads, {len(photos) - uploads} by id) for {answers} sendMessage",
        flush=True,
    )


bot_load_report = bot_load.report
bot_load.cpu_seconds = cpu_seconds
bot_load.Arrivals = Arrivals  # type: ignore[misc]
bot_load.report = report

if __name__ == "__main__":
    asyncio.run(bot_load.main())
