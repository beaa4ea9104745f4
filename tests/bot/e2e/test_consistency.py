"""One question asked four ways — typed to the bot, answered step by step in the dialog, inline in
another chat, and as JSON to the CLI — gets one total and one recommended configuration."""

from __future__ import annotations

import io
import json
import re

import pytest

from bot.db.models import DIALOG_COMPLETED
from core import cli
from core.contract import Result
from core.language.cards import short_gpu_name
from core.language.phrases import format_bytes
from tests.bot.e2e.conftest import Harness, assert_no_failed_calls, buttons, core, text
from tgsandbox import SandboxUser

QUESTION = {
    "ru": "qwen3 8b awq 128k 8 пользователей",
    "en": "qwen3 8b awq 128k 8 users",
}
REQUEST = {
    "task": "inference",
    "model": "qwen3-8b",
    "precision": "awq-int4",
    "context_length": 131072,
    "concurrency": 8,
}
MAX_PAGES = 5


def cli_result() -> Result:
    """`echo '<REQUEST>' | python -m core estimate --json`."""
    out = io.StringIO()
    assert cli.main(["estimate", "--json"], stdin=io.StringIO(json.dumps(REQUEST)), stdout=out) == 0
    return Result.model_validate_json(out.getvalue())


async def click_model(user: SandboxUser, name: str, lang: str) -> None:
    """Press the model's button, paging through the model step until it shows."""
    for _ in range(MAX_PAGES):
        if name in buttons(user.last_message()):
            answer = await user.click(name)
            assert answer.text is None, f"{name!r} was answered as stale: {answer.text}"
            return
        await user.click(text("btn-next-page", lang))
    raise AssertionError(f"no {name!r} button on the model step")


async def ask_in_the_dialog(user: SandboxUser, lang: str) -> None:
    await user.send("/start")
    await user.click(text("task-inference", lang))
    await click_model(user, "Qwen3 8B", lang)
    answer = await user.click(core("precision", "awq-int4", lang))
    assert answer.text is None, f"the precision was answered as stale: {answer.text}"
    # Qwen3 8B's buttons stop at its own 40K: a longer context is typed
    assert "128K" not in buttons(user.last_message()) and "40K" in buttons(user.last_message())
    await user.send("128k")
    answer = await user.click("8")
    assert answer.text is None, f"'8' was answered as stale: {answer.text}"


@pytest.mark.parametrize("lang", ["ru", "en"])
async def test_the_same_question_gets_the_same_answer_on_every_channel(harness: Harness, lang: str) -> None:
    expected = cli_result()
    rec = expected.recommendation
    assert rec is not None, "the question fits a configuration we rent"
    # the memory an answer shows: the total, or what each card of the recommended set holds
    sizes = {format_bytes(n, lang) for n in (expected.total_bytes, rec.bytes_per_gpu)}

    typed, clicked, inline = (harness.user(language_code=lang) for _ in range(3))
    await typed.send(QUESTION[lang])
    await ask_in_the_dialog(clicked, lang)
    for user, channel in ((typed, "free text"), (clicked, "dialog")):
        (dialog,) = await harness.dialogs(user.id)
        assert dialog.status == DIALOG_COMPLETED, channel
        summary = dialog.result_summary
        assert summary is not None, channel
        assert summary["total_bytes"] == expected.total_bytes, channel
        assert summary["recommendation"] == f"{rec.count}x {rec.gpu}", channel
        assert (dialog.offer_id, dialog.verdict) == (rec.offer_id, rec.verdict), channel

    (article,) = (await inline.inline(QUESTION[lang])).results
    title = article["title"]
    names = "|".join(re.escape(n) for n in {rec.gpu_name, short_gpu_name(rec.gpu_name)})
    assert re.search(rf"\b{rec.count}\s*[×x]\s*(?:{names})", title), title
    shown = f"{title}\n{article['description']}"
    assert any(size in shown for size in sizes), (sizes, shown)
    urls = [b["url"].split("?")[0] for row in article["reply_markup"]["inline_keyboard"] for b in row]
    assert rec.url in urls
    assert_no_failed_calls(harness.sandbox)
