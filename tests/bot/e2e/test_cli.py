"""`python -m bot migrate` and `python -m bot stats` on a real SQLite file."""

from __future__ import annotations

import asyncio
import io
import re
import time
from pathlib import Path

import pytest

from bot import dialog, pictures
from bot.__main__ import main, run_sandbox
from bot.config import load_settings
from bot.db.report import COLUMNS, NO_SOURCE
from tests.bot.e2e.conftest import Harness, text
from tests.bot.e2e.test_dialogs import DIALOGS, play

PICTURE_WAIT_S = 30.0  # the worker process may still be starting (matplotlib's import)


def test_migrate_then_stats(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
):
    db = tmp_path / "shared.sqlite3"
    monkeypatch.setenv("DATABASE_URL", f"sqlite+aiosqlite:///{db}")
    monkeypatch.chdir(tmp_path)  # no stray .env
    assert main(["migrate"]) == 0
    assert db.exists()
    assert main(["stats"]) == 0
    assert "source" in capsys.readouterr().out


def test_polling_without_token_says_how_to_chat_locally(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv("DATABASE_URL", f"sqlite+aiosqlite:///{tmp_path / 'bot.sqlite3'}")
    monkeypatch.delenv("BOT_TOKEN", raising=False)
    monkeypatch.chdir(tmp_path)
    with pytest.raises(SystemExit, match="python -m bot sandbox"):
        main(["run"])


async def test_sandbox_command_chats_in_the_terminal(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The README's run command (`python -m bot sandbox`): fake Telegram + our bot + a terminal chat,
    no token, no network, the embedded SQLite default under ./data."""
    monkeypatch.chdir(tmp_path)
    for name in ("BOT_TOKEN", "DATABASE_URL", "REDIS_URL"):
        monkeypatch.delenv(name, raising=False)

    async def chat(*lines: str) -> str:
        typed = iter(lines)

        def type_line(prompt: str) -> str:
            try:
                return next(typed)
            except StopIteration:
                raise EOFError from None

        screen = io.StringIO()
        await run_sandbox(load_settings(), input_fn=type_line, output=screen)
        return screen.getvalue()

    shown = await chat("/start", "1", "1", "/quit")
    assert text("ask-model").split("\n")[0] in shown
    assert text("ask-precision").split("\n")[0] in shown
    assert (tmp_path / "data" / "bot.sqlite3").exists()
    # A second session on the same database: its updates are not mistaken for already-processed ones.
    again = await chat("/start", "/quit")
    assert text("ask-task").split("\n")[0] in again


async def test_sandbox_chat_saves_each_picture_to_a_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The terminal cannot show a photo: the sandbox saves it under data/pictures and prints its path."""
    monkeypatch.chdir(tmp_path)
    for name in ("BOT_TOKEN", "DATABASE_URL", "REDIS_URL"):
        monkeypatch.delenv(name, raising=False)
    # the worker's start (matplotlib's import) may still be on when the first render is asked: on a busy
    # machine that can pass the production give-up time; this test is about where the picture goes
    renderer = pictures.Pictures(timeout_s=PICTURE_WAIT_S)
    for module in (dialog, pictures):  # the one the bot draws with, and starts and stops with it
        monkeypatch.setattr(module, "PICTURES", renderer)
    screen = io.StringIO()
    typed = iter(["llama 3.1 8b int4"])

    def type_line(prompt: str) -> str:
        try:
            return next(typed)
        except StopIteration:
            pass
        deadline = time.monotonic() + PICTURE_WAIT_S
        while "[photo: " not in screen.getvalue():  # printed by the chat's event loop meanwhile
            if time.monotonic() > deadline:
                raise EOFError
            time.sleep(0.05)
        return "/quit"

    try:
        await run_sandbox(load_settings(), input_fn=type_line, output=screen)
    finally:
        await dialog.PICTURES.close()
    shown = re.findall(r"\[photo: (\S+)\]", screen.getvalue())
    assert len(shown) == 1 and shown[0].startswith("data/pictures/") and shown[0].endswith(".png")
    assert (tmp_path / shown[0]).read_bytes().startswith(b"\x89PNG")


async def test_stats_counts_each_sales_link(
    harness: Harness, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """Leads from two links and one without: `python -m bot stats` credits each link with its users,
    their dialogs and the completed ones."""
    webinar, partner, late, direct = (harness.user() for _ in range(4))
    for user, link in ((webinar, "webinar-2025"), (partner, "partner_x"), (late, "webinar-2025")):
        await user.send(f"/start {link}")
    await play(webinar, DIALOGS["inference"][0])
    await play(partner, DIALOGS["image"][0])
    await late.click(text("task-video"))  # started, never finished
    await direct.send("qwen3 8b int4")  # a quick answer, no link
    await partner.send("/start webinar-2025")  # a later link does not move the user
    await play(partner, DIALOGS["qlora"][0])

    monkeypatch.setenv("DATABASE_URL", harness.db_url)
    monkeypatch.chdir(tmp_path)  # no stray .env
    capsys.readouterr()
    assert await asyncio.to_thread(main, ["stats"]) == 0
    sources, periods, *_ = capsys.readouterr().out.strip().split("\n\n")  # the same figures as /stats
    rows = [line.split() for line in sources.splitlines()]
    assert rows[0] == ["source", *COLUMNS]
    report = {" ".join(row[:-7]): row[-7:-3] for row in rows[1:]}  # no leads: the last 3 columns 0, 0, 0
    assert report == {
        "webinar-2025": ["2", "2", "1", "0"],
        "partner_x": ["1", "2", "2", "0"],
        NO_SOURCE: ["1", "1", "1", "0"],
    }
    assert rows[1][0] == "webinar-2025"  # most users first
    totals = {" ".join(row[:-7]): row[-7:-4] for row in (line.split() for line in periods.splitlines()[1:])}
    assert totals == {period: ["4", "5", "4"] for period in ("7 days", "30 days", "all time")}
