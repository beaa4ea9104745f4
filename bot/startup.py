"""Waiting for Telegram at start: a Bot API that does not answer yet (the network, Telegram or a
self-hosted Bot API server still starting) is retried with a capped back-off, one log line per attempt
and no traceback, instead of stopping the bot; a token Telegram refuses stops it with one line naming
BOT_TOKEN (`ConfigError`, exit status 2).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import signal
from urllib.parse import urlsplit

from aiogram import Bot
from aiogram.exceptions import (
    ClientDecodeError,
    TelegramAPIError,
    TelegramNetworkError,
    TelegramRetryAfter,
    TelegramServerError,
    TelegramUnauthorizedError,
)

from bot.backoff import doubling_s
from bot.config import problem

log = logging.getLogger("bot.startup")

FIRST_RETRY_S = 1.0
"""The wait after the first failed attempt; doubled after each next one..."""
MAX_RETRY_S = 60.0
"""...up to this: once a minute while Telegram stays away."""
# Telegram not answering, answering 5xx, or a proxy's error page instead of JSON: worth waiting for.
RETRIED = (TelegramNetworkError, TelegramServerError, ClientDecodeError)


async def wait_for_telegram(bot: Bot, api_url: str, first_retry_s: float = FIRST_RETRY_S) -> bool:
    """Call getMe until Telegram at ``api_url`` answers (its answer is kept: ``bot.me()``); True then.
    False if SIGTERM came while waiting (the caller stops cleanly). Raises ConfigError when Telegram
    refuses the token (BOT_TOKEN) or getMe itself (TELEGRAM_API_URL: no Bot API there)."""
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    handled = False
    with contextlib.suppress(NotImplementedError, RuntimeError, ValueError):  # not the main thread
        loop.add_signal_handler(signal.SIGTERM, stop.set)
        handled = True
    try:
        attempt = 1
        while True:
            delay = doubling_s(attempt, first_retry_s, MAX_RETRY_S)
            try:
                await bot.me()
                if attempt > 1:
                    log.info("Telegram at %s answers (attempt %d)", _host(api_url), attempt)
                return True
            except TelegramUnauthorizedError:
                raise problem("BOT_TOKEN", "Telegram refuses this token (revoked? ask @BotFather)") from None
            except TelegramRetryAfter as e:  # flood control: wait as long as told, at least
                wait = max(delay, float(e.retry_after))
                log.warning(
                    "Telegram at %s asks to wait %d s; retrying in %g s (attempt %d)",
                    _host(api_url), e.retry_after, wait, attempt,
                )  # fmt: skip
            except RETRIED as e:
                wait = delay
                log.warning(
                    "Telegram at %s does not answer (%s); retrying in %g s (attempt %d)",
                    _host(api_url), _reason(e), wait, attempt,
                )  # fmt: skip
            except TelegramAPIError as e:  # any other refusal of getMe (404: not a Bot API server)
                refusal = f"{_host(api_url)} refuses getMe ({_reason(e)}): not a Bot API server?"
                raise problem("TELEGRAM_API_URL", refusal) from None
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(stop.wait(), wait)
            if stop.is_set():
                log.info("stopped while waiting for Telegram")
                return False
            attempt += 1
    finally:
        if handled:
            loop.remove_signal_handler(signal.SIGTERM)


def _host(url: str) -> str:
    """host:port of the Bot API's URL (never credentials)."""
    parts = urlsplit(url)
    return f"{parts.hostname}:{parts.port}" if parts.port else parts.hostname or "?"


def _reason(error: Exception) -> str:
    """One line: the error's kind and the first line of what it says (never a traceback)."""
    text = str(getattr(error, "message", "") or error).strip().splitlines()
    return f"{type(error).__name__}: {text[0][:200]}" if text else type(error).__name__
