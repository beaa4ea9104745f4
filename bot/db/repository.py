"""Where the users' and dialogs' statements were before they were split (issue 21): the users' rows
are in bot.db.users, the dialog rows in bot.db.dialogs, the inbox's statements in
bot.db.processed_updates. Only the names modules still import from here are kept."""

# Still imported from here by bot/dialog.py and bot/handlers/leads.py (being split in parallel).
from bot.db.dialogs import abandon_dialogs, complete_dialog, start_dialog
from bot.db.users import get_user

__all__ = ["abandon_dialogs", "complete_dialog", "get_user", "start_dialog"]
