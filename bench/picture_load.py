"""`bench/bot_load.py` with the pictures' share of the work shown: the bot's child processes' CPU (the
picture worker) beside the bot process's own, and what the bot sent as photos.

    python bench/picture_load.py [bot_load's options: --users 50 ...]

bot_load reads only the bot process's CPU (/proc/<pid>/stat): a render in a worker process would
look free. Here each of its CPU readings also sums the CPU of the bot's descendants alive at that
moment (found by their parent ids in /proc), so a worker started before the measured users (the
warm-up's first picture starts it) is counted for what it did during the run. Prints, after each
bot's line of bot_load: its children's CPU per update, and its sendPhoto calls in the measured run
(uploads, by file id) against its answers (sendMessage). The full bot's warm-up also waits for its
users' pictures (bot_load waits for their answers only): the one-off start of the renderer (the
worker's start, or matplotlib's import in the bot) is not counted in the measured run. Figures,
not a test; Linux only.
"""

from __future__ import annotations

import asyncio
import contextlib
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


WARMUP_PICTURES_S = 60.0  # the warm-up's pictures come within a second or two; none when they are off


async def drive(
    sandbox: Any, arrivals: Any, users: int, questions: int, first_id: int, buttons: bool, question: Any
) -> Any:
    figures = await bot_load_drive(sandbox, arrivals, users, questions, first_id, buttons, question)
    if first_id != bot_load.FIRST_USER_ID and pictures_expected:  # the warm-up: its pictures too
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(WARMUP_PICTURES_S):
                for user_id in range(first_id, first_id + users):
                    await arrivals.wait(user_id, "sendPhoto", 0)
    return figures


async def run(name: str, args: Any, variant: Any, argv: list[str], env: dict[str, str]) -> Any:
    global pictures_expected
    pictures_expected = name == "full bot" and env.get("ANSWER_PICTURES", "1") not in ("0", "false")
    return await bot_load_run(name, args, variant, argv, env)


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


pictures_expected = False
bot_load_report, bot_load_drive, bot_load_run = bot_load.report, bot_load.drive, bot_load.run
bot_load.drive = drive
bot_load.run = run
bot_load.cpu_seconds = cpu_seconds
bot_load.Arrivals = Arrivals  # type: ignore[misc]
bot_load.report = report

if __name__ == "__main__":
    asyncio.run(bot_load.main())
