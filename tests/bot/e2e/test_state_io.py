"""The dialog state is read once per update and written at most once (issue 21): counted at the FSM
storage's boundary, by a spy wrapping the real bot's storage, over a whole guided dialog, typed
answers, a quick answer and the result's buttons."""

from __future__ import annotations

from collections import Counter
from collections.abc import Awaitable, Callable
from typing import Any

from aiogram.fsm.storage.base import BaseStorage, StorageKey

from bot.db.work import UpdateWork
from bot.storage import SqlAlchemyStorage, UpdateStorage
from tests.bot.e2e.conftest import Harness, core, result_mark, text


def spy(storage: BaseStorage) -> Counter[str]:
    """Counts of the storage's data reads and writes, from now on (the storage's own methods run).
    The storage in the database is seen by an update's handlers bound to its unit of work
    (bot.storage.UpdateStorage): each such view is counted too."""
    calls: Counter[str] = Counter()

    def counted(target: BaseStorage, name: str) -> None:
        real: Callable[..., Awaitable[Any]] = getattr(target, name)

        async def call(*args: Any, **kwargs: Any) -> Any:
            calls[name] += 1
            return await real(*args, **kwargs)

        setattr(target, name, call)

    def watch(target: BaseStorage) -> None:
        for name in ("get_data", "set_data", "update_data"):
            counted(target, name)

    watch(storage)
    if isinstance(storage, SqlAlchemyStorage):
        bind = storage.bound

        def bound(work: UpdateWork) -> UpdateStorage:
            view = bind(work)
            watch(view)
            return view

        storage.bound = bound  # type: ignore[method-assign]
    return calls


async def test_each_press_and_answer_reads_the_state_once_and_writes_it_once(harness: Harness) -> None:
    assert harness.app is not None
    calls = spy(harness.app.dp.fsm.storage)
    user = harness.user(language_code="en")
    seen: list[tuple[str, Counter[str]]] = []

    async def step(what: str, act: Callable[[], Awaitable[Any]]) -> None:
        calls.clear()
        await act()
        seen.append((what, calls.copy()))

    await step("/start", lambda: user.send("/start"))
    await step("task", lambda: user.click(text("task-inference", "en")))
    await step("model (page)", lambda: user.click("Qwen3 8B"))
    await step("precision", lambda: user.click(core("precision", "bf16", "en")))
    await step("context (typed)", lambda: user.send("8k"))
    await step("users", lambda: user.click("4"))
    assert result_mark("en") in (user.last_message().text or "")
    await step("change precision", lambda: user.click(text("btn-change-precision", "en")))
    await step("back", lambda: user.click(text("btn-back", "en")))
    await step("change precision", lambda: user.click(text("btn-change-precision", "en")))
    await step("precision again", lambda: user.click(core("precision", "int4", "en")))
    await step("details", lambda: user.click(text("btn-details", "en")))
    await step("quick answer", lambda: user.send("llama 3.1 70b int4 on 2 h100"))
    await step("follow-up", lambda: user.send("and in fp8?"))
    for what, counted in seen:
        assert counted["get_data"] == 1, (what, counted)
        assert counted["set_data"] <= 1 and counted["update_data"] == 0, (what, counted)
    # every answer moved the dialog on: its state was written; the details changed nothing
    assert [what for what, counted in seen if not counted["set_data"]] == ["details"], seen


async def test_a_dialog_kept_by_the_previous_version_goes_on(harness: Harness) -> None:
    """FSM data the previous version wrote (the answers as a flat dict, the fields no step asks under
    "extra") loads mid-dialog: the next press answers the step, the cards it named are sized."""
    assert harness.app is not None
    user = harness.user(language_code="en")
    await user.send("/start")
    await user.click(text("task-inference", "en"))
    await user.click("Qwen3 8B")  # at the precision step
    storage = harness.app.dp.fsm.storage
    key = StorageKey(bot_id=harness.app.bot.id, chat_id=user.id, user_id=user.id)
    kept = await storage.get_data(key)
    old = {
        "msg_id": kept["msg_id"],
        "dialog_id": kept["dialog_id"],
        "answers": {"task": "inference", "model": "qwen3-8b", "quick": False, "extra": {"gpus": ["h200"]}},
    }
    await storage.set_data(key, old)
    await user.click(core("precision", "bf16", "en"))
    await user.click("4K")
    result = (await user.click("1")).messages[-1].text or ""
    assert result_mark("en") in result and "H200" in result
    assert (await storage.get_data(key))["answers"]["request"]["gpus"] == ["h200"]
