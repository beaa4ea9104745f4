"""The sales chat's HTML card: who, how to reach them, what they asked, when; the follow-ups that
joined it as notes; its status lines (the qualification answers, who claimed it) and "Беру" under it
while nobody has. Everything the user or the catalogue wrote is escaped."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from html import escape
from typing import Any

from aiogram.types import InlineKeyboardButton, InlineKeyboardMarkup

from bot.callbacks import ClaimCB
from bot.leads.contacts import Contact
from bot.leads.texts import MESSAGE_LIMIT, Translate, clip, render, shown_length

MAX_COMMENT = 1000
"""Characters of a comment the card and the confirmation show (the lead row keeps all of it)."""
MAX_NOTE_COMMENT = 300
"""Characters of a follow-up's comment its note on the card shows."""


@dataclass(frozen=True)
class Who:
    telegram_id: int
    first_name: str | None
    username: str | None
    language: str | None
    source: str | None


def card(
    tr: Translate,
    *,
    lead_id: int,
    who: Who,
    contact: Contact,
    comment: str | None,
    summary: Mapping[str, Any],
    created_at: datetime,
) -> str:
    """The sales chat's HTML card: who, how to reach them, what they asked, when. Everything the user
    or the catalogue wrote is escaped and put in outside Fluent (`render`); a long comment is cut so
    the card fits a message."""
    shown = clip(comment, MAX_COMMENT) if comment else None
    text = _card(tr, lead_id, who, contact, shown, summary, created_at)
    excess = shown_length(text) - MESSAGE_LIMIT
    if excess > 0 and shown:  # emoji count twice in UTF-16
        shown = clip(shown, max(len(shown) - excess - 1, 1))
        text = _card(tr, lead_id, who, contact, shown, summary, created_at)
    return text


def _card(
    tr: Translate,
    lead_id: int,
    who: Who,
    contact: Contact,
    comment: str | None,
    summary: Mapping[str, Any],
    created_at: datetime,
) -> str:
    def e(value: Any) -> str:
        return escape(str(value), quote=False)

    lines = [render(tr, "lead-card-title", id=lead_id)]
    if reservation := summary.get("reservation"):  # a hold request (bot.handlers.leads): said first
        hold = e(reservation.get("hold") or "—")
        lines.append(render(tr, "lead-card-reservation", offer=e(reservation.get("offer_id")), hold=hold))
    lines += [
        render(
            tr,
            "lead-card-who",
            name=e(who.first_name or "—"),
            username=f"@{e(who.username)}" if who.username else "—",
            link=f'<a href="tg://user?id={who.telegram_id}">{who.telegram_id}</a>',
            language=e(who.language or "—"),
            source=e(who.source or "—"),
        ),
        render(tr, "lead-card-contact", kind=tr(f"lead-kind-{contact.kind}"), contact=e(contact.value)),
    ]
    if comment:
        lines.append(render(tr, "lead-card-comment", comment=e(comment)))
    if summary.get("headline"):
        lines.append(render(tr, "lead-card-config", config=e(summary["headline"])))
        lines.append(render(tr, "lead-card-answer", answer=e(summary.get("lead_line", ""))))
        if summary.get("recommended_text"):
            lines.append(
                render(
                    tr,
                    "lead-card-recommended",
                    config=e(summary["recommended_text"]),
                    price=e(summary.get("price_text") or "—"),
                    offer=e(summary.get("recommended_offer_id") or "—"),
                )
            )
    else:
        lines.append(tr("lead-card-no-config"))
    lines.append(render(tr, "lead-card-when", when=created_at.strftime("%Y-%m-%d %H:%M UTC")))
    return "\n".join(lines)


def plain_card(lead_id: int, contact: Contact, comment: str | None) -> str:
    """The card when the texts could not make one (never expected): the id, the contact and the
    comment, in no language, so the lead still reaches the sales chat."""
    lines = [f"📩 #{lead_id}", f"📞 {escape(contact.value, quote=False)}"]
    if comment:
        lines.append(f"💬 {escape(clip(comment, MAX_COMMENT), quote=False)}")
    return "\n".join(lines)


def note(tr: Translate, *, contact: Contact, comment: str | None, headline: str | None, at: datetime) -> str:
    """A follow-up joining a card (the user's cap of cards was reached): when, and what is new."""
    parts = [escape(f"{contact.value}", quote=False)]
    if headline:
        parts.append(escape(headline, quote=False))
    if comment:
        parts.append(escape(clip(comment, MAX_NOTE_COMMENT), quote=False))
    return render(tr, "lead-card-note", when=at.strftime("%H:%M UTC"), what=" · ".join(parts))


def with_notes(card: str, notes: list[str]) -> str:
    """The card and its notes, as many of the latest notes as fit a message (the others counted)."""
    kept: list[str] = []
    room = MESSAGE_LIMIT - shown_length(card) - 2
    for line in reversed(notes):
        size = shown_length(line) + 1
        if size > room - 12:  # what the "… +N" line takes
            break
        kept.insert(0, line)
        room -= size
    hidden = len(notes) - len(kept)
    lines = [card, ""] if notes else [card]
    if hidden:
        lines.append(f"➕ … (+{hidden})")
    return "\n".join(lines + kept)


@dataclass(frozen=True)
class Status:
    """What the card shows beyond what the lead was written with: the qualification answers and who
    claimed it (bot.db.models.Lead's columns of the same names)."""

    created_at: datetime
    need_when: str | None = None
    need_for: str | None = None
    claimed_by_name: str | None = None
    claimed_at: datetime | None = None


def minutes_between(start: datetime, end: datetime) -> int:
    return max(int((end - start).total_seconds() // 60), 0)


def status_lines(tr: Translate, status: Status) -> list[str]:
    """The card's lines for the qualification answers and the claim (none while there are neither)."""
    lines = []
    if status.need_when or status.need_for:
        lines.append(
            tr(
                "lead-card-need",
                when=tr(f"need-when-{status.need_when}") if status.need_when else "—",
                duration=tr(f"need-for-{status.need_for}") if status.need_for else "—",
            )
        )
    if status.claimed_by_name and status.claimed_at is not None:
        lines.append(
            render(
                tr,
                "lead-card-claimed",
                name=escape(status.claimed_by_name, quote=False),
                at=status.claimed_at.strftime("%H:%M UTC"),
                minutes=minutes_between(status.created_at, status.claimed_at),
            )
        )
    return lines


def full_card(tr: Translate | None, card: str, notes: list[str], status: Status) -> str:
    """The card as the sales chat shows it: as written, its status lines, its notes."""
    extra = status_lines(tr, status) if tr is not None else []
    return with_notes("\n".join([card, *extra]), notes)


def claim_keyboard(tr: Translate | None, lead_id: int, status: Status) -> InlineKeyboardMarkup | None:
    """ "Беру" under a card nobody claimed; None once claimed (the card names who has it)."""
    if status.claimed_by_name is not None:
        return None
    label = tr("btn-lead-claim") if tr is not None else "✋"
    return InlineKeyboardMarkup(
        inline_keyboard=[[InlineKeyboardButton(text=label, callback_data=ClaimCB(lead_id=lead_id).pack())]]
    )
