"""Back and Start over at every step, stale buttons, garbage input, /cancel, a restart mid-dialog."""

from __future__ import annotations

import asyncio
import sqlite3

import pytest

from bot import flow
from bot.callbacks import MAX_CALLBACK_BYTES, StepCB
from bot.db.models import DIALOG_ABANDONED, DIALOG_COMPLETED
from tests.bot.e2e.conftest import Harness, assert_no_failed_calls, buttons, core, result_mark, text
from tgsandbox import ChatMessage

# (button to press, the question it leads to) for each step of fine-tuning, the longest path.
FINETUNE = [
    (text("task-finetune"), "ask-model"),
    ("Llama 3.1 8B", "ask-method"),
    (core("method", "lora"), "ask-precision"),
    (core("precision", "bf16"), "ask-batch_size"),
    ("2", "ask-seq_len"),
]


def shows(message_text: str | None, key: str) -> bool:
    return text(key).split("\n")[0] in (message_text or "")


async def test_back_at_every_step(harness: Harness) -> None:
    user = harness.user()
    await user.send("/start")
    previous = "ask-task"
    for button, question in FINETUNE:
        await user.click(button)
        assert shows(user.last_message().text, question)
        assert text("btn-back") in buttons(user.last_message())
        assert text("btn-restart") in buttons(user.last_message())
        await user.click(text("btn-back"))
        assert shows(user.last_message().text, previous), (button, user.last_message().text)
        await user.click(button)  # forward again
        previous = question
    await user.click(text("btn-restart"))
    assert shows(user.last_message().text, "ask-task")
    assert_no_failed_calls(harness.sandbox)
    # one message edited in place all along
    assert len(user.bot_messages()) == 1


async def test_garbage_at_every_step_gets_a_hint(harness: Harness) -> None:
    user = harness.user()
    await user.send("/start")
    hints = ["hint-model", "hint-method", "hint-precision", "hint-batch_size", "hint-seq_len"]
    for (button, _), hint in zip(FINETUNE, hints, strict=True):
        await user.click(button)  # on the dialog message, the latest one with buttons
        replies = await user.send("zzz ??? ёёё")
        assert replies and shows(replies[-1].text, hint), (hint, [r.text for r in replies])
        assert not replies[-1].buttons
    # the dialog message kept its buttons all along; they still work
    answer = await user.click("512")
    assert result_mark() in (answer.messages[-1].text or "")
    assert_no_failed_calls(harness.sandbox)


async def test_stale_buttons_answered_politely(harness: Harness) -> None:
    user = harness.user()
    await user.send("/start")
    old = user.last_message()
    await user.click(text("task-inference"))
    await user.send("/new")
    assert len(user.bot_messages()) == 2
    # the old message keeps its buttons, now stale: a press gets a polite answer and changes nothing
    answer = await user.click(callback_data="s:model:llama-3.1-8b", message=old.message_id)
    assert answer.text == text("stale-button")
    answer = await user.click(callback_data="n:back:", message=old.message_id)
    assert answer.text == text("stale-button")
    # the current dialog is untouched
    assert shows(user.last_message().text, "ask-task")
    await user.click(text("task-image"))
    assert shows(user.last_message().text, "ask-model")


async def test_cancel_abandons_the_dialog(harness: Harness) -> None:
    user = harness.user()
    await user.send("/start")
    await user.click(text("task-inference"))
    replies = await user.send("/cancel")
    assert replies[-1].text == text("cancelled")
    (dialog,) = await harness.dialogs(user.id)
    assert dialog.status == DIALOG_ABANDONED


@pytest.mark.timeout(60)
async def test_restart_mid_dialog_continues(harness: Harness) -> None:
    user = harness.user()
    await user.send("/start")
    await user.click(text("task-inference"))
    await user.click(text("btn-next-page"))  # the Gemma family is on the second page
    await user.click("Gemma 3 12B")
    await harness.restart()  # a new Bot + Dispatcher on the same SQLite file
    await user.click(core("precision", "bf16"))
    await user.click("8K")
    await user.click("1")
    assert result_mark() in (user.last_message().text or "")
    (dialog,) = await harness.dialogs(user.id)
    assert dialog.status == DIALOG_COMPLETED
    assert dialog.answers["model"] == "gemma-3-12b" and dialog.answers["context_length"] == 8192


async def test_model_list_pages(harness: Harness) -> None:
    user = harness.user()
    await user.send("/start")
    await user.click(text("task-inference"))
    first = buttons(user.last_message())
    assert text("btn-prev-page") not in first
    await user.click(text("btn-next-page"))
    second = buttons(user.last_message())
    models = [b for b in second if b not in first]
    assert models, "the second page shows other models"
    await user.click(text("btn-prev-page"))
    assert buttons(user.last_message()) == first
    await user.click(text("btn-next-page"))
    await user.click(models[0])
    assert shows(user.last_message().text, "ask-precision")


MODEL_DATA = StepCB(step="model", value="").pack()


def model_rows(message: ChatMessage) -> list[list[str]]:
    """The rows of model buttons of a model-step message, as catalogue ids."""
    rows = [[b.callback_data or "" for b in row] for row in message.buttons]
    return [[d[len(MODEL_DATA) :] for d in row] for row in rows if row and row[0].startswith(MODEL_DATA)]


@pytest.mark.parametrize("task", ["inference", "finetune", "image", "video"])
async def test_model_buttons_grouped_by_family(harness: Harness, task: str) -> None:
    """Every popular model of the task once, the most asked first: a family where its most asked model
    is (`popularity` in the catalogue), its models by rank; a family on rows of its own and on one
    page; at most 8 models a page; every callback within Telegram's 64 bytes."""
    assert harness.app is not None
    spec = harness.app.dp["catalog"].models
    user = harness.user()
    await user.send("/start")
    await user.click(text(f"task-{task}"))
    pages: list[list[list[str]]] = []
    while len(pages) < 10:
        message = user.last_message()
        data = [b.callback_data for row in message.buttons for b in row if b.callback_data]
        assert all(len(d.encode()) <= MAX_CALLBACK_BYTES for d in data)
        pages.append(model_rows(message))
        assert 0 < sum(len(row) for row in pages[-1]) <= flow.MODELS_PER_PAGE
        if text("btn-next-page") not in buttons(message):
            break
        await user.click(text("btn-next-page"))

    shown = [model for page in pages for row in page for model in row]
    popular = [m.id for m in spec.values() if m.popular and m.kind == flow.MODEL_KIND[task]]
    assert sorted(shown) == sorted(popular), "each popular model once"
    rank = {m: spec[m].popularity or 0 for m in shown}
    best = {spec[m].family: min(rank[x] for x in shown if spec[x].family == spec[m].family) for m in shown}
    order = [(best[spec[m].family], rank[m]) for m in shown]
    assert order == sorted(order), "the most asked family first, each by rank"
    for page in pages:
        for row in page:
            assert len({spec[m].family for m in row}) == 1, f"one family a row: {row}"
    families = [{spec[m].family for row in page for m in row} for page in pages]
    for i, on_page in enumerate(families):
        assert not any(on_page & later for later in families[i + 1 :]), "a family is on one page"
    if task == "inference":
        assert len(pages) > 1, "the LLM list is long enough to be paged"
    assert_no_failed_calls(harness.sandbox)


async def test_unknown_model_id_gets_an_error_with_a_way_back(harness: Harness) -> None:
    user = harness.user()
    await user.send("/start")
    await user.click(text("task-inference"))
    await user.send("someorg/no-such-model")
    await user.click(text("btn-typical"))
    await user.click("4K")
    await user.click("1")
    message = user.last_message()
    assert "someorg/no-such-model" in (message.text or "")
    assert buttons(message) == [text("btn-back"), text("btn-restart")]
    await user.click(text("btn-back"))
    assert shows(user.last_message().text, "ask-concurrency")
    assert_no_failed_calls(harness.sandbox)


# Other tasks: (button, question it leads to) down to the last step.
PATHS = {
    "inference": [
        (text("task-inference"), "ask-model"),
        ("Qwen3 30B-A3B", "ask-precision"),
        (core("precision", "fp8"), "ask-context_length"),
        ("16K", "ask-concurrency"),
    ],
    "pretrain": [
        (text("task-pretrain"), "ask-model"),
        ("7B", "ask-precision"),
        (core("precision", "bf16"), "ask-batch_size"),
        ("1", "ask-seq_len"),
    ],
    "image": [
        (text("task-image"), "ask-model"),
        ("FLUX.1 [dev]", "ask-precision"),
        (core("precision", "fp8"), "ask-resolution"),
        ("768×768", "ask-images"),
    ],
    "video": [
        (text("task-video"), "ask-model"),
        ("CogVideoX 5B", "ask-precision"),
        (text("btn-typical"), "ask-resolution"),
        (text("btn-typical"), "ask-frames"),
    ],
}


@pytest.mark.parametrize("task", list(PATHS))
async def test_back_all_the_way_and_garbage_on_the_way(harness: Harness, task: str) -> None:
    user = harness.user()
    await user.send("/start")
    for button, question in PATHS[task]:
        answer = await user.click(button)
        assert shows(answer.messages[-1].text, question)
        replies = await user.send("🙃 ???")
        hint = question.replace("ask-", "hint-")
        if task in ("image", "video") and hint == "hint-model":
            hint = "hint-model-generation"  # a generation model is named, never given by size
        assert shows(replies[-1].text, hint), (hint, replies[-1].text)
    for _, question in reversed(PATHS[task][:-1]):
        answer = await user.click(text("btn-back"))
        assert shows(answer.messages[-1].text, question)
    answer = await user.click(text("btn-back"))
    assert shows(answer.messages[-1].text, "ask-task")
    assert_no_failed_calls(harness.sandbox)


async def test_double_tap_runs_the_step_once(harness: Harness) -> None:
    user = harness.user()
    await user.send("/start")
    first, second = await asyncio.gather(
        user.click(text("task-inference")), user.click(text("task-inference"))
    )
    assert sorted([first.text or "", second.text or ""]) == ["", text("stale-button")]
    (dialog,) = await harness.dialogs(user.id)
    assert dialog.task == "inference"


async def test_a_crash_is_answered_not_silent(harness: Harness, monkeypatch: pytest.MonkeyPatch) -> None:
    """An unexpected error in a handler: the button is answered and the user gets an apology."""
    import bot.dialog as dialog

    def broken(*args: object, **kwargs: object) -> None:
        raise RuntimeError("boom")

    monkeypatch.setattr(dialog, "estimate", broken)
    user = harness.user()
    await user.send("/start")
    await user.click(text("task-image"))
    await user.click("Stable Diffusion 1.5")
    await user.click(text("btn-typical"))
    await user.click(text("btn-typical"))
    answer = await user.click("1")  # the result step crashes; the click still gets its answer
    assert user.last_message().text == text("error-generic")
    assert answer is not None
    (dialog,) = await harness.dialogs(user.id)
    assert dialog.status != "completed"


async def test_buttons_of_an_inaccessible_message(harness: Harness) -> None:
    """Telegram sends an InaccessibleMessage for buttons under messages older than 48 hours: there is
    nothing to edit, so the press is answered politely and the dialog stays as it was."""
    user = harness.user()
    await user.send("/start")
    await user.click(text("task-inference"))
    answer = await user.click("Llama 3.1 8B", inaccessible=True)
    assert answer.text == text("stale-button")
    assert shows(user.last_message().text, "ask-model")
    await user.send("/lang")
    answer = await user.click(text("lang-en"), inaccessible=True)  # no message to edit: the answer says it
    assert answer.text == text("lang-set", "en")
    assert_no_failed_calls(harness.sandbox)


@pytest.mark.parametrize("payload", ["x" * 65, "bad%20link", "two words"])
async def test_invalid_deep_link_payload_is_not_recorded(harness: Harness, payload: str) -> None:
    user = harness.user()
    replies = await user.send(f"/start {payload}")
    assert shows(replies[-1].text, "ask-task")
    await user.click(text("task-inference"))
    row = await harness.db_user(user.id)
    assert row is not None and row.source is None
    (dialog,) = await harness.dialogs(user.id)
    assert dialog.source is None


async def test_a_database_failure_still_answers_the_button(harness: Harness) -> None:
    """The database fails before any handler runs (here: a table gone): the press is still answered,
    so the button does not spin, and the user gets an apology in their language; once the database is
    back, the dialog goes on."""
    user = harness.user()
    await user.send("/start")
    db = sqlite3.connect(harness.db_url.split("///", 1)[1])
    try:
        db.execute("ALTER TABLE processed_updates RENAME TO processed_updates_away")
        db.commit()
        answer = await user.click(text("task-inference"))  # waits for answerCallbackQuery
        assert answer.text is None
        assert user.last_message().text == text("error-generic")
        replies = await user.send("llama 3 8b")
        assert [r.text for r in replies] == [text("error-generic")]
        db.execute("ALTER TABLE processed_updates_away RENAME TO processed_updates")
        db.commit()
    finally:
        db.close()
    answer = await user.click(text("task-inference"))
    assert answer.text is None and shows(answer.messages[-1].text, "ask-model")
