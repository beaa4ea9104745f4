"""Deep links, duplicate updates, /lang, commands, quick answers."""

from __future__ import annotations

from datetime import timedelta

from sqlalchemy import select

from bot.db.engine import create_engine, create_sessionmaker
from bot.db.models import DIALOG_COMPLETED, ProcessedUpdate, utc_now
from bot.handlers.commands import ACCURACY
from tests.bot.e2e.conftest import Harness, assert_no_failed_calls, buttons, core, result_mark, text


async def test_deep_link_source_recorded(harness: Harness) -> None:
    user = harness.user()
    await user.send("/start sales_webinar-7")
    await user.click(text("task-video"))
    row = await harness.db_user(user.id)
    assert row is not None and row.source == "sales_webinar-7"
    (dialog,) = await harness.dialogs(user.id)
    assert dialog.source == "sales_webinar-7"
    # a later link does not overwrite the first-contact source
    await user.send("/start other")
    row = await harness.db_user(user.id)
    assert row is not None and row.source == "sales_webinar-7"


async def test_same_update_twice_is_handled_once(harness: Harness) -> None:
    user = harness.user()
    await user.send("/start", update_id=9001)
    await user.send("/start", update_id=9001, expect_reply=False)
    await user.send("qwen3 8b", update_id=9002)
    await user.send("qwen3 8b", update_id=9002, expect_reply=False)
    assert len(user.bot_messages()) == 2
    dialogs = await harness.dialogs(user.id)
    assert len(dialogs) == 1 and dialogs[0].status == DIALOG_COMPLETED


async def test_old_processed_updates_are_forgotten_at_startup(harness: Harness) -> None:
    """The de-duplication table keeps what Telegram may still redeliver (a day), not everything."""
    user = harness.user()
    await user.send("/start", update_id=9101)
    engine = create_engine(harness.db_url)
    try:
        async with create_sessionmaker(engine)() as session, session.begin():
            session.add(ProcessedUpdate(bot_id=1, update_id=1, created_at=utc_now() - timedelta(days=3)))
        await harness.restart()
        # a redelivery of the recent update is still recognised after the restart
        await user.send("/start", update_id=9101, expect_reply=False)
        await user.send("/help")  # answered: the new process has started up
        async with create_sessionmaker(engine)() as session:
            kept = set(await session.scalars(select(ProcessedUpdate.update_id)))
    finally:
        await engine.dispose()
    assert 1 not in kept and 9101 in kept
    assert len(user.bot_messages()) == 2


async def test_lang_switch_is_remembered(harness: Harness) -> None:
    user = harness.user(language_code="ru")
    await user.send("/help")
    assert text("help", "ru").split("\n")[0] in (user.last_message().text or "")
    await user.send("/lang")
    await user.click(text("lang-en", "ru"))
    assert user.last_message().text == text("lang-set", "en")
    await user.send("/start")
    assert text("ask-task", "en") in (user.last_message().text or "")
    row = await harness.db_user(user.id)
    assert row is not None and row.language == "en"
    await harness.restart()
    first = (await user.send("/about"))[0]
    assert text("about", "en", **ACCURACY).split("\n")[0] in (first.text or "")


async def test_language_from_telegram_and_commands_menu(harness: Harness) -> None:
    user = harness.user(language_code="en-GB")
    await user.send("/start")
    assert text("ask-task", "en") in (user.last_message().text or "")
    for lang in ("ru", "en"):
        names = [c["command"] for c in harness.sandbox.commands(language_code=lang)]
        assert names == [
            "start", "new", "prices", "contact", "help", "lang", "about", "cancel", "currency", "ref"
        ]  # fmt: skip
    descriptions = [c["description"] for c in harness.sandbox.commands(language_code="ru")]
    assert descriptions[0] == text("cmd-start", "ru")


async def test_quick_answers_in_both_languages(harness: Harness) -> None:
    en = harness.user(language_code="en")
    replies = await en.send("llama 3 70b int4 32k")
    assert result_mark("en") in (replies[-1].text or "")
    assert text("btn-change-precision", "en") in buttons(replies[-1])

    ru = harness.user(language_code="ru")
    replies = await ru.send("сколько памяти для sdxl 1024 batch 4")
    assert result_mark("ru") in (replies[-1].text or "")
    (dialog,) = await harness.dialogs(ru.id)
    assert dialog.status == DIALOG_COMPLETED and dialog.answers["task"] == "image"
    assert_no_failed_calls(harness.sandbox)


async def test_quick_answer_asks_for_the_missing_model(harness: Harness) -> None:
    user = harness.user(language_code="ru")
    replies = await user.send("int4 32k контекст 4 пользователя")
    question = replies[-1]
    assert "Llama 3.1 8B" in buttons(question)
    await user.click("Llama 3.1 8B")
    assert result_mark("ru") in (user.last_message().text or "")
    (dialog,) = await harness.dialogs(user.id)
    assert dialog.answers["precision"] == "int4" and dialog.answers["context_length"] == 32768


async def test_typed_reply_to_the_model_question_is_merged_with_the_question(harness: Harness) -> None:
    """Asked for the model, people type more than a model: what they add joins what was understood."""
    user = harness.user(language_code="ru")
    await user.send("32k контекст 4 пользователя")
    replies = await user.send("llama 3.1 70b int4")
    assert result_mark("ru") in (replies[-1].text or "")
    (dialog,) = await harness.dialogs(user.id)
    assert dialog.status == DIALOG_COMPLETED
    assert (dialog.answers["model"], dialog.answers["precision"]) == ("llama-3.1-70b", "int4")
    assert (dialog.answers["context_length"], dialog.answers["concurrency"]) == (32768, 4)

    # an ambiguous name narrows to a choice; the precision typed with it is kept, and wins over the earlier
    other = harness.user(language_code="en")
    await other.send("int4 8k 2 users")
    replies = await other.send("llama 70b int8")
    choice = [b for b in buttons(replies[-1]) if "70B" in b]
    assert choice, buttons(replies[-1])
    await other.click(choice[0])
    assert result_mark("en") in (other.last_message().text or "")
    (dialog,) = await harness.dialogs(other.id)
    assert (dialog.answers["precision"], dialog.answers["context_length"]) == ("int8", 8192)
    assert_no_failed_calls(harness.sandbox)


async def test_quick_answer_ambiguous_model_offers_a_choice(harness: Harness) -> None:
    user = harness.user(language_code="en")
    replies = await user.send("llama 70b")
    choice = buttons(replies[-1])
    assert any("70B" in b for b in choice), choice
    await user.click(next(b for b in choice if "70B" in b))
    assert result_mark("en") in (user.last_message().text or "")


async def test_nonsense_outside_the_wizard(harness: Harness) -> None:
    user = harness.user(language_code="en")
    replies = await user.send("hello there")
    assert replies and replies[-1].text
    assert_no_failed_calls(harness.sandbox)


async def test_flood_control_is_waited_out(harness: Harness) -> None:
    """Telegram's 429 "retry after N": the bot waits and sends again instead of losing the reply."""
    user = harness.user()
    harness.sandbox.flood_limit(retry_after=1, methods=["sendMessage"], chat_id=user.id)
    replies = await user.send("/start")
    assert text("ask-task") in (replies[-1].text or "")
    assert [r.method for r in harness.sandbox.requests_for(user.id, "sendMessage") if r.error]


async def test_training_from_scratch_and_nothing_to_rent(harness: Harness) -> None:
    user = harness.user(language_code="en")
    replies = await user.send("train 7b from scratch batch 8 seq 4096")
    assert core("method", "full", "en") in (replies[-1].text or "")  # the settings line names it
    replies = await user.send("deepseek r1 bf16 128k 64 users")  # fits nothing we rent out
    urls = [b.url for row in replies[-1].buttons for b in row if b.url]
    assert urls == ["https://example.com/contact"]
    dialogs = await harness.dialogs(user.id)
    assert [d.answers["task"] for d in dialogs] == ["pretrain", "inference"]
    assert dialogs[1].offer_id is None
    assert_no_failed_calls(harness.sandbox)
