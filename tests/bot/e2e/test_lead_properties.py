"""Properties of the quote form through the real bot on the sandbox (issue 19, "Done when"):

- a lead, once its contact is given, is stored whole and delivered to the sales chat exactly once,
  whatever its comment (any Unicode, up to Telegram's 4,096, HTML metacharacters) and however the
  sales chat fails meanwhile (refusals drawn at random before it answers);
- whatever a user types at each step of the form, no update fails.

One bot serves every example (a new user each); hypothesis draws the texts, bounded in number."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bot import leads as lead_texts
from bot import outbox
from bot.db.models import LEAD_SENT
from tests.bot.e2e.conftest import Harness, running_bot, text
from tests.bot.e2e.test_leads import SALES_CHAT, cards, leads, wait_leads

EXAMPLES = settings(
    max_examples=12,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
TELEGRAM_LIMIT = 4096
FAILURES = st.lists(
    st.sampled_from([(400, "Bad Request: chat not found"), (403, "Forbidden: bot was kicked"),
                     (500, None), (502, "Bad Gateway")]),
    max_size=3,
)  # fmt: skip


def within_limit(comment: str) -> str:
    """The text cut to Telegram's limit on a message (UTF-16 code units)."""
    while (excess := len(comment.encode("utf-16-le")) // 2 - TELEGRAM_LIMIT) > 0:
        comment = comment[: len(comment) - max(excess // 2, 1)]
    return comment


def sendable(comment: str) -> bool:
    """What Telegram delivers as a comment: some text, not a command."""
    stripped = comment.strip()
    return bool(stripped) and not stripped.startswith("/")


COMMENTS = (
    st.one_of(
        st.text(min_size=1, max_size=300),
        st.text(alphabet=st.sampled_from("<>&\"'; \n"), min_size=1, max_size=TELEGRAM_LIMIT),
        st.text(alphabet=st.characters(exclude_categories=("Cs",)), min_size=1000, max_size=TELEGRAM_LIMIT),
        st.builds(
            lambda c, n: c * n, st.sampled_from(["<", "&", "😀", "<b>", "&amp;"]), st.integers(1, 4096)
        ),
    )
    .map(within_limit)
    .filter(sendable)
)


@pytest.fixture
async def sales(tmp_path: Path, template_db: Path, monkeypatch: pytest.MonkeyPatch) -> AsyncIterator[Harness]:
    monkeypatch.setattr(outbox, "BACKOFF_BASE_S", 0.01)
    monkeypatch.setattr(outbox, "BACKOFF_MAX_S", 0.05)
    async with running_bot(tmp_path, template_db, sales_chat_id=SALES_CHAT) as h:
        h.sandbox.user(id=900, first_name="Manager").in_group(chat_id=SALES_CHAT, title="Sales")
        yield h


@EXAMPLES
@given(comment=COMMENTS, failures=FAILURES, lang=st.sampled_from(["ru", "en"]))
async def test_a_lead_is_stored_and_delivered_exactly_once(
    sales: Harness, comment: str, failures: list[tuple[int, str | None]], lang: str
) -> None:
    for code, description in failures:
        sales.sandbox.fail(code, description, methods=["sendMessage"], chat_id=SALES_CHAT, times=1)
    user = sales.user(language_code=lang)
    await user.send("/contact")
    await user.send("ann@example.com")
    await user.send(comment)
    rows = [r for r in await leads(sales) if r.telegram_id == user.id]
    assert len(rows) == 1, "stored"
    (lead,) = rows
    assert lead.comment == lead_texts.clean(comment)
    await wait_leads(sales, lambda rows: all(r.delivery_status == LEAD_SENT for r in rows), "delivered")
    title = text("lead-card-title", "ru", id=lead.id)
    delivered = [c for c in cards(sales) if (c.text or "").startswith(title + "\n")]
    assert len(delivered) == 1, "exactly once"
    assert text("error-generic", lang) not in [m.text for m in user.bot_messages()]


TYPED = st.one_of(
    st.text(max_size=200),
    st.sampled_from(["ann@example.com", "+7 916 123 45 67", "@", "a@b", "12", "/cancel", "/contact",
                     "хочу поговорить с менеджером", "llama 3.1 8b", "<b>", "&" * 3000]),
).filter(lambda t: bool(t.strip()))  # fmt: skip


@EXAMPLES
@given(at_contact=st.lists(TYPED, min_size=1, max_size=3), at_comment=TYPED)
async def test_whatever_is_typed_in_the_form_no_update_fails(
    sales: Harness, at_contact: list[str], at_comment: str
) -> None:
    user = sales.user(language_code="ru")
    await user.send("/contact")
    for typed in at_contact:
        await user.send(typed)
    await user.send(at_comment)
    answers = [m.text or "" for m in user.bot_messages()]
    assert text("error-generic") not in answers
    assert not [r for r in sales.sandbox.requests if r.error and r.chat_id == user.id]
