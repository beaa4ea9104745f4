"""The writer's cost (bot.db.group_commit): the CPU of one group commit of G button presses' works
(each a dialog row's answers, an FSM record and a done mark) on a migrated SQLite file, as the bot
writes them, for a few group sizes. Figures, not a test.

    python bench/group_commit_speed.py [--groups 400] [--sizes 1 6 20]

Prints, per group size, the process's CPU per group and per update (the best of three runs of
``--groups`` groups each). At 50 users walking the dialog (`python bench/bot_load.py --users 50`)
a group holds about 6 updates.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bot.db import dialogs, users
from bot.db.engine import create_engine, create_sessionmaker, migrate
from bot.db.group_commit import GroupCommit
from bot.db.work import UpdateWork

BOT_ID = 1
FIRST_USER = 1000


async def measure(size: int, groups: int) -> float:
    """CPU seconds per group commit of ``size`` works (the best of three runs)."""
    with tempfile.TemporaryDirectory() as directory:
        url = f"sqlite+aiosqlite:///{directory}/bench.sqlite3"
        await migrate(url)
        engine = create_engine(url)
        sessionmaker = create_sessionmaker(engine)
        try:
            dialog_ids = []
            async with sessionmaker() as session:
                for user in range(FIRST_USER, FIRST_USER + size):
                    await users.upsert_user(
                        session, telegram_id=user, username=None, first_name="Ann", telegram_language="ru",
                        source=None,
                    )  # fmt: skip
                    dialog_ids.append(
                        await dialogs.start_dialog(session, telegram_id=user, task="inference", source=None)
                    )
                await session.commit()
            writer = GroupCommit(sessionmaker)
            update_ids = iter(range(1, 10**9))

            async def one_group() -> None:
                works = []
                for user, dialog_id in enumerate(dialog_ids, FIRST_USER):
                    work = UpdateWork(bot_id=BOT_ID, update_id=next(update_ids), sessionmaker=sessionmaker)
                    answers = {"task": "inference", "model": "qwen3-8b", "precision": "fp16"}
                    await dialogs.save_answers(work, dialog_id, answers)
                    data = {"answers": answers, "msg_id": 5, "dialog_id": dialog_id}
                    work.fsm[f"fsm:{BOT_ID}:{user}"] = ("Wizard:context_length", data)
                    works.append(work)
                await asyncio.gather(*(writer.finish(work) for work in works))

            for _ in range(30):  # warm: statements compiled, caches filled
                await one_group()
            best = float("inf")
            for _ in range(3):
                started = time.process_time()
                for _ in range(groups):
                    await one_group()
                best = min(best, (time.process_time() - started) / groups)
            return best
        finally:
            await engine.dispose()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--groups", type=int, default=400)
    parser.add_argument("--sizes", type=int, nargs="+", default=[1, 6, 20])
    args = parser.parse_args()
    for size in args.sizes:
        per_group = asyncio.run(measure(size, args.groups))
        group_us, update_us = per_group * 1e6, per_group * 1e6 / size
        print(f"{size:3} updates a group: {group_us:6.0f} µs per group, {update_us:5.0f} µs per update")


if __name__ == "__main__":
    main()
