"""The database work of a guided step's button press, counted on the real SQLite file through the
sandbox: the dialog row is updated without being read first, the FSM record is written once (not
again when the step is shown in the same message), and the press's done mark comes after its edit."""

from __future__ import annotations

from typing import Any

from sqlalchemy import event

from tests.bot.e2e.conftest import Harness


async def test_a_step_press_updates_the_dialog_without_reading_it_and_writes_the_state_once(
    harness: Harness,
) -> None:
    assert harness.app is not None
    statements: list[str] = []

    def record(conn: Any, cursor: Any, statement: str, *args: Any) -> None:
        statements.append(" ".join(statement.split()).lower())

    user = harness.user()
    await user.send("/start")
    await user.press("s:task:inference")
    event.listen(harness.app.engine.sync_engine, "before_cursor_execute", record)
    try:
        answer = await user.press("s:model:llama-3.1-8b")  # the precision step, shown by an edit
    finally:
        event.remove(harness.app.engine.sync_engine, "before_cursor_execute", record)
    assert answer.text is None, answer.text  # handled, not stale
    shown = [b.callback_data or "" for row in user.last_message().buttons for b in row]
    assert any(data.startswith("s:precision:") for data in shown), shown

    on_dialogs = [s for s in statements if "dialog_sessions" in s]
    assert [s.split()[0] for s in on_dialogs] == ["update"], on_dialogs  # no SELECT before it
    assert len([s for s in statements if "into fsm_records" in s]) == 1, statements
    received = [i for i, s in enumerate(statements) if "into processed_updates" in s]
    assert len(received) == 2, statements  # the inbox's receipt and the done mark


async def test_starting_over_abandons_the_dialog_without_looking_the_user_up(harness: Harness) -> None:
    """/start abandons the unfinished dialog by the user's id the update already has: no SELECT of
    the users table before the UPDATE."""
    assert harness.app is not None
    statements: list[str] = []

    def record(conn: Any, cursor: Any, statement: str, *args: Any) -> None:
        statements.append(" ".join(statement.split()).lower())

    user = harness.user()
    await user.send("/start")
    await user.press("s:task:inference")
    event.listen(harness.app.engine.sync_engine, "before_cursor_execute", record)
    try:
        await user.send("/start")
    finally:
        event.remove(harness.app.engine.sync_engine, "before_cursor_execute", record)
    assert any(s.startswith("update dialog_sessions") for s in statements), statements
    assert not [s for s in statements if s.startswith("select") and "from users" in s], statements
