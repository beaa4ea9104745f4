"""The dialog's FSM data as a typed model: it round-trips through the real storages, loads what the
previous version wrote (bare keys), and degrades corrupt or forged values to defaults, field by field,
without raising. The handlers go through it: none touches the FSM data by key."""

import ast
import json
import logging
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from aiogram.fsm.context import FSMContext
from aiogram.fsm.storage.base import BaseStorage, DefaultKeyBuilder, StorageKey
from aiogram.fsm.storage.memory import MemoryStorage
from aiogram.fsm.storage.redis import RedisStorage
from pydantic import ValidationError

from bot.db.engine import create_engine, create_sessionmaker
from bot.dialog_state import DialogHolder, DialogState
from bot.flow import Answers
from bot.storage import SqlAlchemyStorage
from core.contract import Assumption, Request

BOT = Path(__file__).parents[2] / "bot"
KEY = StorageKey(bot_id=42, chat_id=-42, user_id=42)

REQUEST = {"task": "inference", "model": "llama-3.1-8b", "precision": "int4", "context_length": 32768}
NOTE = {"code": "engine-default", "text": "assumed vLLM", "params": {"engine": "vllm", "users": 4}}

# What the previous version wrote, key by key (bot/handlers/wizard.py, quick.py and commands.py
# before the model): `update_data(msg_id=…)`, `{LAST_REQUEST: request, LAST_NOTES: [dumped notes]}`…
PREVIOUS_LAYOUT: dict[str, Any] = {
    "msg_id": 17,
    "source": "promo",
    "dialog_id": 3,
    "answers": {"task": "inference", "model": "llama-3.1-8b", "quick": True, "extra": {"num_gpus": 2}},
    "editing": ["precision", "context_length"],
    "last_request": REQUEST,
    "last_notes": [NOTE],
}


def full_state() -> DialogState:
    return DialogState(
        msg_id=17,
        source="promo",
        dialog_id=3,
        answers=Answers(
            task="inference",
            request={"task": "inference", "model": "llama-3.1-8b", "resolution": [1024, 1024]},
            quick=True,
        ),
        editing=[],
        last_request=REQUEST,
        last_notes=[Assumption.model_validate(NOTE)],
    )


def fsm(storage: BaseStorage | None = None) -> FSMContext:
    return FSMContext(storage=storage or MemoryStorage(), key=KEY)


async def load(context: FSMContext) -> DialogState:
    """What `DialogStateMiddleware` reads into an update."""
    return DialogState.from_data(await context.get_data())


@pytest.fixture
async def sqlite_storage(migrated_sqlite_url: str) -> AsyncIterator[SqlAlchemyStorage]:
    engine = create_engine(migrated_sqlite_url)
    storage = SqlAlchemyStorage(create_sessionmaker(engine))
    try:
        yield storage
    finally:
        await engine.dispose()


@pytest.fixture
async def redis_storage(redis_url: str, redis_key_prefix: str) -> AsyncIterator[RedisStorage]:
    key_builder = DefaultKeyBuilder(prefix=redis_key_prefix, with_destiny=True)
    storage = RedisStorage.from_url(redis_url, key_builder=key_builder)
    try:
        yield storage
    finally:
        await storage.close()


@pytest.fixture(params=["memory", "sqlite_storage", "redis_storage"])
def storage(request: pytest.FixtureRequest) -> BaseStorage:
    return MemoryStorage() if request.param == "memory" else request.getfixturevalue(request.param)


# ---------------------------------------------------------------- round trip


async def test_round_trip(storage: BaseStorage) -> None:
    context = fsm(storage)
    state = full_state()
    await state.save(context)
    assert await load(context) == state
    assert json.loads(json.dumps(state.to_data())) == state.to_data()  # plain JSON, as Redis keeps it


async def test_nothing_stored_is_the_default_state(storage: BaseStorage) -> None:
    context = fsm(storage)
    assert await load(context) == DialogState()
    await DialogState().save(context)
    assert await storage.get_data(KEY) == {}  # defaults are left out: an empty record, as aiogram's


def test_update_changes_only_the_fields_named() -> None:
    holder = DialogHolder(full_state())
    changed = holder.update(msg_id=18, editing=None)
    assert changed == full_state().model_copy(update={"msg_id": 18, "editing": None})
    assert holder.state == changed and holder.changed
    assert holder.loaded == full_state()


def test_an_update_that_changes_nothing_is_no_change() -> None:
    holder = DialogHolder(full_state())
    holder.update(msg_id=17)
    assert not holder.changed


def test_update_refuses_a_bug() -> None:
    holder = DialogHolder(DialogState())
    with pytest.raises(TypeError, match="msgid"):
        holder.update(msgid=1)
    with pytest.raises(ValidationError):
        holder.update(editing="precision")
    assert holder.state == DialogState() and not holder.changed


def test_editing_nothing_left_is_not_editing_none() -> None:
    """`editing=[]` (changing answers, every dependent step answered) differs from not editing."""
    assert DialogState.from_data(DialogState(editing=[]).to_data()).editing == []
    assert DialogState.from_data(DialogState().to_data()).editing is None


# ---------------------------------------------------------------- what earlier versions wrote


async def test_the_previous_versions_layout_loads(storage: BaseStorage) -> None:
    await storage.set_data(KEY, PREVIOUS_LAYOUT)
    state = await load(fsm(storage))
    assert state.msg_id == 17 and state.source == "promo" and state.dialog_id == 3
    # the answers' flat dict (the steps' fields, the others in "extra") is this version's request
    assert state.answers == Answers(
        task="inference",
        request={"task": "inference", "model": "llama-3.1-8b", "num_gpus": 2},
        quick=True,
    )
    assert state.editing == ["precision", "context_length"]
    assert state.last_request == REQUEST
    assert state.last_notes == [Assumption(code="engine-default", text="assumed vLLM", params=NOTE["params"])]
    assert state.previous_request() == Request.model_validate(REQUEST)
    # … and what this version writes is that layout but for the answers' new shape (issue 21)
    written = state.to_data()
    assert {k: v for k, v in written.items() if k != "answers"} == {
        k: v for k, v in PREVIOUS_LAYOUT.items() if k != "answers"
    }
    assert DialogState.from_data(written) == state


def test_the_previous_versions_partial_layouts_load() -> None:
    """The previous version wrote keys one at a time, some of them None (`update_data(editing=None)`,
    `update_data(source=data.get("source"))`) and the request of a comparison in full."""
    assert DialogState.from_data({"source": None, "editing": None}) == DialogState()
    assert DialogState.from_data({"msg_id": 5}) == DialogState(msg_id=5)
    dumped = Request.model_validate(REQUEST).model_dump(mode="json")
    state = DialogState.from_data({"last_request": dumped, "last_notes": []})
    assert state.previous_request() == Request.model_validate(REQUEST)


# ---------------------------------------------------------------- corrupt and forged data


@pytest.mark.parametrize(
    ("field", "bad"),
    [
        ("msg_id", "the dialog message"),
        ("msg_id", {"id": 1}),
        ("source", 42),
        ("source", ["promo"]),
        ("dialog_id", "three"),
        ("dialog_id", [3]),
        ("answers", "inference"),
        ("answers", ["task", "inference"]),
        ("editing", "precision"),
        ("editing", [1, 2]),
        ("last_request", "llama 3.1 8b"),
        ("last_request", [REQUEST]),
        ("last_notes", {"code": "x"}),
        ("last_notes", [{"text": "no code"}]),
        ("last_notes", ["assumed vLLM"]),
    ],
)
def test_a_corrupt_field_takes_its_default_the_others_stay(
    field: str, bad: Any, caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level(logging.INFO, logger="bot.dialog_state"):
        state = DialogState.from_data({**PREVIOUS_LAYOUT, field: bad})
    assert getattr(state, field) == getattr(DialogState(), field)
    expected = DialogState.from_data(PREVIOUS_LAYOUT)
    assert state == expected.model_copy(update={field: getattr(DialogState(), field)})
    assert any(field in r.getMessage() and r.levelno == logging.INFO for r in caplog.records)


def test_everything_corrupt_is_the_default_state() -> None:
    forged = {name: object() for name in DialogState.model_fields}
    assert DialogState.from_data(forged) == DialogState()


@pytest.mark.parametrize("data", [None, "state", 42, ["msg_id", 1], b"{}"])
def test_data_that_is_not_a_mapping_is_the_default_state(data: Any) -> None:
    assert DialogState.from_data(data) == DialogState()


def test_unknown_keys_are_ignored_and_not_written_back(caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.INFO, logger="bot.dialog_state"):
        state = DialogState.from_data({**PREVIOUS_LAYOUT, "step": "model", "lang": "en"})
    assert state == DialogState.from_data(PREVIOUS_LAYOUT)
    assert "step" not in state.to_data()
    assert any("step" in r.getMessage() for r in caplog.records)


async def test_a_forged_value_in_storage_loads_and_is_replaced(storage: BaseStorage) -> None:
    await storage.set_data(
        KEY, {"msg_id": "'; DROP TABLE", "answers": 7, "last_notes": [None], "source": "ad"}
    )
    context = fsm(storage)
    holder = DialogHolder(await load(context))
    assert holder.state == DialogState(source="ad")
    await holder.update(msg_id=9).save(context)  # the next write keeps what was readable, drops the rest
    assert await storage.get_data(KEY) == {"msg_id": 9, "source": "ad"}


def test_a_last_request_of_an_older_contract_is_no_previous_request() -> None:
    state = DialogState(last_request={"task": "inference", "model": "llama-3.1-8b", "gpu": "h100"})
    assert state.previous_request() is None
    assert DialogState().previous_request() is None


# ---------------------------------------------------------------- a new dialog


def test_forget_answers_keeps_what_outlives_a_dialog() -> None:
    state = full_state()
    forgotten = state.forget_answers()
    assert forgotten == DialogState(
        msg_id=state.msg_id, source=state.source, last_request=state.last_request, last_notes=state.last_notes
    )
    assert forgotten.answers == Answers() and forgotten.dialog_id is None and forgotten.editing is None
    assert state.answers.request, "the state it was made from is unchanged"


# ---------------------------------------------------------------- who touches the FSM data


def _calls(tree: ast.AST) -> set[str]:
    return {
        node.func.attr
        for node in ast.walk(tree)
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
    }


# bot/dialog.py and the modules split from it, and the quote form split from bot/handlers/leads.py
DIALOG_MODULES = [
    BOT / "dialog.py", BOT / "dialog_steps.py", BOT / "group_messages.py", BOT / "quote_form.py",
]  # fmt: skip


@pytest.mark.parametrize("path", [*sorted((BOT / "handlers").glob("*.py")), *DIALOG_MODULES], ids=str)
def test_handlers_use_the_model_not_keys(path: Path) -> None:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    assert not _calls(tree) & {"get_data", "set_data", "update_data", "get_value"}, path.name
    imported = {
        node.module
        for node in ast.walk(tree)
        if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("bot.handlers")
    }
    if path.name != "__init__.py":
        assert not imported, f"{path.name} imports another handler module: {imported}"


@pytest.mark.parametrize(
    "answers",
    [
        {"task": ["inference"], "extra": "gpus", "quick": "yes"},
        {"task": "video", "model": {"params_b": "many"}, "extra": {"gpus": 4, "nonsense": 1}},
        {"parse_card_memory": "4090", "speech": 1, "task": None},
        {"request": "llama", "task": "inference"},
    ],
)
def test_odd_answers_of_an_earlier_version_load_without_raising(answers: dict[str, Any]) -> None:
    """Old or forged answers load as far as they read: the request sized later refuses what is wrong."""
    state = DialogState.from_data({**PREVIOUS_LAYOUT, "answers": answers})
    assert state.msg_id == 17 and isinstance(state.answers, Answers)
    assert set(state.answers.request) <= set(Request.model_fields)


async def test_a_holder_saved_before_a_commit_writes_only_a_later_change() -> None:
    context = fsm()
    holder = DialogHolder(DialogState())
    await holder.save(context)
    assert await context.get_data() == {}, "nothing changed: nothing written"
    holder.update(msg_id=3)
    await holder.save(context)
    assert await load(context) == DialogState(msg_id=3) and not holder.changed
    holder.update(source="ad")
    assert holder.changed and holder.loaded == DialogState(msg_id=3)
