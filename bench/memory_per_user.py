"""Memory the bot keeps per distinct user: N users walk the guided dialog to its result, then N
others who make the same choices; the Python memory the bot holds after the second crowd more than
after the first (traced by tracemalloc from before the first, after a full collection), divided by
N. The bot runs in this process against a sandbox, as in the end-to-end tests; what the sandbox and
this script allocate is left out (any allocation with one of their frames on its stack).

    python bench/memory_per_user.py [--users 150] [--top 12]

Prints the figure (target of issue 21: at most 5 KB per user) and where the memory is: the
allocating line and the bot's innermost frame above it. Figures, not a test.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import os
import sys
import tempfile
import tracemalloc
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from bot_load import Arrivals, drive_guided  # noqa: E402
from pydantic import SecretStr  # noqa: E402

from bot.app import App, create_app  # noqa: E402
from bot.config import Settings  # noqa: E402
from bot.db.engine import migrate  # noqa: E402
from tgsandbox import Sandbox  # noqa: E402

WARMUP_USERS = 5
WAVE = 25
FRAMES = 10  # frames kept per allocation: enough to reach the bot's own frame, and fast
FIRST_USER_ID = 20_000
SAME_CHOICES = 27_720
"""The second crowd's ids are the first one's plus this: a user's choices at a step depend on its id
modulo the step's number of options (bot_load.guided_choice), and this is a multiple of any number
up to 12, so the second crowd asks what the first asked: caches keyed by the question are warm, and
what grows is what each new user costs."""
OURS = (str(ROOT / "tgsandbox"), str(ROOT / "bench"), tracemalloc.__file__)


def kept(snapshot: tracemalloc.Snapshot) -> tracemalloc.Snapshot:
    """The bot's allocations: none with a frame of the sandbox, of this script or of tracemalloc."""
    return snapshot.filter_traces([tracemalloc.Filter(False, f"{path}*", all_frames=True) for path in OURS])


async def in_waves(sandbox: Sandbox, arrivals: Arrivals, users: int, first_id: int) -> int:
    """The users walk in waves of `WAVE` (tracemalloc slows the bot several times: a whole crowd at
    once would run past the walk's timeouts); how many walks completed."""
    walks = 0
    for start in range(0, users, WAVE):
        figures = await drive_guided(sandbox, arrivals, min(WAVE, users - start), first_id + start)
        walks += figures.walks
    return walks


async def settled(app: App) -> None:
    """The updates in hand finished (their group commits too), garbage collected."""
    while app.inbox_dp.handling:
        await asyncio.sleep(0.05)
    gc.collect()


async def measure(users: int, top: int) -> None:
    with tempfile.TemporaryDirectory() as directory:
        url = f"sqlite+aiosqlite:///{directory}/bot.sqlite3"
        await migrate(url)
        async with Sandbox(reply_timeout=60) as sandbox:
            settings = Settings(  # type: ignore[call-arg]
                _env_file=None, database_url=url, bot_token=SecretStr(sandbox.token),
                telegram_api_url=sandbox.base_url, answer_pictures=False, hf_lookup=False,
                default_language="ru", contact_url="https://example.com/contact",
            )  # fmt: skip
            app = await create_app(settings, bot=sandbox.make_bot())
            polling = asyncio.create_task(
                app.dp.start_polling(
                    app.bot, allowed_updates=app.dp.resolve_used_update_types(),
                    handle_signals=False, polling_timeout=1,
                )
            )  # fmt: skip
            try:
                arrivals = Arrivals(sandbox)
                warm = await drive_guided(sandbox, arrivals, WARMUP_USERS, 1)
                assert warm.walks == WARMUP_USERS, f"{warm.walks} of {WARMUP_USERS} warm-up walks completed"
                # Traced from before the first crowd, which fills what the first answers build
                # (caches up to their bounds, pools, compiled statements): an object of a bounded
                # cache then counts when it goes in and when it is dropped alike. What the second
                # crowd adds on top is what a user costs.
                tracemalloc.start(FRAMES)
                first = await in_waves(sandbox, arrivals, users, FIRST_USER_ID)
                print(f"first crowd: {first} of {users} walks completed")
                await settled(app)
                before = kept(tracemalloc.take_snapshot())
                walks = await in_waves(sandbox, arrivals, users, FIRST_USER_ID + SAME_CHOICES)
                await settled(app)
                after = kept(tracemalloc.take_snapshot())
                tracemalloc.stop()
            finally:
                await app.dp.stop_polling()
                await polling
                await app.close()
    grown = after.compare_to(before, "traceback")
    total = sum(stat.size_diff for stat in grown)
    print(f"{walks} of {users} walks completed; the bot keeps {total / users / 1024:.1f} KB per user")
    print(f"where (the allocating line < the bot's innermost frame above it, top {top}):")
    by_line: dict[str, int] = {}
    for stat in grown:
        ours = [f for f in stat.traceback if "/bot/" in f.filename or "/core/" in f.filename]
        frames = [stat.traceback[-1], *ours[-1:]]
        where = " < ".join(f"{short(f.filename)}:{f.lineno}" for f in frames)
        by_line[where] = by_line.get(where, 0) + stat.size_diff
    for where, size in sorted(by_line.items(), key=lambda item: -item[1])[:top]:
        print(f"  {size / users:8.0f} B/user  {where}")


def short(path: str) -> str:
    """A file's path from the project's root, or from site-packages for a library's."""
    return path.split("site-packages/")[-1] if "site-packages/" in path else os.path.relpath(path, ROOT)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--users", type=int, default=150)
    parser.add_argument("--top", type=int, default=12)
    args = parser.parse_args()
    asyncio.run(measure(args.users, args.top))


if __name__ == "__main__":
    main()
