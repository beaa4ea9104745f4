"""Full guided dialogs, one per task, through the sandbox over HTTP on a real SQLite file."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from bot.db.models import DIALOG_COMPLETED
from bot.presenter import BUDGET, MAX_MESSAGE
from core.language import words as core_texts
from tests.bot.e2e.conftest import Harness, assert_no_failed_calls, buttons, core, result_mark, text

Action = tuple[str, str]  # ("click", button text) or ("send", typed text)

DIALOGS: dict[str, tuple[list[Action], dict[str, Any]]] = {
    "inference": (
        [
            ("click", text("task-inference")),
            ("click", "Llama 3.1 8B"),
            ("click", core("precision", "int8")),
            ("click", "32K"),
            ("send", "4 пользователя"),
        ],
        {
            "task": "inference",
            "model": "llama-3.1-8b",
            "precision": "int8",
            "context_length": 32768,
            "concurrency": 4,
        },
    ),
    "lora": (
        [
            ("click", text("task-finetune")),
            ("send", "llama 3.1 8b"),
            ("send", "лора"),  # typed: the core's parser reads the method
            ("click", core("precision", "bf16")),
            ("click", "1"),  # the default micro-batch is a button: no "Typical" beside it
            ("send", "4k"),
        ],
        {
            "task": "finetune",
            "model": "llama-3.1-8b",
            "method": "lora",
            "precision": "bf16",
            "batch_size": 1,
            "seq_len": 4096,
        },
    ),
    "qlora": (
        [
            ("click", text("task-finetune")),
            ("click", "Qwen2.5 7B"),  # the Qwen family is on the first page: Qwen3 8B is asked most
            ("click", core("method", "qlora")),  # no precision step: QLoRA means a 4-bit base
            ("click", "4"),
            ("click", "2K"),
        ],
        {"task": "finetune", "model": "qwen2.5-7b", "method": "qlora", "batch_size": 4, "seq_len": 2048},
    ),
    "full_training": (
        [
            ("click", text("task-pretrain")),
            ("send", "13B"),
            ("click", core("precision", "bf16")),
            ("click", "8"),
            ("click", "2K"),
        ],
        {"task": "pretrain", "model": "13B", "precision": "bf16", "batch_size": 8, "seq_len": 2048},
    ),
    "image": (
        [
            ("click", text("task-image")),
            ("click", "Stable Diffusion XL 1.0"),
            ("click", core("precision", "fp16")),
            ("click", "1024×1024"),
            ("click", "4"),
        ],
        {"task": "image", "model": "sdxl", "precision": "fp16", "resolution": [1024, 1024], "images": 4},
    ),
    "video": (
        [
            ("click", text("task-video")),
            ("click", "Wan 2.1 T2V 14B"),
            ("send", "bf16"),
            ("send", "1280x720"),
            ("click", "81"),
        ],
        {
            "task": "video",
            "model": "wan2.1-t2v-14b",
            "precision": "bf16",
            "resolution": [1280, 720],
            "frames": 81,
        },
    ),
}


async def play(user: Any, actions: list[Action]) -> None:
    for kind, value in actions:
        if kind == "click":
            answer = await user.click(value)
            assert answer.text is None, f"{value!r} was answered as stale: {answer.text}"
        else:
            await user.send(value)


@pytest.mark.parametrize("name", list(DIALOGS))
async def test_full_dialog(harness: Harness, name: str) -> None:
    actions, expected = DIALOGS[name]
    user = harness.user()
    await user.send("/start")
    await play(user, actions)

    result = user.last_message()
    assert result.parse_mode == "HTML"
    assert result.source_text is not None and len(result.source_text) < MAX_MESSAGE
    assert result_mark() in (result.text or "")
    shown = buttons(result)
    assert text("btn-restart") in shown
    assert text("btn-change-precision") in shown or expected.get("method") == "qlora"
    rent = [b for row in result.buttons for b in row if b.url]
    assert rent and rent[0].url.startswith("https://"), "the rental offer is a URL button"
    assert_no_failed_calls(harness.sandbox)

    (dialog,) = await harness.dialogs(user.id)
    assert dialog.status == DIALOG_COMPLETED
    for key, value in expected.items():
        assert dialog.answers.get(key) == value, (key, dialog.answers)
    assert dialog.result_summary and dialog.result_summary["total_bytes"] > 0
    assert dialog.verdict in ("fits", "tight", "does_not_fit")
    assert dialog.offer_id


async def test_change_precision_from_result(harness: Harness) -> None:
    user = harness.user(language_code="en")
    await user.send("/start")
    await play(
        user,
        [
            ("click", text("task-inference", "en")),
            ("click", "Llama 3.1 8B"),
            ("click", core("precision", "bf16", "en")),
            ("click", "4K"),
            ("click", "1"),
        ],
    )
    await user.click(text("btn-change-precision", "en"))
    assert text("ask-precision", "en") in (user.last_message().text or "")
    await user.click(core("precision", "int4", "en"))
    assert result_mark("en") in (user.last_message().text or "")
    (dialog,) = await harness.dialogs(user.id)
    assert dialog.answers["precision"] == "int4" and dialog.status == DIALOG_COMPLETED


async def test_other_task_opens_the_quote_form(harness: Harness) -> None:
    user = harness.user()
    await user.send("/start")
    await user.click(text("task-other"))
    message = user.last_message()
    assert text("task-other-note").split("\n")[0] in (message.text or "")
    urls = [b.url for row in message.buttons for b in row if b.url]
    assert "https://example.com/contact" not in urls and text("btn-quote") in buttons(message)
    await user.click(text("btn-back"))
    assert text("ask-task") in (user.last_message().text or "")


async def test_change_method_from_result(harness: Harness) -> None:
    user = harness.user()
    await user.send("/start")
    await play(user, DIALOGS["lora"][0])
    await user.click(text("btn-change-method"))
    await user.click(core("method", "qlora"))  # QLoRA has no precision to ask: straight to the result
    assert result_mark() in (user.last_message().text or "")
    await user.click(text("btn-change-method"))
    await user.click(core("method", "full"))  # full fine-tuning: its precisions, then the result
    assert text("ask-precision").split("\n")[0] in (user.last_message().text or "")
    await user.click(core("precision", "fp32"))
    assert result_mark() in (user.last_message().text or "")
    (dialog,) = await harness.dialogs(user.id)
    assert dialog.answers["method"] == "full" and dialog.answers["precision"] == "fp32"
    assert dialog.answers["seq_len"] == 4096  # the other answers are kept


ONE_OFFER = """
[[offer]]
id = "rtx4090-48gb-x1"
gpu = "rtx4090-48gb"
count = 1
price_per_hour = 149
currency = "RUB"
url = "https://example.com/gpu-rent/rtx4090-48gb-x1"
"""


async def test_fit_outside_the_offers_links_to_the_contact(harness: Harness, tmp_path: Path) -> None:
    """The recommended configuration is not one we rent out (OFFERS_FILE has none that fits): no rental
    link to follow, so the button is CONTACT_URL and the text says to write to us."""
    offers = tmp_path / "offers.toml"
    offers.write_text(ONE_OFFER)
    harness.settings = harness.settings.model_copy(update={"offers_file": offers})
    await harness.restart()
    user = harness.user(language_code="en")
    replies = await user.send("llama 3.1 70b bf16 8k")
    result = replies[-1]
    assert [b.url for row in result.buttons for b in row if b.url] == ["https://example.com/contact"]
    not_rented = core_texts.t("lead-fits-not-offered", "en", icon="", verdict="", config="X").split("X")[1]
    assert not_rented in (result.text or "").splitlines()[0]
    (dialog,) = await harness.dialogs(user.id)
    assert dialog.status == DIALOG_COMPLETED and dialog.offer_id is None and dialog.verdict == "fits"
    (article,) = (await user.inline("llama 3.1 70b bf16 8k")).results  # inline mode: the same button
    urls = [b["url"] for row in article["reply_markup"]["inline_keyboard"] for b in row]
    assert urls == ["https://example.com/contact", "https://t.me/sandbox_bot?start=inline"]
    assert_no_failed_calls(harness.sandbox)


# The longest answers people ask for: the biggest models at long context for many users, training a
# 70B from scratch; every section of the result must still be there, in one message.
LONGEST = (
    "deepseek r1 fp8 128k 64 users",
    "deepseek r1 bf16 128k 64 users",
    "train 70b from scratch batch 32 seq 16k",
)


@pytest.mark.parametrize("lang", ["ru", "en"])
async def test_longest_results_fit_one_message(harness: Harness, lang: str) -> None:
    user = harness.user(language_code=lang)
    for question in LONGEST:
        replies = await user.send(question)
        result = replies[-1]
        assert result.source_text is not None and len(result.source_text) <= BUDGET < MAX_MESSAGE
        assert core_texts.t("answer-mitigations", lang) in (result.text or ""), question
        details = (await user.click(text("btn-details", lang), message=result)).messages[-1]
        assert details.source_text is not None and len(details.source_text) <= BUDGET
        for section in ("answer-verdicts", "answer-assumptions"):
            assert core_texts.t(section, lang) in (details.text or ""), (question, section)
    assert_no_failed_calls(harness.sandbox)  # the sandbox validated the HTML of each


async def test_what_to_do_only_when_it_does_not_fit_comfortably(harness: Harness) -> None:
    """As the CLI (core.language.phrases.needs_mitigations): no savings list when one rentable card holds
    it."""
    user = harness.user(language_code="en")
    replies = await user.send("llama 3.1 8b int4 8k")
    assert core_texts.t("answer-mitigations", "en") not in (replies[-1].text or "")
    replies = await user.send("llama 3.1 70b bf16 32k 8 users")
    assert core_texts.t("answer-mitigations", "en") in (replies[-1].text or "")
