"""Quote requests (leads): what a lead carries, how a contact is read, which free text asks for one,
and the HTML card the sales chat gets. No Telegram calls and no database here (bot.db.leads stores,
bot.outbox delivers, bot.handlers.leads asks).

One module per concept, each name re-exported here (`from bot import leads`): `texts` (texts of any
length), `intents` (free text asking for a quote), `contacts`, `row` (the de-duplication key and the
summary a lead keeps), `sales_card` (the card, its notes, its status lines and "Беру")."""

from bot.leads.contacts import EMAIL, MAX_CONTACT, PHONE_CHARS, Contact, read_contact, read_phone
from bot.leads.intents import (
    INTENT_ENTRY,
    INTENTS,
    INTENTS_FILE,
    WORD,
    load_intents,
    mentions_intent,
    normalize,
    wants_quote,
)
from bot.leads.row import WORKLOAD_FIELDS, dedup_key, summary
from bot.leads.sales_card import (
    MAX_COMMENT,
    MAX_NOTE_COMMENT,
    Status,
    Who,
    card,
    claim_keyboard,
    full_card,
    minutes_between,
    note,
    plain_card,
    status_lines,
    with_notes,
)
from bot.leads.texts import CUT, MESSAGE_LIMIT, Translate, clean, clip, render, shown_length

__all__ = [
    "CUT",
    "EMAIL",
    "INTENTS",
    "INTENTS_FILE",
    "INTENT_ENTRY",
    "MAX_COMMENT",
    "MAX_CONTACT",
    "MAX_NOTE_COMMENT",
    "MESSAGE_LIMIT",
    "PHONE_CHARS",
    "WORD",
    "WORKLOAD_FIELDS",
    "Contact",
    "Status",
    "Translate",
    "Who",
    "card",
    "claim_keyboard",
    "clean",
    "clip",
    "dedup_key",
    "full_card",
    "load_intents",
    "mentions_intent",
    "minutes_between",
    "normalize",
    "note",
    "plain_card",
    "read_contact",
    "read_phone",
    "render",
    "shown_length",
    "status_lines",
    "summary",
    "wants_quote",
    "with_notes",
]
