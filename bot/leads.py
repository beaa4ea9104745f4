"""Quote requests (leads): what a lead carries, how a contact is read, which free text asks for one,
and the HTML card the sales chat gets. No Telegram calls and no database here (bot.db.leads stores,
bot.outbox delivers, bot.handlers.leads asks)."""

from __future__ import annotations

import hashlib
import json
import re
import tomllib
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import datetime
from functools import lru_cache
from html import escape, unescape
from pathlib import Path
from typing import Any

from aiogram.types import InlineKeyboardButton, InlineKeyboardMarkup

from bot.callbacks import ClaimCB
from bot.keyboards import shown_offer
from core.catalogue.catalog import Catalog
from core.contract import Request, Result
from core.errors import CoreError
from core.language.answer import build_answer, headline_settings
from core.language.cards import config_text, price_of
from core.parse import comparison, comparison_follow_up, follow_up, understand

INTENTS_FILE = Path(__file__).parent / "data" / "quote_intents.toml"
MAX_COMMENT = 1000
"""Characters of a comment the card and the confirmation show (the lead row keeps all of it)."""
MAX_NOTE_COMMENT = 300
"""Characters of a follow-up's comment its note on the card shows."""
MESSAGE_LIMIT = 4096
"""Telegram's limit on a message's text, in UTF-16 code units of the text as shown (tags parsed)."""
CUT = "…"
MAX_CONTACT = 254  # an e-mail address's longest legal length
EMAIL = re.compile(
    r"^[^@\s<>\"']{1,64}@[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?(?:\.[A-Za-z0-9-]{1,63})+$"
)
PHONE_CHARS = re.compile(r"^\+?[\d\s().-]{7,25}$")
WORD = re.compile(r"[a-zа-я0-9]+(?:-[a-zа-я0-9]+)*")
INTENT_ENTRY = re.compile(r"^[a-zа-я]+(?:-[a-zа-я]+)*(?: [a-zа-я]+(?:-[a-zа-я]+)*){0,3}$")
WORKLOAD_FIELDS = ("context_length", "concurrency", "batch_size", "seq_len", "resolution", "images", "frames")

Translate = Callable[..., str]
"""`translate(key, **args)` in the sales chat's language."""


# ---------------------------------------------------------------- texts of any length


_SLOT = re.compile("\x00([0-9]+)\x00")


def render(tr: Translate, key: str, **args: Any) -> str:
    """``tr(key, **args)`` with every text argument put in after Fluent formatted the sentence.

    fluent.runtime refuses a placeable longer than 2,500 characters (resolver.MAX_PART_LENGTH) and
    an escaped comment grows up to five times (``&`` is ``&amp;``): a long paste would fail the lead.
    Fluent gets a short slot for each text and never sees the text itself (numbers go through it,
    so plural forms still work)."""
    texts: list[str] = []
    slots: dict[str, Any] = {}
    for name, value in args.items():
        if isinstance(value, str):
            slots[name] = f"\x00{len(texts)}\x00"
            texts.append(value)
        else:
            slots[name] = value
    return _SLOT.sub(lambda m: texts[int(m.group(1))], tr(key, **slots))


def clean(text: str) -> str:
    """User text as stored: no NUL (PostgreSQL's text refuses it), no surrounding blanks."""
    return text.replace("\x00", "").strip()


def clip(text: str, limit: int) -> str:
    """At most ``limit`` characters, the cut marked."""
    return text if len(text) <= limit else text[: max(limit - 1, 0)].rstrip() + CUT


def shown_length(html: str) -> int:
    """The length Telegram counts of an HTML text: tags dropped, entities read, in UTF-16 units."""
    return len(unescape(re.sub(r"<[^>]*>", "", html)).encode("utf-16-le")) // 2


# ---------------------------------------------------------------- free-text intents


def normalize(text: str) -> list[str]:
    return WORD.findall(text.lower().replace("ё", "е"))


def load_intents(path: Path = INTENTS_FILE) -> dict[str, list[list[str]]]:
    """The intent phrases per language, as word lists; ValueError naming the file and the entry."""
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, tomllib.TOMLDecodeError) as e:
        raise ValueError(f"{path}: {e}") from None
    if not data:
        raise ValueError(f"{path}: no intents")
    intents: dict[str, list[list[str]]] = {}
    for lang, entries in data.items():
        if not isinstance(entries, list) or not entries:
            raise ValueError(f"{path}: {lang} must be a non-empty list of phrases")
        seen: set[str] = set()
        for entry in entries:
            if not isinstance(entry, str) or not INTENT_ENTRY.match(entry.replace("ё", "е")):
                raise ValueError(f"{path}: {lang}: {entry!r} is not 1-4 lower-case words")
            if entry in seen:
                raise ValueError(f"{path}: {lang}: {entry!r} is listed twice")
            seen.add(entry)
        intents[lang] = [entry.replace("ё", "е").split() for entry in entries]
    return intents


INTENTS = load_intents()


def mentions_intent(text: str, intents: Mapping[str, list[list[str]]] = INTENTS) -> bool:
    """Whether the text has an intent phrase (any language): its words in a row, each a word's start."""
    return _intent_pattern(_frozen(intents)).search(" ".join(normalize(text))) is not None


def _frozen(intents: Mapping[str, list[list[str]]]) -> tuple[tuple[str, ...], ...]:
    return tuple(tuple(phrase) for phrases in intents.values() for phrase in phrases)


@lru_cache(maxsize=8)
def _intent_pattern(phrases: tuple[tuple[str, ...], ...]) -> re.Pattern[str]:
    """One regular expression for every phrase, over the text's words joined by single spaces: a
    phrase's part starts a word (``(?<!\\S)``), the rest of that word is skipped (``\\S*``) up to
    the space before the next part. Every message is checked, up to 4,096 characters: one pass of
    the regular expression engine, not each phrase tried at each word in Python (8 ms for 4,096
    characters, 45 µs for a one-line question)."""
    alternatives = (r"\S* ".join(map(re.escape, phrase)) for phrase in phrases)
    return re.compile(r"(?<!\S)(?:" + "|".join(alternatives) + ")")


def wants_quote(text: str, catalog: Catalog, previous: Request | None) -> bool:
    """Free text asking for a manager / a quote: an intent phrase, and no question the estimator would
    answer (a named model, a follow-up of the last answer, a comparison)."""
    if not mentions_intent(text):
        return False
    try:
        if comparison(text, catalog) is not None:
            return False
        if previous is not None and (
            follow_up(text, previous, catalog) is not None
            or comparison_follow_up(text, previous, catalog) is not None
        ):
            return False
        understand(text, catalog)
    except CoreError:
        return True
    return False


# ---------------------------------------------------------------- contacts


@dataclass(frozen=True)
class Contact:
    kind: str  # bot.db.models CONTACT_USERNAME | CONTACT_PHONE | CONTACT_EMAIL
    value: str


def read_contact(text: str) -> Contact | None:
    """A typed e-mail or phone number, normalized; None when it is neither."""
    text = text.strip()
    if "@" in text and not text.startswith("@"):
        if len(text) <= MAX_CONTACT and EMAIL.match(text):
            return Contact("email", text)
        return None
    return read_phone(text)


def read_phone(text: str) -> Contact | None:
    text = text.strip()
    if not PHONE_CHARS.match(text):
        return None
    digits = re.sub(r"\D", "", text)
    if not 7 <= len(digits) <= 15:
        return None
    return Contact("phone", f"+{digits}")


# ---------------------------------------------------------------- what a lead carries


def dedup_key(telegram_id: int, request: Mapping[str, Any] | None, contact: Contact) -> str:
    """Same user, configuration and contact: the same lead (within bot.db.leads.DEDUP_WINDOW)."""
    canonical = json.dumps(
        [telegram_id, request or {}, contact.kind, contact.value.lower()], sort_keys=True, ensure_ascii=True
    )
    return hashlib.sha256(canonical.encode()).hexdigest()[:40]


def summary(result: Result | None, request: Mapping[str, Any] | None, lang: str) -> dict[str, Any]:
    """What the lead row keeps of its configuration (flat, for the admin stats and the CSV export):
    model, task, precision, workload, the recommended config / offer id / price, the chosen offer (the
    one the rent button showed), total_bytes, verdict; and the lines the card shows (in `lang`)."""
    if result is None:
        return {}
    filled = result.request
    rec = result.recommendation
    out: dict[str, Any] = {
        "model": result.model.name,
        "model_id": str(request.get("model")) if request else None,
        "task": str(filled.task),
        "precision": str(filled.precision) if filled.precision is not None else None,
        "workload": {
            name: getattr(filled, name)
            for name in WORKLOAD_FIELDS
            if request and request.get(name) is not None and getattr(filled, name, None) is not None
        },
        "total_bytes": result.total_bytes,
        "verdict": (result.target.verdict if result.target else rec.verdict if rec else "does_not_fit"),
        "headline": headline_settings(result, lang),
    }
    if rec is not None:
        out.update(
            recommended_config=f"{rec.count}x {rec.gpu}",
            recommended_offer_id=rec.offer_id,
            recommended_text=config_text(rec.count, rec.gpu_name, lang),
            price_per_hour=rec.price_per_hour,
            currency=rec.currency,
            price_is_from=rec.price_is_from,
            price_text=price_of(rec, lang),
            chosen_offer=shown_offer(result),
        )
    if result.target is not None:
        out["target_config"] = f"{result.target.count}x {result.target.gpu}"
    answer = build_answer(result, lang)
    out["lead_line"] = answer.lead
    return out


# ---------------------------------------------------------------- the sales card


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


# ---------------------------------------------------------------- claim and qualification on the card


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
