"""The quote form and the lead outbox, through the real bot on the sandbox: from a result, from
/contact and from free text (ru, en); contacts by @username, shared phone, typed e-mail; the sales
chat's card (HTML parsed by the sandbox); the sales chat failing and a restart; double taps; UTM."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable, Callable
from datetime import timedelta
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import pytest
from sqlalchemy import select

from bot import outbox
from bot.callbacks import Quote, QuoteCB
from bot.db import leads as lead_db
from bot.db.engine import create_engine, create_sessionmaker
from bot.db.models import LEAD_FAILED, LEAD_PENDING, LEAD_SENT, DialogSession, Lead, User
from bot.throttle import THROTTLE_KEY, Limits, Throttle
from tests.bot.e2e.conftest import (
    REPLY_TIMEOUT_S,
    Harness,
    assert_no_failed_calls,
    buttons,
    result_mark,
    running_bot,
    text,
)
from tgsandbox import ChatMessage, SandboxUser

SALES_CHAT = -1009876543210
ADMIN = 901
SALES_TOPIC = 7
QUESTION = {"ru": "llama 3.1 8b int4 32k 4 пользователя", "en": "llama 3.1 8b int4 32k 4 users"}
HEADLINE = {
    "ru": "Llama 3.1 8B: инференс, int4, vLLM, контекст 32\xa0768 токенов, 4 пользователя",
    "en": "Llama 3.1 8B: inference, int4, vLLM, context 32,768 tokens, 4 users",
}


@pytest.fixture(autouse=True)
def fast_backoff(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(outbox, "BACKOFF_BASE_S", 0.05)


@pytest.fixture
async def sales(tmp_path: Path, template_db: Path) -> AsyncIterator[Harness]:
    """The bot with SALES_CHAT_ID (a forum topic of it) and that group in the sandbox."""
    async with running_bot(
        tmp_path,
        template_db,
        sales_chat_id=SALES_CHAT,
        sales_topic_id=SALES_TOPIC,
        admin_ids=frozenset({ADMIN}),
    ) as h:
        h.sandbox.user(id=900, first_name="Manager").in_group(chat_id=SALES_CHAT, title="Sales")
        yield h


def cards(h: Harness) -> list[ChatMessage]:
    return [m for m in h.sandbox.chat(SALES_CHAT) if m.from_bot]


def admin_messages(h: Harness, admin: int) -> list[ChatMessage]:
    return [m for m in h.sandbox.chat(admin) if m.from_bot]


async def wait_cards(h: Harness, n: int) -> list[ChatMessage]:
    await h.sandbox.wait_for(lambda: len(cards(h)) >= n, f"{n} card(s) in the sales chat")
    assert len(cards(h)) == n
    return cards(h)


async def leads(h: Harness) -> list[Lead]:
    engine = create_engine(h.db_url)
    try:
        async with create_sessionmaker(engine)() as session:
            return list(await session.scalars(select(Lead).order_by(Lead.id)))
    finally:
        await engine.dispose()


async def wait_leads(h: Harness, ok: Callable[[list[Lead]], bool], what: str) -> list[Lead]:
    """Wait for the lead rows to say something (checked every 20 ms), at most REPLY_TIMEOUT_S."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + REPLY_TIMEOUT_S
    while not ok(rows := await leads(h)):
        assert loop.time() < deadline, f"timed out waiting for {what}: {rows}"
        await asyncio.sleep(0.02)
    return rows


def status_line(key: str, lang: str, lead_id: int) -> str:
    """The first line of a confirmation (`lead-saved`, `lead-accepted`, ...): the lead's status."""
    return text(key, lang, id=lead_id, what="", limit=3).split("\n")[0]


async def wait_status(h: Harness, message: ChatMessage, key: str, lang: str, lead_id: int) -> None:
    line = status_line(key, lang, lead_id)
    await h.sandbox.wait_for(lambda: (message.text or "").startswith(line), f"the confirmation: {line}")


def saved_message(user: SandboxUser) -> ChatMessage:
    """The bot's last message before the optional questions that follow a new lead."""
    return [m for m in user.bot_messages() if not is_question(m)][-1]


def is_question(message: ChatMessage) -> bool:
    rows = (message.reply_markup or {}).get("inline_keyboard", [])
    return any(str(b.get("callback_data", "")).startswith("lq:") for row in rows for b in row)


async def until(condition: Callable[[], Awaitable[bool]]) -> None:
    for _ in range(500):
        if await condition():
            return
        await asyncio.sleep(0.02)
    raise AssertionError("condition never held")


# ---------------------------------------------------------------- the form


@pytest.mark.parametrize("lang", ["ru", "en"])
async def test_quote_from_a_result_reaches_the_sales_chat(sales: Harness, lang: str) -> None:
    user = sales.user(language_code=lang, username="ann_k", first_name="<Ann & Co>")
    await user.send("/start webinar_7")
    result = (await user.send(QUESTION[lang]))[-1]
    assert result_mark(lang) in (result.text or "")
    assert text("btn-quote", lang) in buttons(result)
    await user.click(text("btn-quote", lang))
    ask = user.last_message()
    assert HEADLINE[lang] in (ask.text or "")
    assert buttons(ask) == [text("btn-lead-username", lang, username="ann_k"), text("btn-lead-phone", lang)]
    assert ask.reply_markup and ask.reply_markup["keyboard"][1][0]["request_contact"] is True
    await user.click(text("btn-lead-username", lang, username="ann_k"))
    assert user.last_message().text == text("lead-ask-comment", lang)
    await user.send("Нужно <b>срочно</b> & недорого")
    confirmation = saved_message(user)
    shown = confirmation.text or ""
    assert "@ann_k" in shown and "Нужно <b>срочно</b> & недорого" in shown and HEADLINE[lang] in shown
    sent = [r for r in sales.sandbox.requests_for(user.id, "sendMessage") if not r.error]
    assert sent[-2].params["reply_markup"] == {"remove_keyboard": True}
    assert sent[-1].params["text"] == text("need-ask-when", lang)  # after the lead, optional

    (card,) = await wait_cards(sales, 1)
    assert card.parse_mode == "HTML"  # and the sandbox's parser accepted it
    body = card.text or ""
    for part in ("<Ann & Co>", "@ann_k", "webinar_7", "Нужно <b>срочно</b> & недорого", "rtx4090-48gb-x1"):
        assert part in body, part
    assert HEADLINE["ru"] in body and "от 149 ₽/ч" in body  # the sales chat reads the default language
    assert any(e.type == "text_link" and e.url == f"tg://user?id={user.id}" for e in card.entities)
    (request,) = [r for r in sales.sandbox.requests_for(SALES_CHAT, "sendMessage") if not r.error]
    assert request.params["message_thread_id"] == SALES_TOPIC

    (lead,) = await wait_leads(sales, lambda rows: rows[0].delivery_status == LEAD_SENT, "sent")
    await wait_status(sales, confirmation, "lead-accepted", lang, lead.id)
    assert "Нужно <b>срочно</b> & недорого" in (confirmation.text or "")
    assert (lead.contact_kind, lead.contact, lead.source) == ("username", "@ann_k", "webinar_7")
    assert lead.attempts == 1 and lead.sent_at is not None and lead.last_error is None
    assert lead.request["model"] == "llama-3.1-8b" and lead.request["precision"] == "int4"
    summary = lead.summary
    assert summary["model"] == "Llama 3.1 8B" and summary["task"] == "inference"
    assert summary["precision"] == "int4" and summary["workload"] == {
        "context_length": 32768,
        "concurrency": 4,
    }
    assert summary["recommended_config"] == "1x rtx4090-48gb"
    assert summary["recommended_offer_id"] == summary["chosen_offer"] == "rtx4090-48gb-x1"
    assert summary["price_per_hour"] == 149 and summary["price_is_from"] is True
    assert summary["verdict"] == "fits" and summary["total_bytes"] > 0
    (dialog,) = await sales.dialogs(user.id)
    assert lead.dialog_id == dialog.id and dialog.quote_requested is True
    assert dialog.offer_shown == "rtx4090-48gb-x1"
    assert_no_failed_calls(sales.sandbox)

    # the result's buttons still work after the form
    await user.click(text("btn-details", lang), message=result)


@pytest.mark.parametrize("lang", ["ru", "en"])
async def test_contact_command_with_a_shared_phone_before_any_answer(sales: Harness, lang: str) -> None:
    user = sales.user(language_code=lang)  # no @username: no Telegram button
    await user.send("/contact")
    ask = user.last_message()
    assert text("lead-no-config", lang) in (ask.text or "")
    assert buttons(ask) == [text("btn-lead-phone", lang)]
    stranger = await user.share_contact("+7 900 000-00-00", user_id=1)
    assert stranger[-1].text == text("lead-foreign-contact", lang)
    await user.share_contact("+44 20 7946 0958")
    answer = await user.click(text("btn-lead-skip", lang))
    assert answer.text is None
    shown = saved_message(user).text or ""
    assert "+442079460958" in shown and text("lead-what-none", lang) in shown
    # a second press of the same Skip button is stale: no second lead
    again = await user.press(QuoteCB(action=Quote.SKIP).pack(), message=user.bot_messages()[-3])
    assert again.text == text("stale-button", lang)
    (card,) = await wait_cards(sales, 1)
    assert "+442079460958" in (card.text or "") and text("lead-card-no-config", "ru") in (card.text or "")
    (lead,) = await leads(sales)
    assert (lead.contact_kind, lead.request, lead.summary.get("model"), lead.dialog_id) == (
        "phone",
        {},
        None,
        None,
    )


@pytest.mark.parametrize(
    ("lang", "ask"), [("ru", "хочу поговорить с менеджером"), ("en", "Can I talk to a manager?")]
)
async def test_free_text_opens_the_form_and_a_bad_email_is_asked_again(
    sales: Harness, lang: str, ask: str
) -> None:
    user = sales.user(language_code=lang)
    await user.send(QUESTION[lang])
    await user.send(ask)
    assert text("lead-config", lang, config=HEADLINE[lang]) in (user.last_message().text or "")
    for bad in ("ann@", "not an address", "12"):
        await user.send(bad)
        assert user.last_message().text == text("lead-bad-contact", lang)
    await user.send("ann.k@example.com")
    await user.click(text("btn-lead-skip", lang))
    assert "ann.k@example.com" in (saved_message(user).text or "")
    (card,) = await wait_cards(sales, 1)
    assert "ann.k@example.com" in (card.text or "")
    (lead,) = await leads(sales)
    assert (lead.contact_kind, lead.contact, lead.comment) == ("email", "ann.k@example.com", None)
    assert lead.summary["model"] == "Llama 3.1 8B"


async def test_a_question_naming_a_model_is_answered_not_a_quote(sales: Harness) -> None:
    user = sales.user(language_code="ru")
    answer = (await user.send("сколько стоит llama 3.1 8b int4"))[-1]
    assert result_mark("ru") in (answer.text or "")
    assert text("btn-quote", "ru") in buttons(answer)


async def test_double_tap_and_a_repeat_make_one_lead(sales: Harness) -> None:
    user = sales.user(language_code="ru", username="bob")
    result = (await user.send(QUESTION["ru"]))[-1]
    await user.click(text("btn-quote"), message=result)
    await user.click(text("btn-quote"), message=result)  # the double tap: the form is asked again
    await user.click(text("btn-lead-username", username="bob"))
    await user.click(text("btn-lead-skip"))
    await wait_cards(sales, 1)
    await wait_status(sales, saved_message(user), "lead-accepted", "ru", 1)
    # the same request again within minutes: the same lead, said so
    await user.send("/contact")
    await user.click(text("btn-lead-username", username="bob"))
    await user.click(text("btn-lead-skip"))
    assert (user.last_message().text or "").startswith(status_line("lead-already-accepted", "ru", 1))
    await user.send("/help")  # handled after the repeat: the outbox has had its chance
    assert len(await leads(sales)) == 1 and len(cards(sales)) == 1


async def test_cancel_leaves_the_form(sales: Harness) -> None:
    user = sales.user(language_code="en")
    await user.send("/contact")
    await user.send("/cancel")
    assert user.last_message().text == text("lead-cancelled", "en")
    assert user.last_message().reply_markup == {"remove_keyboard": True}
    await user.send("ann@example.com")  # no longer the form: a question
    assert await leads(sales) == []


# ---------------------------------------------------------------- the outbox


async def test_the_sales_chat_failing_and_a_restart_deliver_once(sales: Harness) -> None:
    sandbox = sales.sandbox
    sandbox.fail(400, "Bad Request: chat not found", methods=["sendMessage"], chat_id=SALES_CHAT, times=1)
    sandbox.fail(429, methods=["sendMessage"], chat_id=SALES_CHAT, times=1, retry_after=1)
    down = sandbox.fail(502, "Bad Gateway", methods=["sendMessage"], chat_id=SALES_CHAT, times=None)
    user = sales.user(language_code="en", username="carol")
    await user.send("/contact")
    await user.click(text("btn-lead-username", "en", username="carol"))
    await user.click(text("btn-lead-skip", "en"))
    assert saved_message(user).text  # the user is answered at once, whatever the sales chat does
    await sandbox.wait_for(lambda: down.hits >= 2, "two 502s from the sales chat")
    # the outbox records a failed attempt after Telegram's answer: wait for the row, not the call
    (lead,) = await wait_leads(
        sales,
        lambda rows: rows[0].attempts >= 3 and "Bad Gateway" in (rows[0].last_error or ""),
        "three failed attempts recorded",
    )
    assert lead.delivery_status == LEAD_PENDING

    await sales.stop()
    down.stop()
    await sales.start()  # the pending lead is picked up at start
    (card,) = await wait_cards(sales, 1)
    assert "@carol" in (card.text or "")
    (lead,) = await wait_leads(sales, lambda rows: rows[0].delivery_status == LEAD_SENT, "sent")
    assert lead.last_error is None
    await user.send("/help")
    assert len(cards(sales)) == 1


async def test_a_failing_sales_chat_is_retried_and_the_admins_are_told_once(
    sales: Harness, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 19 item 2: the old outbox gave a lead up after 8 attempts; now it retries while the lead
    is fresh, the admins read one alert for the outage, and the user reads "saved" until delivery."""
    monkeypatch.setattr(outbox, "BACKOFF_MAX_S", 0.05)
    admin = sales.sandbox.user(id=ADMIN, first_name="Admin", language_code="ru")
    down = sales.sandbox.fail(
        403, "Forbidden: bot was kicked from the supergroup chat", chat_id=SALES_CHAT, times=None
    )
    user = sales.user(language_code="ru")
    await user.send("/contact")
    await user.send("+7 916 123 45 67")
    await user.click(text("btn-lead-skip"))
    confirmation = saved_message(user)
    assert (confirmation.text or "").startswith(status_line("lead-saved", "ru", 1))
    (lead,) = await wait_leads(sales, lambda rows: rows[0].attempts >= 12, "12 failed attempts")
    assert lead.delivery_status == LEAD_PENDING and "kicked" in (lead.last_error or "")
    (alert,) = admin_messages(sales, admin.id)
    assert "#1" in (alert.text or "") and "kicked" in (alert.text or "")
    # a second lead in the same outage: counted as told, no second alert
    other = sales.user(language_code="en")
    await other.send("/contact")
    await other.send("other@example.com")
    await other.click(text("btn-lead-skip", "en"))
    await wait_leads(
        sales,
        lambda rows: len(rows) == 2 and rows[1].alerted_at is not None,
        "the second lead past the alert",
    )
    assert len(admin_messages(sales, admin.id)) == 1
    assert (confirmation.text or "").startswith(status_line("lead-saved", "ru", 1))
    assert cards(sales) == []

    down.stop()
    await wait_cards(sales, 2)
    await wait_status(sales, confirmation, "lead-accepted", "ru", 1)
    await wait_status(sales, saved_message(other), "lead-accepted", "en", 2)
    await wait_leads(sales, lambda rows: all(r.delivery_status == LEAD_SENT for r in rows), "both sent")
    assert len(admin_messages(sales, admin.id)) == 1


async def test_a_stale_lead_is_failed_listed_and_resent_by_an_admin(
    sales: Harness, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(outbox, "LEAD_FRESH_FOR", timedelta(0))
    admin = sales.sandbox.user(id=ADMIN, first_name="Admin", language_code="ru")
    down = sales.sandbox.fail(502, "Bad Gateway", chat_id=SALES_CHAT, times=None)
    user = sales.user(language_code="ru")
    await user.send("/contact")
    await user.send("ann@example.com")
    await user.click(text("btn-lead-skip"))
    await wait_leads(sales, lambda rows: rows[0].delivery_status == LEAD_FAILED, "failed")
    listing = (await admin.send("/leads"))[-1].text or ""
    assert listing.startswith(text("admin-leads-title", count=1))
    assert "#1 " in listing and text("admin-leads-status-failed") in listing and "Bad Gateway" in listing
    assert (saved_message(user).text or "").startswith(status_line("lead-saved", "ru", 1))

    down.stop()
    monkeypatch.setattr(outbox, "LEAD_FRESH_FOR", timedelta(days=7))
    assert (await admin.send("/leads resend"))[-1].text == text("admin-leads-resent", count=1)
    (card,) = await wait_cards(sales, 1)
    assert "ann@example.com" in (card.text or "")
    await wait_leads(sales, lambda rows: rows[0].delivery_status == LEAD_SENT, "sent")
    await wait_status(sales, saved_message(user), "lead-accepted", "ru", 1)
    assert (await admin.send("/leads"))[-1].text == text("admin-leads-none")
    assert (await admin.send("/leads now"))[-1].text == text("admin-leads-usage")


async def test_past_the_cap_a_request_joins_the_last_card(sales: Harness) -> None:
    """Issue 19 item 3: one account made 12 cards in 41 s; now MAX_LEADS_PER_WINDOW cards an hour,
    a later request is a note on the last card (edited in place), the user told why."""
    cap = lead_db.MAX_LEADS_PER_WINDOW
    assert sales.app is not None  # the per-user throttle (tested in test_edges) out of the way
    sales.app.dp[THROTTLE_KEY] = Throttle(messages=Limits(1000, 1000.0))
    user = sales.user(language_code="ru")
    for n in range(cap):
        await user.send("/contact")
        await user.send(f"ann{n}@example.com")
        await user.send(f"комментарий {n}")
    await wait_cards(sales, cap)
    await wait_leads(sales, lambda rows: all(r.delivery_status == LEAD_SENT for r in rows), "all sent")
    last = cards(sales)[-1]
    await user.send("/contact")
    await user.send("late@example.com")
    await user.send("и ещё <одно> & последнее")
    reply = user.last_message().text or ""
    assert reply.startswith(status_line("lead-joined", "ru", cap)) and "late@example.com" in reply
    await sales.sandbox.wait_for(lambda: "late@example.com" in (last.text or ""), "the note on the last card")
    assert "и ещё <одно> & последнее" in (last.text or "") and last.edit_count == 1
    assert f"#{cap}" in (last.text or "") and len(cards(sales)) == cap
    rows = await wait_leads(sales, lambda rows: rows[-1].delivery_status == LEAD_SENT, "the edit done")
    assert len(rows) == cap and len(rows[-1].notes or []) == 1
    assert_no_failed_calls(sales.sandbox)


@pytest.mark.parametrize(
    "comment",
    ["<" * 4096, "&" * 1000, "<b>&amp;</b>" * 341, "😀" * 2048],
    ids=["4096 lt", "1000 amp", "tags", "2048 emoji"],
)
async def test_a_long_comment_of_any_characters_is_a_lead(sales: Harness, comment: str) -> None:
    """Issue 19 item 1: the comment was cut, then escaped, and Fluent refused the placeable: no lead."""
    user = sales.user(language_code="en", username="dora")
    await user.send("/contact")
    await user.click(text("btn-lead-username", "en", username="dora"))
    await user.send(comment)
    confirmation = saved_message(user)
    assert comment[:300] in (confirmation.text or "")
    (lead,) = await wait_leads(sales, lambda rows: rows[0].delivery_status == LEAD_SENT, "sent")
    assert lead.comment == comment
    (card,) = await wait_cards(sales, 1)
    assert comment[:300] in (card.text or "") and "@dora" in (card.text or "")
    await wait_status(sales, confirmation, "lead-accepted", "en", lead.id)
    assert_no_failed_calls(sales.sandbox)


async def test_without_a_sales_chat_leads_are_stored_not_sent(harness: Harness) -> None:
    user = harness.user(language_code="ru")
    await user.send("/contact")
    await user.send("ann@example.com")
    await user.send("позвоните после обеда")
    (lead,) = await leads(harness)
    assert (
        lead.delivery_status == LEAD_PENDING
        and lead.attempts == 0
        and lead.comment == "позвоните после обеда"
    )
    assert "card" in lead.summary
    assert (saved_message(user).text or "").startswith(status_line("lead-saved", "ru", lead.id))
    assert {r.chat_id for r in harness.sandbox.requests if r.method == "sendMessage"} == {user.id}


# ---------------------------------------------------------------- UTM


@pytest.mark.parametrize(("start", "campaign"), [("/start webinar_7", "webinar_7"), ("/help", "direct")])
async def test_the_rent_button_carries_utm(harness: Harness, start: str, campaign: str) -> None:
    user = harness.user(language_code="ru")
    await user.send(start)
    result = (await user.send(QUESTION["ru"]))[-1]
    (url,) = [b.url for row in result.buttons for b in row if b.url]
    parts = urlsplit(url)
    assert f"{parts.scheme}://{parts.netloc}{parts.path}" == "https://example.com/gpu-rent/rtx4090-48gb-x1"
    assert parse_qs(parts.query) == {
        "utm_source": ["telegram"],
        "utm_medium": ["bot"],
        "utm_campaign": [campaign],
        "utm_content": ["rtx4090-48gb-x1"],
    }
    engine = create_engine(harness.db_url)
    try:
        async with create_sessionmaker(engine)() as session:
            dialog = await session.scalar(
                select(DialogSession).join(User).where(User.telegram_id == user.id).order_by(DialogSession.id)
            )
    finally:
        await engine.dispose()
    assert dialog is not None and dialog.offer_shown == "rtx4090-48gb-x1" and dialog.quote_requested is None
