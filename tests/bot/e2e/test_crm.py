"""The CRM push (issue 23 item 1) through the real bot on the sandbox, against local fakes of the
generic webhook, Bitrix24 and amoCRM (tests/fake_crm.py): the request shapes the vendors document,
401 / 429 / 5xx / timeouts / an answer lost after the deal was made / a restart in the middle:
exactly one deal per lead, no lead lost, the admins told once, and the sales chat's card never waits
for a CRM."""

from __future__ import annotations

import asyncio
import hashlib
import hmac
import json
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest

from bot import outbox
from bot.callbacks import ClaimCB
from bot.crm import push
from bot.db import leads as lead_db
from bot.db.engine import create_engine, create_sessionmaker
from bot.db.models import CRM_SENT, CrmDelivery
from tests.bot.e2e.conftest import REPLY_TIMEOUT_S, Harness, running_bot, text
from tests.bot.e2e.test_leads import ADMIN, QUESTION, SALES_CHAT, admin_messages, wait_cards
from tests.fake_crm import FakeAmoCrm, FakeBitrix24, FakeWebhook
from tgsandbox import SandboxUser

SECRET = "whsec-test-5f2a"
TOKEN = "amo-long-lived-token"
TG_FIELD = "UF_CRM_TELEGRAM_ID"
TIMEOUT_S = 0.5


@pytest.fixture(autouse=True)
def fast(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(outbox, "BACKOFF_BASE_S", 0.05)
    monkeypatch.setattr(outbox, "BACKOFF_MAX_S", 0.1)
    monkeypatch.setattr(push, "CRM_TIMEOUT_S", TIMEOUT_S)


@asynccontextmanager
async def bot_with(tmp_path: Path, template_db: Path, **crm: Any) -> AsyncIterator[Harness]:
    async with running_bot(
        tmp_path, template_db, sales_chat_id=SALES_CHAT, admin_ids=frozenset({ADMIN}), **crm
    ) as h:
        h.sandbox.user(id=900, first_name="Manager").in_group(chat_id=SALES_CHAT, title="Sales")
        h.sandbox.user(id=ADMIN, first_name="Admin", language_code="ru")
        yield h


async def deliveries(h: Harness) -> list[CrmDelivery]:
    engine = create_engine(h.db_url)
    try:
        async with create_sessionmaker(engine)() as session:
            return await lead_db.crm_deliveries(session)
    finally:
        await engine.dispose()


async def wait_deliveries(
    h: Harness, ok: Callable[[list[CrmDelivery]], bool], what: str
) -> list[CrmDelivery]:
    loop = asyncio.get_running_loop()
    deadline = loop.time() + REPLY_TIMEOUT_S
    while not ok(rows := await deliveries(h)):
        assert loop.time() < deadline, f"timed out waiting for {what}: {[vars(r) for r in rows]}"
        await asyncio.sleep(0.02)
    return rows


def all_sent(n: int) -> Callable[[list[CrmDelivery]], bool]:
    return lambda rows: len(rows) == n and all(r.status == CRM_SENT for r in rows)


async def quote_from_a_result(user: SandboxUser, contact: str, comment: str = "Срочно") -> None:
    """/start with a source, a question, the quote button, a contact (typed; else the @username)."""
    await user.send("/start webinar_7")
    await user.send(QUESTION["ru"])
    await user.click(text("btn-quote"))
    if contact.startswith("@"):
        await user.click(text("btn-lead-username", username=contact[1:]))
    else:
        await user.send(contact)
    await user.send(comment)


# ---------------------------------------------------------------- the generic webhook


async def test_the_webhook_gets_one_signed_event_per_lead_through_refusals(
    tmp_path: Path, template_db: Path
) -> None:
    async with FakeWebhook(SECRET) as hook:
        hook.fail(401, body={"error": "unauthorized"})
        hook.fail(429, headers={"Retry-After": "1"})
        hook.fail(503)
        hook.hang()
        hook.lose_answer()  # the receiver took it; the bot heard a 500 and retries with the same key
        async with bot_with(tmp_path, template_db, crm_webhook_url=hook.url, crm_webhook_secret=SECRET) as h:
            user = h.user(username="ann_k", first_name="Ann")
            await quote_from_a_result(user, "@ann_k")
            await wait_cards(h, 1)  # the card does not wait for the CRM
            (row,) = await wait_deliveries(h, all_sent(1), "the webhook took the lead")
            assert row.attempts == 6 and row.alerted_at is not None
            (alert,) = admin_messages(h, ADMIN)
            assert "webhook" in (alert.text or "") and "#1" in (alert.text or "")
    assert hook.violations == []
    assert len(hook.deals) == 1 and hook.repeats == 1
    keys = {r.headers["Idempotency-Key"] for r in hook.requests}
    assert keys == {"gpufit-1-" + row.idempotency_key.split("-")[2]}
    assert hook.requests[2].at - hook.requests[1].at >= 1.0  # Retry-After respected
    (body,) = hook.deals.values()
    raw = hook.requests[-1].raw
    assert (
        hook.requests[-1].headers["X-GPUFit-Signature"]
        == "sha256=" + hmac.new(SECRET.encode(), raw, hashlib.sha256).hexdigest()
    )
    assert body["event"] == "lead.created" and body["lead_id"] == 1
    assert body["telegram_user_id"] == user.id and body["username"] == "ann_k"
    assert body["contact"] == {"kind": "telegram", "value": "@ann_k"} and body["comment"] == "Срочно"
    assert body["language"] == "ru" and body["source"] == "webinar_7"
    assert body["utm"] == {"utm_source": "telegram", "utm_medium": "bot", "utm_campaign": "webinar_7",
                           "utm_content": "rtx4090-48gb-x1"}  # fmt: skip
    assert body["configuration"]["model"] == "Llama 3.1 8B" and body["configuration"]["precision"] == "int4"
    assert body["configuration"]["workload"] == {"context_length": 32768, "concurrency": 4}
    assert body["recommendation"]["offer_id"] == "rtx4090-48gb-x1" and body["recommendation"]["cards"] == 1
    assert body["recommendation"]["price_per_hour"] == 149
    assert body["verdict"] == "fits" and body["total_bytes"] > 0
    assert body["title"] == "Инференс Llama 3.1 8B · 1× RTX 4090 48 GB · от 149 ₽/ч"
    print("webhook payload:", json.dumps(body, ensure_ascii=False, indent=1))


async def test_a_webhook_down_across_a_restart_loses_no_lead_and_alerts_once(
    tmp_path: Path, template_db: Path
) -> None:
    async with FakeWebhook() as hook:
        hook.down(502)
        async with bot_with(tmp_path, template_db, crm_webhook_url=hook.url) as h:
            first = h.user(username="first")
            await first.send("/contact")
            await first.send("+7 916 123 45 67")
            await first.click(text("btn-lead-skip"))
            await wait_cards(h, 1)
            await h.sandbox.wait_for(lambda: len(admin_messages(h, ADMIN)) == 1, "the admins told")
            await h.stop()  # a restart in the middle of the outage
            await h.start()
            second = h.user(username="second")
            await second.send("/contact")
            await second.send("second@example.com")
            await second.click(text("btn-lead-skip"))
            await wait_cards(h, 2)
            await wait_deliveries(
                h, lambda rows: len(rows) == 2 and rows[1].alerted_at is not None, "the second past the alert"
            )
            hook.up()
            rows = await wait_deliveries(h, all_sent(2), "both pushed")
            assert len(admin_messages(h, ADMIN)) == 1
    assert hook.violations == [] and hook.repeats == 0
    assert sorted(b["lead_id"] for b in hook.deals.values()) == [1, 2]
    assert {b["contact"]["kind"] for b in hook.deals.values()} == {"phone", "email"}
    assert all(r.attempts >= outbox.ALERT_AFTER_ATTEMPTS for r in rows)


# ---------------------------------------------------------------- Bitrix24


async def test_bitrix24_makes_one_lead_linked_to_the_known_contact(tmp_path: Path, template_db: Path) -> None:
    async with FakeBitrix24(TG_FIELD) as b24:
        contact = b24.add_contact(PHONE=[{"VALUE": "+79161234567", "VALUE_TYPE": "WORK"}])
        b24.fail(401)
        b24.passes(3)  # the look-ups of the second attempt
        b24.lose_answer()  # crm.lead.add made the lead; the bot heard a 500
        b24.fail(503)  # QUERY_LIMIT_EXCEEDED
        async with bot_with(
            tmp_path, template_db, bitrix24_webhook_url=b24.url, bitrix24_telegram_field=TG_FIELD
        ) as h:
            user = h.user(username="bob", first_name="Bob")
            earlier = b24.add_lead(TITLE="old", **{TG_FIELD: str(user.id)})
            await quote_from_a_result(user, "+7 (916) 123-45-67", "Нужен сервер на неделю")
            await wait_cards(h, 1)
            (row,) = await wait_deliveries(h, all_sent(1), "Bitrix24 took the lead")
            assert row.attempts == 4 and admin_messages(h, ADMIN) == []
    assert b24.violations == []
    made = [lead for lead in b24.leads.values() if lead.get("ORIGIN_ID")]
    assert len(made) == 1 and row.remote_id == str(max(b24.leads))
    (fields,) = made
    assert fields["CONTACT_ID"] == contact
    assert fields["PHONE"] == [{"VALUE": "+79161234567", "VALUE_TYPE": "WORK"}]
    assert fields["TITLE"] == "Инференс Llama 3.1 8B · 1× RTX 4090 48 GB · от 149 ₽/ч"
    assert fields["NAME"] == "Bob"
    assert fields["UTM_CAMPAIGN"] == "webinar_7" and fields["UTM_CONTENT"] == "rtx4090-48gb-x1"
    assert fields["SOURCE_ID"] == "OTHER" and "webinar_7" in fields["SOURCE_DESCRIPTION"]
    assert fields[TG_FIELD] == str(user.id) and fields["OPPORTUNITY"] == 149
    assert "Нужен сервер на неделю" in fields["COMMENTS"] and str(earlier) in fields["COMMENTS"]
    methods = [r.path.rsplit("/", 1)[1].removesuffix(".json") for r in b24.requests]
    assert methods[:5] == ["crm.lead.list", "crm.lead.list", "crm.duplicate.findbycomm", "crm.lead.list",
                           "crm.lead.add"]  # fmt: skip
    assert methods[-1] == "crm.lead.list"  # the last attempt found the lead the lost answer made
    for r in b24.requests:
        print("bitrix24", r.path.rsplit("/", 1)[1], json.dumps(r.body, ensure_ascii=False))


# ---------------------------------------------------------------- amoCRM


async def test_amocrm_makes_one_deal_through_a_timeout_a_lost_answer_and_a_restart(
    tmp_path: Path, template_db: Path
) -> None:
    async with FakeAmoCrm(TOKEN) as amo:
        email = {"field_code": "EMAIL", "values": [{"value": "carol@example.com", "enum_code": "WORK"}]}
        contact = amo.add_contact(name="Carol", custom_fields_values=[email])
        amo.fail(429, headers={"Retry-After": "1"})
        amo.hang()
        amo.passes(2)  # the look-ups of the third attempt
        amo.lose_answer()  # leads/complex made the deal; the bot heard a 500
        amo.down(401)
        async with bot_with(tmp_path, template_db, amocrm_domain=amo.base_url, amocrm_token=TOKEN) as h:
            user = h.user(username="carol", first_name="Carol")
            await quote_from_a_result(user, "carol@example.com")
            await wait_cards(h, 1)
            await h.sandbox.wait_for(lambda: len(admin_messages(h, ADMIN)) == 1, "the admins told")
            await h.stop()  # a restart while the token is refused
            amo.up()
            await h.start()
            (row,) = await wait_deliveries(h, all_sent(1), "amoCRM has the deal")
            assert len(admin_messages(h, ADMIN)) == 1
    assert amo.violations == []
    ((deal_id, deal),) = amo.leads.items()
    assert row.remote_id == str(deal_id) and deal["contact_id"] == contact
    assert deal["name"].startswith("Инференс Llama 3.1 8B · 1× RTX 4090 48 GB · от 149 ₽/ч · gpufit-1-")
    assert deal["price"] == 149 and deal["_embedded"]["contacts"] == [{"id": contact}]
    assert deal["_embedded"]["tags"] == [{"name": "tg:webinar_7"}, {"name": "GPU rtx4090-48gb"}]
    assert {r.headers["Authorization"] for r in amo.requests} == {f"Bearer {TOKEN}"}
    for r in amo.requests:
        print("amocrm", r.method, r.path, r.query, json.dumps(r.body, ensure_ascii=False))


# ---------------------------------------------------------------- a claim reaches the CRM


async def test_a_claim_and_the_users_answers_reach_the_webhook_once(
    tmp_path: Path, template_db: Path
) -> None:
    """ "✋ Беру" on the card: the webhook gets `lead.claimed` for that lead, with who took it, once
    (a second press by another manager changes nothing); the user's answers to the optional
    questions (when, how long) come as `lead.qualified`."""
    async with (
        FakeWebhook(SECRET) as hook,
        bot_with(tmp_path, template_db, crm_webhook_url=hook.url, crm_webhook_secret=SECRET) as h,
    ):
        user = h.user(username="ann_k", first_name="Ann")
        await quote_from_a_result(user, "@ann_k")
        (card,) = await wait_cards(h, 1)
        await wait_deliveries(h, all_sent(1), "lead.created taken")
        first = h.sandbox.user(id=900, first_name="Manager").in_group(chat_id=SALES_CHAT, title="Sales")
        second = h.sandbox.user(id=902, first_name="Olga").in_group(chat_id=SALES_CHAT, title="Sales")
        await first.click(text("btn-lead-claim"), message=card)
        rows = await wait_deliveries(h, all_sent(2), "lead.claimed taken")
        again = await second.press(ClaimCB(lead_id=rows[0].lead_id).pack(), message=card)  # an old client
        assert again.show_alert  # told who has it
        assert len(await deliveries(h)) == 2, "a second press makes no second event"
        # the user answers the optional questions: the webhook hears them once, as lead.qualified
        ask = user.last_message()
        await user.click(text("btn-need-when-today"), message=ask)
        await user.click(text("btn-need-for-months"), message=ask)
        await wait_deliveries(h, all_sent(3), "lead.qualified taken")
    assert hook.violations == []
    events = {body["event"]: body for body in hook.deals.values()}
    created, claimed = events["lead.created"], events["lead.claimed"]
    assert claimed["lead_id"] == created["lead_id"] == rows[0].lead_id
    assert claimed["event_data"]["claimed_by"] == "Manager"
    qualified = events["lead.qualified"]
    assert qualified["qualification"] == {"when": "today", "for": "months"}
    assert qualified["event_data"] == {"when": "today", "for": "months"}
    assert created["kind"] == "quote" and created["reservation"] is None
    assert len(hook.deals) == 3 and hook.repeats == 0
