"""Nobody's lead goes cold, through the real bot on the sandbox: "Беру" on the sales card (the first
press wins, a second is told who has it), the reminder in the sales chat and the admins' escalation
on a test clock (and after a restart, never twice), the optional questions after the lead, /stats
and /export with the claims."""

from __future__ import annotations

from collections.abc import AsyncIterator
from datetime import datetime, timedelta
from pathlib import Path

import pytest
from sqlalchemy.ext.asyncio import AsyncSession

from bot.callbacks import ClaimCB, NeedCB
from bot.db.models import Lead, utc_now
from bot.reminders import LeadReminders
from tests.bot.e2e.conftest import Harness, assert_no_failed_calls, buttons, running_bot, text
from tests.bot.e2e.test_admin import document, read_csv, when
from tests.bot.e2e.test_leads import SALES_CHAT, cards, leads, wait_cards, wait_leads
from tgsandbox import ChatMessage, SandboxUser

ADMIN = 901
MANAGERS = {900: "Manager", 902: "Olga"}


class Clock:
    """A clock the test moves: the reminder task reads "now" from it."""

    def __init__(self) -> None:
        self.now = utc_now()

    def __call__(self) -> datetime:
        return self.now


@pytest.fixture
async def sales(tmp_path: Path, template_db: Path) -> AsyncIterator[Harness]:
    async with running_bot(
        tmp_path, template_db, sales_chat_id=SALES_CHAT, admin_ids=frozenset({ADMIN}),
        lead_reminder_minutes=15, lead_escalate_minutes=60,
    ) as h:  # fmt: skip
        manager(h, 900)  # the sales group, in the sandbox
        h.sandbox.user(id=ADMIN, first_name="Admin", language_code="ru")  # their chat with the bot
        yield h


def manager(h: Harness, telegram_id: int) -> SandboxUser:
    user = h.sandbox.user(id=telegram_id, first_name=MANAGERS[telegram_id])
    return user.in_group(chat_id=SALES_CHAT, title="Sales")


def reminders_of(h: Harness, clock: Clock) -> LeadReminders:
    assert h.app is not None
    reminders: LeadReminders = h.app.dp["lead_reminders"]
    reminders.clock = clock
    return reminders


async def new_lead(h: Harness, username: str = "ann_k") -> tuple[SandboxUser, ChatMessage]:
    """A lead by /contact, @username, no comment; its card in the sales chat."""
    n = len(cards(h)) + 1
    user = h.user(username=username)
    await user.send("/contact")
    await user.click(text("btn-lead-username", username=username))
    await user.click(text("btn-lead-skip"))
    return user, (await wait_cards(h, n))[-1]


def claim_data(lead_id: int) -> str:
    return ClaimCB(lead_id=lead_id).pack()


async def test_the_first_press_claims_and_a_second_is_told_who_has_it(sales: Harness) -> None:
    _, card = await new_lead(sales)
    assert buttons(card) == [text("btn-lead-claim")]
    first, second = manager(sales, 900), manager(sales, 902)
    answer = await first.click(text("btn-lead-claim"), message=card)
    assert answer.text == text("lead-claim-won", id=1)
    await sales.sandbox.wait_for(lambda: "Manager" in (card.text or ""), "the card names who took it")
    assert buttons(card) == []  # nobody else needs the button
    (lead,) = await leads(sales)
    assert lead.claimed_by == 900 and lead.claimed_by_name == "Manager" and lead.claimed_at is not None
    assert lead.claimed_at >= lead.created_at
    at = lead.claimed_at.strftime("%H:%M UTC")
    assert text("lead-card-claimed", name="Manager", at=at, minutes=0) in (card.text or "")

    again = await second.press(claim_data(1), message=card)  # an old client still shows the button
    assert again.text == text("lead-claim-taken", id=1, name="Manager", at=at) and again.show_alert
    mine = await first.press(claim_data(1), message=card)
    assert mine.text == text("lead-claim-mine", id=1)
    (same,) = await leads(sales)
    assert (same.claimed_by, same.claimed_at, same.revision) == (900, lead.claimed_at, lead.revision)
    assert_no_failed_calls(sales.sandbox)


async def test_a_claim_button_outside_the_sales_chat_is_stale(sales: Harness) -> None:
    user, _ = await new_lead(sales)
    answer = await user.press(claim_data(1))  # forged, in the user's private chat
    assert answer.text == text("stale-button")
    other = sales.user().in_group(chat_id=-1004200, title="Elsewhere")
    await other.send("/start")  # the bot in that group
    assert (await other.press(claim_data(1))).text == text("stale-button")
    assert (await manager(sales, 900).press(claim_data(99))).text == text("stale-button")  # no such lead
    (lead,) = await leads(sales)
    assert lead.claimed_by is None


async def test_an_unclaimed_lead_is_reminded_once_then_the_admins_are_told(sales: Harness) -> None:
    _, card = await new_lead(sales)
    (lead,) = await wait_leads(sales, lambda rows: rows[0].card_message_id is not None, "delivered")
    clock = Clock()
    clock.now = lead.created_at + timedelta(minutes=16)
    reminders = reminders_of(sales, clock)
    reminders.wake()
    reminder = text("lead-reminder", id=1, minutes=16)

    def replies() -> list[ChatMessage]:
        return [m for m in cards(sales) if m.reply_to_message_id == card.message_id]

    await sales.sandbox.wait_for(lambda: len(replies()) == 1, "the reminder, a reply to the card")
    assert replies()[0].text == reminder
    assert not [m for m in sales.sandbox.chat(ADMIN) if m.from_bot]  # not yet

    clock.now = lead.created_at + timedelta(minutes=61)
    reminders.wake()
    await sales.sandbox.wait_for(
        lambda: any(m.from_bot for m in sales.sandbox.chat(ADMIN)), "the admins told of the unclaimed lead"
    )
    (told,) = [m for m in sales.sandbox.chat(ADMIN) if m.from_bot]
    assert told.text == text("lead-escalation", count=1, leads="#1", minutes=60).replace("<b>", "").replace(
        "</b>", ""
    )

    # A restart remembers both: however late, neither is repeated.
    await sales.restart()
    clock.now = lead.created_at + timedelta(days=2)
    restarted = reminders_of(sales, clock)
    assert sales.app is not None
    assert await restarted.remind(sales.app.bot) == 0
    assert await restarted.escalate(sales.app.bot) == []
    assert len(replies()) == 1 and len([m for m in sales.sandbox.chat(ADMIN) if m.from_bot]) == 1
    (lead,) = await leads(sales)
    assert lead.reminded_at is not None and lead.escalated_at is not None


async def test_a_claimed_lead_is_never_reminded(sales: Harness) -> None:
    _, card = await new_lead(sales)
    await manager(sales, 900).click(text("btn-lead-claim"), message=card)
    await wait_leads(sales, lambda rows: rows[0].claimed_by == 900, "claimed")
    clock = Clock()
    clock.now = utc_now() + timedelta(hours=3)
    reminders = reminders_of(sales, clock)
    assert sales.app is not None
    assert await reminders.remind(sales.app.bot) == 0
    assert await reminders.escalate(sales.app.bot) == []
    assert not [m for m in cards(sales) if m.reply_to_message_id == card.message_id]


async def test_the_optional_questions_update_the_stored_lead_and_its_card(sales: Harness) -> None:
    user, card = await new_lead(sales)
    ask = user.last_message()
    assert ask.text == text("need-ask-when")
    assert buttons(ask) == [
        text("btn-need-when-today"), text("btn-need-when-week"), text("btn-need-when-later"),
        text("btn-need-skip"),
    ]  # fmt: skip
    (lead,) = await leads(sales)  # stored before any question
    assert lead.need_when is None and lead.need_for is None
    await user.click(text("btn-need-when-today"), message=ask)
    assert ask.text == text("need-ask-for")
    await user.click(text("btn-need-for-weeks"), message=ask)
    assert ask.text == text("need-thanks") and buttons(ask) == []
    (lead,) = await leads(sales)
    assert (lead.need_when, lead.need_for) == ("today", "weeks")
    line = text("lead-card-need", when=text("need-when-today"), duration=text("need-for-weeks"))
    await sales.sandbox.wait_for(lambda: line in (card.text or ""), "the answers on the card")
    assert buttons(card) == [text("btn-lead-claim")]  # still unclaimed

    # Someone else's lead cannot be answered for.
    stranger = sales.user()
    await stranger.send("/start")
    forged = NeedCB(lead_id=lead.id, question="for", value="months").pack()
    assert (await stranger.press(forged)).text == text("stale-button")
    (lead,) = await leads(sales)
    assert lead.need_for == "weeks"


async def test_both_questions_skipped_leave_the_lead_as_it_was(sales: Harness) -> None:
    user, card = await new_lead(sales, username="bob_k")
    ask = user.last_message()
    await user.click(text("btn-need-skip"), message=ask)
    assert ask.text == text("need-ask-for")
    await user.click(text("btn-need-skip"), message=ask)
    assert ask.text == text("need-thanks")
    (lead,) = await leads(sales)
    assert (lead.need_when, lead.need_for, lead.revision) == (None, None, 0)
    assert "🗓" not in (card.text or "")


async def test_stats_and_export_show_the_claims(sales: Harness) -> None:
    _, card = await new_lead(sales)
    await new_lead(sales, username="bob_k")
    await manager(sales, 900).click(text("btn-lead-claim"), message=card)
    rows = await wait_leads(sales, lambda rows: rows[0].claimed_by == 900, "claimed")
    admin = sales.sandbox.user(id=ADMIN, first_name="Admin", language_code="ru")
    replies = await admin.send("/stats")
    every = "\n".join(m.text or "" for m in replies)
    assert text("admin-stats-claims-row", name=text("admin-stats-no-link"), leads=2, claimed=1, median="0",
                conversion="—") in every  # fmt: skip
    week = rows[0].created_at.isocalendar()
    week_row = text("admin-stats-week-row", week=f"{week[0]}-W{week[1]:02d}", completed=0, leads=2, claimed=1,
                    median="0", conversion="—")  # fmt: skip
    assert week_row in replies[-1].text  # type: ignore[operator]

    await admin.send("/export")
    table = read_csv(document(sales, "leads.csv"))
    assert [row["claimed_by"] for row in table] == ["900", ""]
    assert table[0]["claimed_by_name"] == "Manager" and table[0]["minutes_to_claim"] == "0.0"
    assert table[0]["claimed_at"] == when(rows[0].claimed_at) and table[1]["claimed_at"] == ""


async def test_a_reminder_the_sales_chat_refused_is_tried_again(sales: Harness) -> None:
    _, card = await new_lead(sales)
    (lead,) = await wait_leads(sales, lambda rows: rows[0].card_message_id is not None, "delivered")
    clock = Clock()
    clock.now = lead.created_at + timedelta(minutes=20)
    reminders = reminders_of(sales, clock)
    assert sales.app is not None
    down = sales.sandbox.fail(502, "Bad Gateway", methods=["sendMessage"], chat_id=SALES_CHAT, times=1)
    assert await reminders.remind(sales.app.bot) == 0
    assert down.hits == 1
    (lead,) = await leads(sales)
    assert lead.reminded_at is None  # given back
    assert await reminders.remind(sales.app.bot) == 1
    (reply,) = [m for m in cards(sales) if m.reply_to_message_id == card.message_id]
    assert reply.text == text("lead-reminder", id=1, minutes=20)


async def test_the_claim_hook_is_called_once_for_the_winner(sales: Harness) -> None:
    """The CRM's `lead.claimed` event is wired here (workflow data ``on_lead_claimed``)."""
    seen: list[tuple[int, int | None]] = []

    async def hook(session: AsyncSession, lead: Lead) -> None:
        assert session.in_transaction()  # its writes commit with the claim
        seen.append((lead.id, lead.claimed_by))

    assert sales.app is not None
    sales.app.dp["on_lead_claimed"] = [hook]
    _, card = await new_lead(sales)
    await manager(sales, 902).click(text("btn-lead-claim"), message=card)
    await manager(sales, 900).press(claim_data(1), message=card)
    assert seen == [(1, 902)]
