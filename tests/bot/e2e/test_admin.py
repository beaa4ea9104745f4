"""Admin commands (ADMIN_IDS) through the real bot on the sandbox: /stats, /export, /link, /offers, the
admins' own command menu; and for everyone else the unknown-command answer, nothing more."""

from __future__ import annotations

import csv
import io
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import select

from bot import dialog, pictures
from bot.csv_export import CSV_DELIMITER
from bot.db import stats
from bot.db.engine import create_engine, create_sessionmaker
from bot.db.models import (
    DIALOG_COMPLETED,
    LEAD_FAILED,
    LEAD_PENDING,
    LEAD_SENT,
    DialogSession,
    Lead,
    User,
    utc_now,
)
from bot.handlers.admin import ADMIN_COMMANDS
from bot.handlers.commands import COMMANDS
from core.catalogue.catalog import default_catalog
from core.language.cards import short_gpu_name
from tests.bot.e2e.conftest import (
    ADMIN_ID,
    Harness,
    assert_no_failed_calls,
    running_bot,
    text,
)
from tgsandbox import SandboxUser
from tgsandbox.params import Upload

QUESTION = "llama 3.1 8b int8 8k"


def admin_of(h: Harness, lang: str = "en") -> SandboxUser:
    return h.sandbox.user(id=ADMIN_ID, first_name="Boss", username="boss", language_code=lang)


async def write(h: Harness, *rows: Any) -> None:
    engine = create_engine(h.db_url)
    try:
        async with create_sessionmaker(engine)() as session, session.begin():
            session.add_all(rows)
    finally:
        await engine.dispose()


async def execute(h: Harness, statement: Any) -> None:
    engine = create_engine(h.db_url)
    try:
        async with create_sessionmaker(engine)() as session, session.begin():
            await session.execute(statement)
    finally:
        await engine.dispose()


async def rows_of(h: Harness, model: Any) -> list[Any]:
    engine = create_engine(h.db_url)
    try:
        async with create_sessionmaker(engine)() as session:
            return list(await session.scalars(select(model).order_by(model.id)))
    finally:
        await engine.dispose()


def lead(telegram_id: int, source: str | None, dialog_id: int | None, status: str, **extra: Any) -> Lead:
    values: dict[str, Any] = {
        "telegram_id": telegram_id,
        "contact_kind": "username",
        "contact": "@someone",
        "comment": None,
        "source": source,
        "dialog_id": dialog_id,
        "request": {"task": "inference"},
        "summary": {"model": "Llama 3.1 8B", "task": "inference"},
        "dedup_key": f"k{telegram_id}{status}",
        "delivery_status": status,
        "attempts": 0,
    }
    values.update(extra)
    return Lead(**values)


async def funnel_users(h: Harness) -> dict[str, SandboxUser]:
    """Users by links a, b, c and without one: a1, a2 complete a dialog; b1 starts one and stops at the
    task question's answer; c1 completes one; n1 (no link) completes one."""
    users = {name: h.user(language_code="en") for name in ("a1", "a2", "b1", "c1", "n1")}
    for name, user in users.items():
        source = name[0]
        await user.send("/start" if source == "n" else f"/start {source}")
        if name == "b1":
            await user.click(text("task-inference", "en"))
        else:
            await user.send(QUESTION)
    return users


def line_with(messages: list[Any], start: str) -> str:
    lines = [line for m in messages for line in (m.text or "").splitlines() if line.startswith(start)]
    assert len(lines) == 1, (start, [m.text for m in messages])
    return lines[0]


async def test_stats_counts_three_link_sources_as_the_rows_say(admin_harness: Harness) -> None:
    h = admin_harness
    users = await funnel_users(h)
    dialogs = {name: await h.dialogs(u.id) for name, u in users.items()}
    completed = {name: [d for d in ds if d.status == DIALOG_COMPLETED] for name, ds in dialogs.items()}
    assert {name: len(ds) for name, ds in completed.items()} == {"a1": 1, "a2": 1, "b1": 0, "c1": 1, "n1": 1}
    assert len(dialogs["b1"]) == 1  # started, not completed
    gpu_id = stats.gpu_of(completed["a1"][0].result_summary["recommendation"])
    assert gpu_id is not None
    gpu = short_gpu_name(default_catalog().gpus[gpu_id].name)  # "RTX 4090 48 GB"

    # leads: a1 delivered, a2 failed, c1 pending; and one of c1 from 10 days ago
    a1, a2, c1 = users["a1"].id, users["a2"].id, users["c1"].id
    await write(
        h,
        lead(a1, "a", completed["a1"][0].id, LEAD_SENT),
        lead(a2, "a", completed["a2"][0].id, LEAD_FAILED, last_error="Bad Request: chat not found"),
        lead(c1, "c", completed["c1"][0].id, LEAD_PENDING),
        lead(c1, "c", None, LEAD_SENT, created_at=utc_now() - timedelta(days=10), request={}, summary={}),
    )
    # and a user of link c who came 40 days ago and never asked anything
    await write(h, User(telegram_id=4242, source="c", created_at=utc_now() - timedelta(days=40)))

    admin = admin_of(h)
    replies = await admin.send("/stats")
    assert [r.text.splitlines()[0] for r in replies] == [
        text("admin-stats-7d", "en"),
        text("admin-stats-30d", "en"),
        text("admin-stats-all", "en"),
        text("admin-stats-weeks", "en", weeks=stats.WEEKS_SHOWN),
    ]
    week, month, ever, _ = replies

    def row(key: str, name: str, **counts: Any) -> str:
        args = {"users": 0, "started": 0, "completed": 0, "leads": 0, **counts}
        conversion = f"{round(args['leads'] / args['completed'] * 100)}%" if args["completed"] else "—"
        return text(key, "en", name=name, conversion=conversion, **args)

    # the admin's own /stats made them a user without a link, counted too
    total = dict(users=6, started=5, completed=4, leads=3, pending=1, failed=1, conversion="75%")
    assert line_with([week], "Users:") + "\n" + line_with([week], "Leads:") == text(
        "admin-stats-total", "en", **total
    )
    for message, old_lead, old_user in ((week, 0, 0), (month, 1, 0), (ever, 1, 1)):
        source_row = "admin-stats-row-source"
        assert line_with([message], "• a:") == row(source_row, "a", users=2, started=2, completed=2, leads=2)
        assert line_with([message], "• b:") == row(source_row, "b", users=1, started=1)
        assert line_with([message], "• c:") == row(
            source_row, "c", users=1 + old_user, started=1, completed=1, leads=1 + old_lead
        )
        no_link = text("admin-stats-no-link", "en")
        assert line_with([message], f"• {no_link}:") == row(
            source_row, no_link, users=2, started=1, completed=1
        )
        task = text("task-inference", "en")
        assert line_with([message], f"• {task}:") == row(
            "admin-stats-row-task", task, started=5, completed=4, leads=3
        )
        assert line_with([message], f"• {gpu}:") == row("admin-stats-row-gpu", gpu, completed=4, leads=3)
        if old_lead:  # the old lead came before any answer
            no_task = text("admin-stats-no-task", "en")
            assert line_with([message], f"• {no_task}:") == row("admin-stats-row-task", no_task, leads=1)
            no_gpu = text("admin-stats-no-gpu", "en")
            assert line_with([message], f"• {no_gpu}:") == row("admin-stats-row-gpu", no_gpu, leads=1)
    assert (
        line_with([ever], "Users:") == text("admin-stats-total", "en", **{**total, "users": 7}).split("\n")[0]
    )
    assert_no_failed_calls(h.sandbox)


async def test_stats_shows_the_pictures_skipped_under_load(
    tmp_path: Path, template_db: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 19, item 9: under load most pictures were skipped (by design) and nothing said so; /stats
    now counts them (this process, since its start)."""
    monkeypatch.setattr(dialog, "PICTURES", pictures.Pictures(max_pending=0))  # always busy: skips
    async with running_bot(tmp_path, template_db, admin_ids=frozenset({ADMIN_ID}), answer_pictures=True) as h:
        asker = h.user(language_code="en")
        for question in (QUESTION, "qwen 2.5 7b fp16"):
            (answer,) = await asker.send(question)  # the text answer, no picture after it
            assert not answer.has_photo
        replies = await admin_of(h).send("/stats")
    await dialog.PICTURES.close()
    assert len(replies) == 4  # 7 days, 30 days, all time, per week
    assert (replies[2].text or "").splitlines()[-1] == text(
        "admin-stats-pictures", "en", sent=0, skipped=2, failed=0
    )
    assert text("admin-stats-pictures", "en", sent=0, skipped=2, failed=0).split(":")[0] not in (
        replies[0].text or ""
    )  # one line, in the last message


def document(h: Harness, name: str) -> bytes:
    uploads = [f for f in h.sandbox.telegram.files.values() if isinstance(f, Upload) and f.filename == name]
    assert len(uploads) == 1, name
    return uploads[0].content


def read_csv(data: bytes) -> list[dict[str, str]]:
    assert data.startswith(b"\xef\xbb\xbf"), "UTF-8 with BOM"
    rows = list(csv.reader(io.StringIO(data.decode("utf-8-sig"), newline=""), delimiter=CSV_DELIMITER))
    header, *body = rows
    return [dict(zip(header, values, strict=True)) for values in body]


def when(value: Any) -> str:
    return value.strftime("%Y-%m-%d %H:%M:%S") if value else ""


async def test_export_sends_three_csv_documents_column_by_column(admin_harness: Harness) -> None:
    h = admin_harness
    ann = h.user(language_code="ru", first_name="Анна", username="ann")
    await ann.send("/start habr")
    await ann.send(QUESTION)
    (dialog,) = await h.dialogs(ann.id)
    await write(
        h,
        lead(
            ann.id,
            "habr",
            dialog.id,
            LEAD_FAILED,
            contact_kind="phone",
            contact="+7 999 123-45-67",
            comment='=HYPERLINK("x"); «срочно», много\nстрок',
            attempts=5,
            last_error="Forbidden",
            summary={
                "model": "Llama 3.1 8B",
                "task": "inference",
                "precision": "int8",
                "recommended_config": "1x rtx4090-48gb",
                "recommended_offer_id": "rtx4090-48gb-x1",
                "price_per_hour": 149,
                "currency": "RUB",
                "price_text": "от 149 ₽/ч",
                "total_bytes": 123,
                "verdict": "fits",
            },
        ),
    )
    admin = admin_of(h, "ru")
    replies = await admin.send("/export")
    assert [r.has_document for r in replies] == [True, True, True]
    assert [r.text for r in replies] == [
        text("admin-export-caption", "ru", file="users.csv", rows=2),
        text("admin-export-caption", "ru", file="dialogs.csv", rows=1),
        text("admin-export-caption", "ru", file="leads.csv", rows=1),
    ]

    users = read_csv(document(h, "users.csv"))
    assert list(users[0]) == list(stats.USER_COLUMNS)
    db_users = {u.telegram_id: u for u in await rows_of(h, User)}
    assert [int(u["telegram_id"]) for u in users] == [ann.id, ADMIN_ID]
    u, db = users[0], db_users[ann.id]
    assert (u["username"], u["first_name"], u["language"], u["telegram_language"], u["source"]) == (
        "ann",
        "Анна",
        "",
        "ru",
        "habr",
    )
    assert (u["created_at"], u["last_seen_at"]) == (when(db.created_at), when(db.last_seen_at))
    assert users[1]["source"] == ""
    assert (u["referred_by"], u["currency"]) == ("", "")

    (d,) = read_csv(document(h, "dialogs.csv"))
    assert list(d) == list(stats.DIALOG_COLUMNS)
    (db_dialog,) = await rows_of(h, DialogSession)
    summary = db_dialog.result_summary
    assert d == {
        "id": str(db_dialog.id),
        "telegram_id": str(ann.id),
        "user_source": "habr",
        "source": "habr",
        "task": "inference",
        "status": "completed",
        "model": summary["model"],
        "recommendation": summary["recommendation"],
        "price_per_hour": str(summary["price_per_hour"] or ""),
        "currency": summary["currency"] or "",
        "verdict": db_dialog.verdict or "",
        "offer_id": db_dialog.offer_id or "",
        "created_at": when(db_dialog.created_at),
        "completed_at": when(db_dialog.completed_at),
    }

    (row,) = read_csv(document(h, "leads.csv"))
    assert list(row) == list(stats.LEAD_COLUMNS)
    (db_lead,) = await rows_of(h, Lead)
    assert row == {
        "id": str(db_lead.id),
        "telegram_id": str(ann.id),
        "username": "ann",
        "created_at": when(db_lead.created_at),
        "source": "habr",
        "contact_kind": "phone",
        "contact": "'+7 999 123-45-67",  # a sum to Excel (OWASP: quote every cell starting with +)
        "comment": '\'=HYPERLINK("x"); «срочно», много\nстрок',  # not a formula to Excel
        "dialog_id": str(dialog.id),
        "task": "inference",
        "model": "Llama 3.1 8B",
        "precision": "int8",
        "recommendation": "1x rtx4090-48gb",
        "offer_id": "rtx4090-48gb-x1",
        "price_per_hour": "149",
        "currency": "RUB",
        "price": "от 149 ₽/ч",
        "total_bytes": "123",
        "verdict": "fits",
        "delivery_status": "failed",
        "attempts": "5",
        "last_error": "Forbidden",
        "sent_at": "",
        "claimed_by": "",
        "claimed_by_name": "",
        "claimed_at": "",
        "minutes_to_claim": "",
        "need_when": "",
        "need_for": "",
    }
    assert_no_failed_calls(h.sandbox)


async def test_link_makes_a_start_link_and_counts_who_came_by_it(admin_harness: Harness) -> None:
    h = admin_harness
    for _ in range(2):
        await h.user().send("/start spring_sale-2025")
    admin = admin_of(h)
    (reply,) = await admin.send("/link spring_sale-2025")
    link = f"https://t.me/{h.sandbox.bot_user.username}?start=spring_sale-2025"
    assert reply.text == text("admin-link", "en", source="spring_sale-2025", link=link, users=2)
    (reply,) = await admin.send("/link fresh")
    assert reply.text == text(
        "admin-link", "en", source="fresh", link=link.replace("spring_sale-2025", "fresh"), users=0
    )
    for bad in ("spring sale", "весна", "x" * 65, "a&b<c>"):
        (reply,) = await admin.send(f"/link {bad}")
        assert reply.text == text("admin-link-invalid", "en", source="SOURCE").replace("SOURCE", bad), bad
    (reply,) = await admin.send("/link")
    assert reply.text == text("admin-link-usage", "en")
    assert_no_failed_calls(h.sandbox)


def headline(message: Any) -> str:
    """The answer's first line: the verdict on the recommended configuration, with its price."""
    return str(message.text).splitlines()[0]


async def test_offers_reload_validates_before_it_replaces(admin_harness: Harness) -> None:
    h = admin_harness
    offers = h.settings.offers_file
    assert offers is not None
    admin = admin_of(h)
    (listing,) = await admin.send("/offers")
    assert listing.text is not None
    assert listing.text.splitlines()[1].startswith("• rtx4090-48gb-x1: ")
    asker = h.user(language_code="en")
    (before,) = await asker.send(QUESTION)
    assert "RTX 4090" in headline(before)

    # a bad file: the offers in force stay, the admin is told which row is wrong
    good = offers.read_text()
    offers.write_text(good.replace('gpu = "rtx4090-48gb"', 'gpu = "rtx9999"', 1))
    (reply,) = await admin.send("/offers reload")
    assert reply.text is not None
    assert reply.text.startswith(text("admin-offers-bad", "en", error="").splitlines()[0])
    assert "row 1 (id='rtx4090-48gb-x1')" in reply.text and "unknown gpu 'rtx9999'" in reply.text
    (again,) = await admin.send("/offers")
    assert again.text == listing.text
    (same,) = await asker.send(QUESTION)
    assert headline(same) == headline(before)  # the same offer recommended

    # a good file with only an H100 server: the next answers recommend it
    offers.write_text(
        '[[offer]]\nid = "h100-x1"\ngpu = "h100-sxm"\ncount = 1\nprice_per_hour = 300\ncurrency = "RUB"\n'
        'url = "https://example.com/h100"\n'
    )
    replies = await admin.send("/offers reload")
    assert replies[0].text == text("admin-offers-reloaded", "en", file=str(offers))
    assert replies[1].text is not None and "• h100-x1: " in replies[1].text
    assert len(replies[1].text.splitlines()) == 4  # the title, the one offer, the hints (reload, on/off)
    (after,) = await asker.send(QUESTION)
    assert "H100" in headline(after) and "RTX 4090" not in headline(after)
    assert_no_failed_calls(h.sandbox)


@pytest.mark.parametrize(
    ("value", "absurd", "says"),
    [
        ("price_per_hour = 149", "price_per_hour = 1e300", "row 1 (id='rtx4090-48gb-x1'): price_per_hour: "),
        ("gpu-rent/rtx4090-48gb-x2", "gpu rent", "row 2 (id='rtx4090-48gb-x2'): url: "),
        ('"a100-80gb"\ncount = 1', '"a100-80gb"\ncount = 0', "row 4 (id='a100-80gb-x1'): count: "),
        (None, None, "not UTF-8 text"),
    ],
)
async def test_offers_reload_refuses_an_absurd_value_and_keeps_answering(
    admin_harness: Harness, value: str | None, absurd: str | None, says: str
) -> None:
    """Issue 19, item 4: `price_per_hour = 1e300` was reloaded ("✅") and then broke every answer."""
    h = admin_harness
    offers = h.settings.offers_file
    assert offers is not None
    admin = admin_of(h)
    asker = h.user(language_code="en")
    (before,) = await asker.send(QUESTION)
    good = offers.read_text(encoding="utf-8")
    if value is None or absurd is None:  # a comment added by an editor saving in cp1251
        offers.write_bytes("# Предложения\n".encode("cp1251") + good.encode("utf-8"))
    else:
        assert value in good
        offers.write_text(good.replace(value, absurd, 1), encoding="utf-8")
    (reply,) = await admin.send("/offers reload")
    assert reply.text is not None
    assert reply.text.startswith(text("admin-offers-bad", "en", error="").splitlines()[0])
    assert says in reply.text and str(offers) in reply.text
    (same,) = await asker.send(QUESTION)
    assert headline(same) == headline(before)  # the offers in force stay, and answers go on
    assert_no_failed_calls(h.sandbox)


async def test_offers_reload_without_offers_file(harness: Harness) -> None:
    harness.settings = harness.settings.model_copy(update={"admin_ids": frozenset({ADMIN_ID})})
    await harness.restart()
    admin = admin_of(harness)
    (reply,) = await admin.send("/offers reload")
    assert reply.text == text("admin-offers-no-file", "en")
    (listing,) = await admin.send("/offers")
    assert text("admin-offers-builtin", "en") in (listing.text or "")


@pytest.mark.parametrize("state", ["idle", "in a dialog"])
async def test_others_get_the_unknown_command_answer(admin_harness: Harness, state: str) -> None:
    h = admin_harness
    user = h.user(language_code="en")
    if state == "in a dialog":
        await user.send("/start")

    def seen(replies: list[Any]) -> list[tuple[str | None, list[Any], bool]]:
        return [(r.text, r.buttons, r.has_document) for r in replies]

    unknown = seen(await user.send("/nosuchcommand"))
    assert unknown
    for command in ("/stats", "/export", "/link habr", "/link", "/offers", "/offers reload"):
        assert seen(await user.send(command)) == unknown, command
    assert not h.sandbox.sent("sendDocument")
    assert all("t.me/" not in (m.text or "") for m in user.bot_messages())


async def test_admins_get_their_own_command_menu(admin_harness: Harness) -> None:
    h = admin_harness
    chat = {"type": "chat", "chat_id": ADMIN_ID}
    # set at start, default menus first, then each admin's
    await h.sandbox.wait_for(lambda: bool(h.sandbox.commands(chat, "")), "the admin's command menu")
    everyday = [c["command"] for c in h.sandbox.commands(None, "en")]
    assert everyday == list(COMMANDS)
    for lang in ("ru", "en", ""):
        menu = h.sandbox.commands(chat, lang)
        assert [c["command"] for c in menu] == [*COMMANDS, *ADMIN_COMMANDS], lang
    assert h.sandbox.commands(chat, "en")[-2]["description"] == text("cmd-offers", "en")
    assert h.sandbox.commands(chat, "en")[-1]["description"] == text("cmd-measurements", "en")
    assert h.sandbox.commands({"type": "chat", "chat_id": ADMIN_ID + 1}, "en") == []
    scopes = [r.params.get("scope") for r in h.sandbox.requests if r.method == "setMyCommands"]
    assert {s["type"] for s in scopes if s} <= {"default", "chat"}
    assert {s["chat_id"] for s in scopes if s and s["type"] == "chat"} == {ADMIN_ID}


async def test_a_removed_admin_is_an_unknown_user_again(admin_harness: Harness) -> None:
    h = admin_harness
    h.settings = h.settings.model_copy(update={"admin_ids": frozenset()})
    await h.restart()
    former = admin_of(h)
    unknown = [r.text for r in await former.send("/nosuchcommand")]
    assert [r.text for r in await former.send("/stats")] == unknown
