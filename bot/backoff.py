"""The wait between two attempts of something that failed and is worth trying again: Telegram at
start (bot.startup), a lead's card and a CRM push (bot.outbox, bot.crm.push)."""

from __future__ import annotations


def doubling_s(attempt: int, first_s: float, max_s: float) -> float:
    """The wait after the ``attempt``-th failed attempt (counted from 1): ``first_s``, doubled after
    each further failure, at most ``max_s``."""
    return float(min(first_s * 2 ** min(max(attempt - 1, 0), 32), max_s))
