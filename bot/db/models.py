"""ORM models: users, their dialog sessions, processed updates and persisted FSM state."""

from datetime import UTC, datetime
from typing import Any, ClassVar

from sqlalchemy import (
    JSON,
    BigInteger,
    Boolean,
    DateTime,
    ForeignKey,
    Index,
    Integer,
    MetaData,
    String,
    Text,
    UniqueConstraint,
)
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column, relationship
from sqlalchemy.types import TypeDecorator

# Deterministic constraint names, so migrations can drop/alter them on every backend.
NAMING_CONVENTION = {
    "ix": "ix_%(column_0_label)s",
    "uq": "uq_%(table_name)s_%(column_0_name)s",
    "ck": "ck_%(table_name)s_%(constraint_name)s",
    "fk": "fk_%(table_name)s_%(column_0_name)s_%(referred_table_name)s",
    "pk": "pk_%(table_name)s",
}

DIALOG_STARTED = "started"
DIALOG_COMPLETED = "completed"
DIALOG_ABANDONED = "abandoned"

LEAD_PENDING = "pending"
LEAD_SENT = "sent"
LEAD_UPDATED = "updated"  # sent, and a follow-up note since: the card is edited
LEAD_FAILED = "failed"

# A lead's delivery to one CRM (bot.crm): its own state, apart from the sales chat's card.
CRM_PENDING = "pending"
CRM_SENT = "sent"
CRM_FAILED = "failed"
CRM_LEAD_CREATED = "lead.created"
CRM_LEAD_CLAIMED = "lead.claimed"
CRM_LEAD_QUALIFIED = "lead.qualified"  # the user answered the optional when / how long questions
LEAD_QUOTE = "quote"
LEAD_RESERVATION = "reservation"  # a hold request for one offer (the card says "Бронь")
NEED_WHEN = ("today", "week", "later")
"""Qualification: when the server is needed (today, this week, later)."""
NEED_FOR = ("hours", "weeks", "months")
"""Qualification: for how long (hours, weeks, months)."""

CONTACT_USERNAME = "username"
CONTACT_PHONE = "phone"
CONTACT_EMAIL = "email"


def utc_now() -> datetime:
    return datetime.now(UTC)


class UtcDateTime(TypeDecorator[datetime]):
    """Timezone-aware UTC datetimes on every backend (SQLite drops the offset on its own)."""

    impl = DateTime(timezone=True)
    cache_ok = True

    def process_bind_param(self, value: datetime | None, dialect: Any) -> datetime | None:
        if value is None:
            return None
        if value.tzinfo is None:
            raise ValueError("naive datetime; use an aware UTC datetime")
        return value.astimezone(UTC)

    def process_result_value(self, value: datetime | None, dialect: Any) -> datetime | None:
        if value is None:
            return None
        return value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)


class Base(DeclarativeBase):
    metadata = MetaData(naming_convention=NAMING_CONVENTION)
    type_annotation_map: ClassVar[dict[Any, Any]] = {datetime: UtcDateTime, dict[str, Any]: JSON}


class User(Base):
    __tablename__ = "users"

    id: Mapped[int] = mapped_column(primary_key=True)
    telegram_id: Mapped[int] = mapped_column(BigInteger, unique=True)
    username: Mapped[str | None] = mapped_column(String(64))
    first_name: Mapped[str | None] = mapped_column(String(256))
    # None until the user picks a language with /lang; until then `language_from_telegram` decides
    # (bot.i18n.UserLocaleManager).
    language: Mapped[str | None] = mapped_column(String(2))
    language_from_telegram: Mapped[str | None] = mapped_column(String(16))
    # The deep-link payload of the first contact (`inline` when first seen in inline mode); never
    # overwritten afterwards.
    source: Mapped[str | None] = mapped_column(String(64), index=True)
    created_at: Mapped[datetime] = mapped_column(default=utc_now)
    last_seen_at: Mapped[datetime] = mapped_column(default=utc_now)
    # The currency prices are shown in, set with /currency (None: Telegram's language decides, `kk`
    # tenge, else DEFAULT_CURRENCY; bot.context.user_currency).
    currency: Mapped[str | None] = mapped_column(String(3))
    # Who brought this user: the Telegram id of the user whose personal link (`ref_<id>`) was the
    # first contact's source; set with the row, never afterwards (bot.db.users.referrer_of).
    referred_by: Mapped[int | None] = mapped_column(BigInteger, index=True)

    dialogs: Mapped[list["DialogSession"]] = relationship(back_populates="user")


class DialogSession(Base):
    __tablename__ = "dialog_sessions"

    id: Mapped[int] = mapped_column(primary_key=True)
    user_id: Mapped[int] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"), index=True)
    task: Mapped[str] = mapped_column(String(32))
    answers: Mapped[dict[str, Any]] = mapped_column(default=dict)
    result_summary: Mapped[dict[str, Any] | None]
    verdict: Mapped[str | None] = mapped_column(String(32))
    offer_id: Mapped[str | None] = mapped_column(String(128))
    status: Mapped[str] = mapped_column(String(16), default=DIALOG_STARTED, index=True)
    # The deep link this dialog came from (a returning user may arrive via another link).
    source: Mapped[str | None] = mapped_column(String(64))
    created_at: Mapped[datetime] = mapped_column(default=utc_now)
    updated_at: Mapped[datetime] = mapped_column(default=utc_now, onupdate=utc_now)
    completed_at: Mapped[datetime | None]
    # The offer whose rent button the last answer showed (None: no offer fitted or none shown yet).
    offer_shown: Mapped[str | None] = mapped_column(String(128))
    # True once the user opened the quote form from this dialog; None: never.
    quote_requested: Mapped[bool | None] = mapped_column(Boolean)

    user: Mapped[User] = relationship(back_populates="dialogs")


class Lead(Base):
    """A quote request: written first, then delivered to the sales chat by bot.outbox.

    ``request`` is the estimator request (DialogState.last_request) the lead came with, or {} when asked
    before any answer; ``summary`` is what the sales card shows: model, task, precision, workload,
    recommended config / offer id / price, chosen offer, total_bytes, verdict (keys absent when unknown).
    ``delivery_status`` is pending until the card is sent (``card_message_id``), updated when a note
    joined a sent card (the outbox edits it), failed when it could not be delivered while fresh
    (bot.outbox.LEAD_FRESH_FOR). ``notes`` are the follow-ups (bot.leads.note) that joined this card
    instead of making new ones (bot.db.leads.MAX_LEADS_PER_WINDOW); ``revision`` counts them, so the
    outbox knows whether the card it sent is the latest.
    """

    __tablename__ = "leads"
    __table_args__ = (Index("ix_leads_delivery", "delivery_status", "next_attempt_at"),)

    id: Mapped[int] = mapped_column(primary_key=True)
    telegram_id: Mapped[int] = mapped_column(
        BigInteger, ForeignKey("users.telegram_id", ondelete="CASCADE"), index=True
    )
    created_at: Mapped[datetime] = mapped_column(default=utc_now, index=True)
    contact_kind: Mapped[str] = mapped_column(String(16))  # username | phone | email
    contact: Mapped[str] = mapped_column(String(256))
    comment: Mapped[str | None] = mapped_column(Text)
    # The user's first-seen link source (User.source at the time of the lead).
    source: Mapped[str | None] = mapped_column(String(64), index=True)
    dialog_id: Mapped[int | None] = mapped_column(ForeignKey("dialog_sessions.id", ondelete="SET NULL"))
    request: Mapped[dict[str, Any]] = mapped_column(default=dict)
    summary: Mapped[dict[str, Any]] = mapped_column(default=dict)
    # Same user + same configuration + same contact within the dedup window -> the same lead.
    dedup_key: Mapped[str] = mapped_column(String(64), index=True)
    delivery_status: Mapped[str] = mapped_column(String(16), default=LEAD_PENDING)
    attempts: Mapped[int] = mapped_column(Integer, default=0)
    next_attempt_at: Mapped[datetime | None]
    last_error: Mapped[str | None] = mapped_column(Text)
    sent_at: Mapped[datetime | None]
    card_message_id: Mapped[int | None] = mapped_column(BigInteger)
    notes: Mapped[list[Any] | None] = mapped_column(JSON)
    revision: Mapped[int] = mapped_column(Integer, default=0, server_default="0")
    # The user's "saved" confirmation (edited to "accepted" once delivered) and when that was done.
    confirm_message_id: Mapped[int | None] = mapped_column(BigInteger)
    user_told_at: Mapped[datetime | None]
    # When the admins were told its delivery keeps failing (once).
    alerted_at: Mapped[datetime | None]
    # quote (the form) or reservation (a hold request for one offer: summary["reservation"])
    kind: Mapped[str] = mapped_column(String(16), default=LEAD_QUOTE, server_default=LEAD_QUOTE)
    # The manager who pressed "Беру" first (bot.db.leads.claim), their name as the card shows it, when.
    claimed_by: Mapped[int | None] = mapped_column(BigInteger)
    claimed_by_name: Mapped[str | None] = mapped_column(String(128))
    claimed_at: Mapped[datetime | None]
    # When the unclaimed lead was reminded of in the sales chat, and the admins told (bot.reminders).
    reminded_at: Mapped[datetime | None]
    escalated_at: Mapped[datetime | None]
    # The optional qualification answers (NEED_WHEN, NEED_FOR), None: not answered or skipped.
    need_when: Mapped[str | None] = mapped_column(String(16))
    need_for: Mapped[str | None] = mapped_column(String(16))


class CrmDelivery(Base):
    """One lead event (``lead.created``, ``lead.claimed``) to one CRM (``destination``: webhook,
    bitrix24, amocrm), delivered by bot.outbox at least once with ``idempotency_key`` (a retry never
    makes a second deal): pending, then sent (``remote_id``: the CRM's id of the deal, when it says)
    or failed (not delivered while the lead was fresh). ``data`` is what the event adds to the lead
    (who claimed it). Same back-off and single admin alert as the lead's card (bot.outbox)."""

    __tablename__ = "crm_deliveries"
    __table_args__ = (
        UniqueConstraint("lead_id", "destination", "event"),
        Index("ix_crm_deliveries_due", "status", "next_attempt_at"),
    )

    id: Mapped[int] = mapped_column(primary_key=True)
    lead_id: Mapped[int] = mapped_column(ForeignKey("leads.id", ondelete="CASCADE"), index=True)
    destination: Mapped[str] = mapped_column(String(16))
    event: Mapped[str] = mapped_column(String(32))
    idempotency_key: Mapped[str] = mapped_column(String(128))
    data: Mapped[dict[str, Any]] = mapped_column(default=dict)
    created_at: Mapped[datetime] = mapped_column(default=utc_now)
    status: Mapped[str] = mapped_column(String(16), default=CRM_PENDING)
    attempts: Mapped[int] = mapped_column(Integer, default=0)
    next_attempt_at: Mapped[datetime | None]
    last_error: Mapped[str | None] = mapped_column(Text)
    sent_at: Mapped[datetime | None]
    remote_id: Mapped[str | None] = mapped_column(String(64))
    alerted_at: Mapped[datetime | None]


class ProcessedUpdate(Base):
    """One row per received Telegram update: a second delivery of the same update is dropped.

    It is also the inbox (bot.db.inbox): an update is recorded with its raw ``payload`` before
    Telegram is told it arrived, and the payload is cleared in the commit that finishes handling it.
    A row with a payload is pending; ``lease_until`` is how long the process that took it owns it.
    """

    __tablename__ = "processed_updates"
    __table_args__ = (UniqueConstraint("bot_id", "update_id"),)

    id: Mapped[int] = mapped_column(primary_key=True)
    bot_id: Mapped[int] = mapped_column(BigInteger)
    update_id: Mapped[int] = mapped_column(BigInteger)
    created_at: Mapped[datetime] = mapped_column(default=utc_now)
    # none_as_null: None is SQL NULL ("handled"), not the JSON text 'null'.
    payload: Mapped[dict[str, Any] | None] = mapped_column(JSON(none_as_null=True))
    lease_until: Mapped[datetime | None]


class FsmRecord(Base):
    """aiogram FSM state and data for one StorageKey (destiny included)."""

    __tablename__ = "fsm_records"

    key: Mapped[str] = mapped_column(String(255), primary_key=True)
    state: Mapped[str | None] = mapped_column(String(255))
    data: Mapped[dict[str, Any]] = mapped_column(default=dict)
    updated_at: Mapped[datetime] = mapped_column(default=utc_now, onupdate=utc_now)


__all__ = [
    "CONTACT_EMAIL",
    "CONTACT_PHONE",
    "CONTACT_USERNAME",
    "DIALOG_ABANDONED",
    "DIALOG_COMPLETED",
    "DIALOG_STARTED",
    "LEAD_FAILED",
    "LEAD_PENDING",
    "LEAD_QUOTE",
    "LEAD_RESERVATION",
    "LEAD_SENT",
    "LEAD_UPDATED",
    "NEED_FOR",
    "NEED_WHEN",
    "Base",
    "DialogSession",
    "FsmRecord",
    "Lead",
    "OfferAvailability",
    "ProcessedUpdate",
    "User",
]


class HfModel(Base):
    """A Hugging Face model the bot looked up (`bot.db.hf_cache`): what the Hub said, so the next user
    naming it is answered at once, without the network."""

    __tablename__ = "hf_models"

    repo_key: Mapped[str] = mapped_column(String(256), primary_key=True)  # the id lower-cased
    repo_id: Mapped[str] = mapped_column(String(256))  # as the Hub spells it (as first asked)
    status: Mapped[str] = mapped_column(String(16))  # found / not_found / unsupported
    config: Mapped[dict[str, Any] | None] = mapped_column(nullable=True)
    parameter_counts: Mapped[dict[str, Any] | None] = mapped_column(nullable=True)
    fetched_at: Mapped[datetime] = mapped_column(default=utc_now)


class OfferAvailability(Base):
    """An admin's override of an offer's availability (`/offers off|on|request <id>`): applied over
    the offers file's `availability` by every replica (`bot.db.availability`), kept across restarts."""

    __tablename__ = "offer_availability"

    offer_id: Mapped[str] = mapped_column(String(64), primary_key=True)
    availability: Mapped[str] = mapped_column(String(16))  # core.catalogue.offers.AVAILABILITIES
    changed_by: Mapped[int | None] = mapped_column(BigInteger)  # the admin's Telegram id
    changed_at: Mapped[datetime] = mapped_column(default=utc_now, onupdate=utc_now)


class Measurement(Base):
    """A pasted log's measurement the user agreed to share (`bot.handlers.pasted_logs`): a calibration
    candidate for the operator (`/measurements`). Only the numbers the log reader kept, never the text."""

    __tablename__ = "measurements"

    id: Mapped[int] = mapped_column(primary_key=True)
    user_id: Mapped[int | None] = mapped_column(ForeignKey("users.id", ondelete="SET NULL"), index=True)
    created_at: Mapped[datetime] = mapped_column(default=utc_now)
    kind: Mapped[str] = mapped_column(String(16))  # core.logs.reading.LogKind
    gpu: Mapped[str | None] = mapped_column(String(64))  # the catalogue card matched first
    gpu_name: Mapped[str | None] = mapped_column(String(80))  # as the log names it
    model: Mapped[str | None] = mapped_column(String(200))  # as the log names it
    model_id: Mapped[str | None] = mapped_column(String(64))  # the catalogue model
    total_bytes: Mapped[int | None] = mapped_column(BigInteger)
    need_bytes: Mapped[int | None] = mapped_column(BigInteger)
    failed_bytes: Mapped[int | None] = mapped_column(BigInteger)
    reading: Mapped[dict[str, Any]] = mapped_column(default=dict)  # the reader's numbers (JSON)
