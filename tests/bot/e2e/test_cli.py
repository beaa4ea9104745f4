"""`python -m bot migrate` and `python -m bot stats` on a real SQLite file."""

from __future__ import annotations

import io
from pathlib import Path

import pytest

from bot.__main__ import main, run_sandbox
from bot.config import load_settings
from tests.bot.e2e.conftest import text


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
    typed = iter(["/start", "1", "1", "/quit"])

    def type_line(prompt: str) -> str:
        try:
            return next(typed)
        except StopIteration:
            raise EOFError from None

    screen = io.StringIO()
    await run_sandbox(load_settings(), input_fn=type_line, output=screen)
    shown = screen.getvalue()
    assert text("ask-model").split("\n")[0] in shown
    assert text("ask-precision").split("\n")[0] in shown
    assert (tmp_path / "data" / "bot.sqlite3").exists()
