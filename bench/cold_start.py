"""Cold start: process start to the first getUpdates, `python -m bot` (polling, the embedded SQLite
default) against a bare aiogram bot, both on one tgsandbox server on 127.0.0.1, in the same run.

    python bench/cold_start.py [--starts 5]

Each start is a fresh process (SIGTERM once it polls). The bot's database is kept across its starts,
as on a restart: the first start of a run migrates a new database, the rest find it at head. Prints
the median of each and the difference. Figures, not a test.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import signal
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tgsandbox import Sandbox

ROOT = Path(__file__).resolve().parents[1]
BARE_BOT = """
import asyncio, os
from aiogram import Bot, Dispatcher, Router
from aiogram.client.session.aiohttp import AiohttpSession
from aiogram.client.telegram import TelegramAPIServer
from aiogram.types import Message

router = Router()

@router.message()
async def echo(message: Message) -> None:
    await message.answer(message.text or "")

async def main() -> None:
    session = AiohttpSession(api=TelegramAPIServer.from_base(os.environ["TELEGRAM_API_URL"]))
    bot = Bot(os.environ["BOT_TOKEN"], session=session)
    dp = Dispatcher()
    dp.include_router(router)
    await dp.start_polling(bot)

asyncio.run(main())
"""


async def one_start(sandbox: Sandbox, argv: list[str], env: dict[str, str], timeout: float = 60) -> float:
    polls = sandbox.polls
    started = time.perf_counter()
    process = await asyncio.create_subprocess_exec(
        *argv, cwd=ROOT, env=env, stdout=asyncio.subprocess.DEVNULL, stderr=asyncio.subprocess.PIPE
    )
    try:
        while sandbox.polls == polls:
            if process.returncode is not None or time.perf_counter() - started > timeout:
                err = (await process.stderr.read()).decode() if process.stderr else ""
                raise RuntimeError(f"{argv} did not poll (exit {process.returncode}):\n{err[-2000:]}")
            await asyncio.sleep(0.002)
        return time.perf_counter() - started
    finally:
        if process.returncode is None:
            process.send_signal(signal.SIGTERM)
            try:
                await asyncio.wait_for(process.wait(), 15)
            except TimeoutError:
                process.kill()
                await process.wait()


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--starts", type=int, default=5)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        async with Sandbox() as sandbox:
            base = {k: v for k, v in os.environ.items() if k not in ("REDIS_URL", "DATABASE_URL")}
            env = base | {
                "BOT_TOKEN": sandbox.token, "TELEGRAM_API_URL": sandbox.base_url,
                "DATABASE_URL": f"sqlite+aiosqlite:///{Path(tmp) / 'bot.sqlite3'}", "LOG_LEVEL": "WARNING",
                "PYTHONPATH": str(ROOT),
            }  # fmt: skip
            full: list[float] = []
            bare: list[float] = []
            for n in range(args.starts):  # interleaved: both see the same machine load
                full.append(await one_start(sandbox, [sys.executable, "-m", "bot"], env))
                bare.append(await one_start(sandbox, [sys.executable, "-c", BARE_BOT], env))
                print(f"start {n + 1}: bot {full[-1]:.2f} s, bare {bare[-1]:.2f} s", flush=True)
    # The first start migrates a new database: reported apart, the median is of the restarts.
    restarts = full[1:] or full
    print(f"first start (new database): bot {full[0]:.2f} s")
    print(
        f"median: bot {statistics.median(restarts):.2f} s (restarts), bare {statistics.median(bare):.2f} s,"
        f" difference {statistics.median(restarts) - statistics.median(bare):+.2f} s"
    )


if __name__ == "__main__":
    asyncio.run(main())
