"""The database work of a guided step's button press, counted on the real SQLite file through the
sandbox: the dialog row is updated without being read first, the FSM record is written once (not
again when the step is shown in the same message), and the press's done mark comes after its edit."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from sqlalchemy import event

from tests.bot.e2e.conftest import Harness


@contextmanager
def statements_of(harness: Harness) -> Iterator[list[tuple[str, str]]]:
    """The SQL statements the bot issues within the block, each as (who issued it, the statement
    lower-cased on one line): who is "update" for the task of an update in hand, else the task's
    name (the intake's, "group-commit")."""
    assert harness.app is not None
    handling = harness.app.inbox_dp.handling  # update id -> the task handling it
    statements: list[tuple[str, str]] = []

    def record(conn: Any, cursor: Any, statement: str, *args: Any) -> None:
        task = asyncio.current_task()
        who = "update" if task in handling.values() else task.get_name() if task is not None else "?"
        statements.append((who, " ".join(statement.split()).lower()))

    event.listen(harness.app.engine.sync_engine, "before_cursor_execute", record)
    try:
        yield statements
    finally:
        event.remove(harness.app.engine.sync_engine, "before_cursor_execute", record)


async def test_a_step_press_updates_the_dialog_without_reading_it_and_writes_the_state_once(
    harness: Harness,
) -> None:
    user = harness.user()
    await user.send("/start")
    await user.press("s:task:inference")
    with statements_of(harness) as issued:
        answer = await user.press("s:model:llama-3.1-8b")  # the precision step, shown by an edit
    statements = [statement for _, statement in issued]
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
    user = harness.user()
    await user.send("/start")
    await user.press("s:task:inference")
    with statements_of(harness) as issued:
        await user.send("/start")
    statements = [statement for _, statement in issued]
    assert any(s.startswith("update dialog_sessions") for s in statements), statements
    assert not [s for s in statements if s.startswith("select") and "from users" in s], statements


async def test_a_new_users_first_updates_issue_no_statement_of_their_own(harness: Harness) -> None:
    """A new user's /start and task press (the user's row, the dialog's new row, an abandon) issue
    no statement in their own tasks: the row is written at receipt (bot.db.arrivals, in the polling
    task), the dialog's with the group commit, under an id the process handed out. Before, each took
    SQLite's write turn for itself, behind every group commit of a crowd."""
    user = harness.user()
    with statements_of(harness) as statements:
        await user.send("/start promo")
        await user.press("s:task:inference")
        await user.send("/start")  # starting over abandons the dialog
    assert not [(who, s) for who, s in statements if who == "update"], statements
    assert any(s.startswith("insert into users") for _, s in statements), statements
    assert any(who == "group-commit" and "into dialog_sessions" in s for who, s in statements), statements

    row = await harness.db_user(user.id)
    assert row is not None and row.source == "promo"
    dialogs = await harness.dialogs(user.id)
    assert [(d.task, d.status, d.source, d.user_id) for d in dialogs] == [
        ("inference", "abandoned", "promo", row.id)
    ]
    await user.press("s:task:finetune")
    assert [(d.task, d.status) for d in await harness.dialogs(user.id)] == [
        ("inference", "abandoned"),
        ("finetune", "started"),
    ]
    shown = [b.callback_data or "" for r in user.last_message().buttons for b in r]
    assert any(data.startswith("s:model:") for data in shown), shown
