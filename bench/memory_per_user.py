"""Memory the bot keeps per distinct user: after a warm-up, N users walk the guided dialog to its
result, then N others who make the same choices; the Python memory the bot holds after the second
crowd more than after the first (traced by tracemalloc from before the first; each snapshot once
the updates in hand finished, the bot polled again and a full collection ran), divided by N. That
is what a long-running bot keeps for each additional user.

The bot runs as its own process (this script with ``--bot``, SQLite, polling) against a sandbox in
this one, so everything traced is the bot's. Before the warm-up (N users at once, not traced) the
bot compiles its multi-row statements for every number of rows up to N (bot.db.upserts: one per
batch size, which a long-running bot has all seen; a crowd meets new ones by chance). Caches whose
bound is below the first crowd's ~6 updates per user are full before the first snapshot, and what
the second crowd puts in one of them replaces an entry traced in the first: the two cancel (hence
``--users`` ≥ `MIN_USERS`). aiogram's ``Update.event_type``, an ``lru_cache`` holding the last 128
updates whole, is emptied before each snapshot, and so are the event loop's cancelled timers, which
asyncio drops lazily (once over half of 100+ are cancelled) and each of which holds the context of
the update that scheduled it (its handler data, the update): which of these are there at a
snapshot moved the figure by ±2 KB per user at 150 users. Caches bounded above the crowd (the FSM
records, the users' rows) count: that is what each user costs up to their bound.

    python bench/memory_per_user.py [--users 150] [--top 12] [--frames 8]

Prints the figure (target of issue 21: at most 5 KB per user) and where the memory is: the
allocating line and the bot's innermost frame above it (``--frames``: frames kept per allocation;
more reach further up, slower). Figures, not a test.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import heapq
import os
import sys
import tempfile
import time
import tracemalloc
from pathlib import Path
from typing import TYPE_CHECKING, Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from bot_load import Arrivals, drive_guided  # noqa: E402

from tgsandbox import Sandbox  # noqa: E402

if TYPE_CHECKING:
    from bot.app import App

WAVE = 25
FRAMES = 8  # frames kept per allocation: enough to reach the bot's own frame for most lines
MIN_USERS = 30
"""A crowd of this many sends ~180 updates: more than the 128 of the smallest bounded cache."""
WARMUP_USER_ID = 1
FIRST_USER_ID = 20_000
SAME_CHOICES = 27_720
"""The second crowd's ids are the first one's plus this: a user's choices at a step depend on its id
modulo the step's number of options (bot_load.guided_choice), and this is a multiple of any number
up to 12, so the second crowd asks what the first asked: caches keyed by the question are warm, and
what grows is what each new user costs."""
START_TIMEOUT_S = 120.0
READY = "ok"


async def in_waves(sandbox: Sandbox, arrivals: Arrivals, users: int, first_id: int) -> int:
    """The users walk in waves of `WAVE` (tracemalloc slows the bot several times: a whole crowd at
    once would run past the walk's timeouts); how many walks completed."""
    walks = 0
    for start in range(0, users, WAVE):
        figures = await drive_guided(sandbox, arrivals, min(WAVE, users - start), first_id + start)
        walks += figures.walks
    return walks


async def polled_again(sandbox: Sandbox) -> None:
    """The bot's getUpdates came back empty once: its polling loop no longer holds the last batch."""
    polls = sandbox.polls
    while sandbox.polls < polls + 2:  # the poll in hand came back (empty), and one more
        await asyncio.sleep(0.05)


class BotProcess:
    """The measured bot (this script with ``--bot``): told by a line on its stdin to start tracing,
    to take a snapshot, to report; it answers each with a line (the report: lines, then `READY`)."""

    def __init__(self, process: asyncio.subprocess.Process) -> None:
        self.process = process

    async def ask(self, command: str) -> list[str]:
        assert self.process.stdin is not None and self.process.stdout is not None
        self.process.stdin.write(f"{command}\n".encode())
        await self.process.stdin.drain()
        lines = []
        while (line := (await self.process.stdout.readline()).decode()) != f"{READY}\n":
            if not line:
                raise RuntimeError(f"the bot exited (code {await self.process.wait()}) on {command!r}")
            lines.append(line.rstrip("\n"))
        return lines


async def start_bot(sandbox: Sandbox, directory: str, users: int, top: int, frames: int) -> BotProcess:
    """The bot process, once it polls the sandbox."""
    env = os.environ | {
        "BOT_TOKEN": sandbox.token, "TELEGRAM_API_URL": sandbox.base_url, "PYTHONPATH": str(ROOT),
        "DATABASE_URL": f"sqlite+aiosqlite:///{directory}/bot.sqlite3", "LOG_LEVEL": "WARNING",
    }  # fmt: skip
    argv = [sys.executable, __file__, "--bot", f"--users={users}", f"--top={top}", f"--frames={frames}"]
    polls = sandbox.polls
    process = await asyncio.create_subprocess_exec(
        *argv, cwd=ROOT, env=env, stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE
    )
    deadline = time.monotonic() + START_TIMEOUT_S
    while sandbox.polls <= polls:
        if process.returncode is not None or time.monotonic() > deadline:
            raise RuntimeError(f"the bot did not start (exit {process.returncode})")
        await asyncio.sleep(0.05)  # start-up only, before anything is traced
    return BotProcess(process)


async def measure(users: int, top: int, frames: int) -> None:
    with tempfile.TemporaryDirectory() as directory:
        async with Sandbox(reply_timeout=60) as sandbox:
            bot = await start_bot(sandbox, directory, users, top, frames)
            try:
                arrivals = Arrivals(sandbox)
                warm = await drive_guided(sandbox, arrivals, users, WARMUP_USER_ID)
                assert warm.walks == users, f"{warm.walks} of {users} warm-up walks completed"
                # Traced from before the first crowd, which fills what the first answers build
                # (caches up to their bounds, pools, compiled statements): an object of a bounded
                # cache then counts when it goes in and when it is dropped alike. What the second
                # crowd adds on top is what a user costs.
                await bot.ask("trace")
                first = await in_waves(sandbox, arrivals, users, FIRST_USER_ID)
                print(f"first crowd: {first} of {users} walks completed", flush=True)
                await polled_again(sandbox)
                await bot.ask("before")
                walks = await in_waves(sandbox, arrivals, users, FIRST_USER_ID + SAME_CHOICES)
                print(f"second crowd: {walks} of {users} walks completed", flush=True)
                await polled_again(sandbox)
                for line in await bot.ask("after"):
                    print(line)
            finally:
                if bot.process.returncode is None:
                    assert bot.process.stdin is not None
                    bot.process.stdin.close()  # end of commands: the bot stops
                    await bot.process.wait()


# --- the bot's side (``--bot``) ---


async def serve(users: int, top: int, frames: int) -> None:
    """Run the bot (settings from the environment, as the parent set them) and answer commands."""
    from aiogram.types import Update
    from pydantic import SecretStr

    from bot.app import create_app
    from bot.config import Settings
    from bot.db.engine import migrate

    url = os.environ["DATABASE_URL"]
    await migrate(url)
    settings = Settings(  # type: ignore[call-arg]
        _env_file=None, database_url=url, bot_token=SecretStr(os.environ["BOT_TOKEN"]),
        telegram_api_url=os.environ["TELEGRAM_API_URL"], answer_pictures=False, hf_lookup=False,
        default_language="ru", contact_url="https://example.com/contact",
    )  # fmt: skip
    app = await create_app(settings)
    await compile_statements(app, users)
    polling = asyncio.create_task(
        app.dp.start_polling(
            app.bot, allowed_updates=app.dp.resolve_used_update_types(),
            handle_signals=False, polling_timeout=1,
        )
    )  # fmt: skip
    loop = asyncio.get_running_loop()
    commands = asyncio.StreamReader()
    await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(commands), sys.stdin)
    snapshots: list[tracemalloc.Snapshot] = []
    try:
        while command := (await commands.readline()).decode().strip():
            if command == "trace":
                tracemalloc.start(frames)
            else:
                while app.inbox_dp.handling:  # the updates in hand finished, their commits too
                    await asyncio.sleep(0.05)
                Update.event_type.fget.cache_clear()  # type: ignore[attr-defined]  # the last 128 updates
                drop_cancelled_timers(loop)
                gc.collect()
                snapshots.append(tracemalloc.take_snapshot())
            if command == "after":
                tracemalloc.stop()
                report(*snapshots, users=users, top=top)
            print(READY, flush=True)
    finally:
        await app.dp.stop_polling()
        await polling
        await app.close()


def drop_cancelled_timers(loop: Any) -> None:
    """What asyncio's own loop does with its cancelled timers once they are over half of 100+
    (``BaseEventLoop._run_once``): out of the heap, with the contexts they hold."""
    kept = []
    for handle in loop._scheduled:
        if handle.cancelled():
            handle._scheduled = False
        else:
            kept.append(handle)
    heapq.heapify(kept)
    loop._scheduled = kept
    loop._timer_cancelled_count = 0


async def compile_statements(app: App, most: int) -> None:
    """Execute the statements of bot.db.upserts for 1 to ``most`` rows, rolled back: SQLAlchemy keeps
    each compiled, as after batches of every size."""
    from bot.db.engine import create_sessionmaker
    from bot.db.models import utc_now
    from bot.db.processed_updates import finish_updates, receive_updates
    from bot.db.users import SeenUser, upsert_users

    async with create_sessionmaker(app.engine)() as session:
        transaction = await session.begin()
        for rows in range(1, most + 1):
            ids = range(-rows, 0)
            await receive_updates(session, bot_id=-1, updates=[(i, {}) for i in ids], lease_until=utc_now())
            await finish_updates(session, bot_id=-1, update_ids=list(ids))
            await upsert_users(session, [SeenUser(i, None, None, None, None) for i in ids])
        await transaction.rollback()


def report(before: tracemalloc.Snapshot, after: tracemalloc.Snapshot, *, users: int, top: int) -> None:
    ignored = [tracemalloc.Filter(False, tracemalloc.__file__), tracemalloc.Filter(False, __file__)]
    grown = after.filter_traces(ignored).compare_to(before.filter_traces(ignored), "traceback")
    total = sum(stat.size_diff for stat in grown)
    freed = sum(stat.size_diff for stat in grown if stat.size_diff < 0)
    print(
        f"the bot keeps {total / users / 1024:.1f} KB per user"
        f" ({(total - freed) / users / 1024:.1f} KB allocated, {-freed / users / 1024:.1f} KB freed)"
    )
    print(f"where (the allocating line < the bot's innermost frame above it, top {top}):")
    by_line: dict[str, int] = {}
    for stat in grown:
        ours = [f for f in stat.traceback if "/bot/" in f.filename or "/core/" in f.filename]
        frames = [stat.traceback[-1], *ours[-1:]]
        where = " < ".join(f"{short(f.filename)}:{f.lineno}" for f in frames)
        by_line[where] = by_line.get(where, 0) + stat.size_diff
    ranked = sorted(by_line.items(), key=lambda item: -item[1])
    for where, size in ranked[:top]:
        print(f"  {size / users:8.0f} B/user  {where}")
    print(f"freed most (top {min(top, 5)}):")
    for where, size in ranked[::-1][: min(top, 5)]:
        print(f"  {size / users:8.0f} B/user  {where}")


def short(path: str) -> str:
    """A file's path from the project's root, or from site-packages for a library's."""
    return path.split("site-packages/")[-1] if "site-packages/" in path else os.path.relpath(path, ROOT)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--users", type=int, default=150)
    parser.add_argument("--top", type=int, default=12)
    parser.add_argument("--frames", type=int, default=FRAMES)
    parser.add_argument("--bot", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.users < MIN_USERS:
        parser.error(f"--users: at least {MIN_USERS} (the small bounded caches full before the snapshots)")
    asyncio.run((serve if args.bot else measure)(args.users, args.top, args.frames))


if __name__ == "__main__":
    main()
