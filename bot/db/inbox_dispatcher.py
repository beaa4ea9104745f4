"""At-least-once delivery with exactly-once-visible handling: the dispatcher using the inbox (bot.db.inbox).

- **Receive**: a poll batch (or the one webhook update) is inserted into ``processed_updates`` with
  its payload in one short transaction, *then* confirmed to Telegram; a repeated delivery is dropped
  (the unique ``(bot_id, update_id)`` decides, also between replicas).
- **Handle**: each new update in its own task, from memory; its unit of work commits with its done
  mark (the payload cleared) after its handler returned (bot.db.work, bot.db.group_commit). A failed
  handler's update is marked handled too, unless the infrastructure failed (bot.db.outage).
- **Recover**: pending rows are handled at start before new updates (replicas: those whose lease ran
  out), and by a periodic sweep; old rows are pruned. **Shut down**: stop taking updates, finish
  those in hand within the grace period; the rest stay pending. In order per sender: each update's
  task waits for the sender's previous one, a retry included. The contract: docs/persistence.md.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import logging
from typing import Any

from aiogram import Bot, Dispatcher
from aiogram.dispatcher.middlewares.user_context import UserContextMiddleware
from aiogram.methods import TelegramMethod
from aiogram.types import Update
from aiogram.utils.backoff import Backoff, BackoffConfig

from bot import sent_calls
from bot.db.inbox import Inbox, update_payload
from bot.db.middleware import RECEIPT_KEY, Receipt, forget_old_updates
from bot.db.outage import Outages, is_infrastructure
from bot.received_updates import GetReceivedUpdates

log = logging.getLogger(__name__)

HEARTBEAT_S = 2.0
"""How often a replica renews the lease of every update it has in hand (one statement): four
renewals fit in a LEASE, so a loop or a pool busy for a few seconds does not lose one."""
SHUTDOWN_GRACE_S = 10.0
SWEEP_INTERVAL_S = 30.0
"""One process (SQLite, polling): the sweep only picks up what a failed finish left."""
REPLICA_SWEEP_INTERVAL_S = 2.0
"""Webhook replicas on PostgreSQL: how often each looks for updates of a dead replica."""
RETRY_BACKOFF = BackoffConfig(min_delay=1.0, max_delay=60.0, factor=2.0, jitter=0.1)
"""Back-off between attempts at an update that failed on the infrastructure."""
RETRY_FOR_S = 23 * 3600.0
"""Telegram redelivers an update for a day: retried for that long, then apologised for."""
PRUNE_INTERVAL_S = 600.0
DEFAULT_BACKOFF = BackoffConfig(min_delay=1.0, max_delay=5.0, factor=1.3, jitter=0.1)


Sender = tuple[int | None, int | None]
"""(chat id, user id) of an update, as aiogram's event context resolves them."""


def sender_of(update: Update) -> Sender | None:
    """Who an update is from (None: from nobody, such as a poll's state)."""
    context = UserContextMiddleware.resolve_event_context(update)
    if context.chat is None and context.user is None:
        return None
    return (context.chat_id, context.user_id)


class InboxDispatcher(Dispatcher):
    """aiogram's Dispatcher whose polling and webhook intake go through the inbox (see the module doc).

    ``start_polling`` works as usual (signals, startup and shutdown handlers); updates are always
    handled as tasks. Webhook servers call `receive_webhook_update` and `start_inbox`.
    """

    def __init__(
        self,
        *,
        inbox: Inbox,
        grace_s: float = SHUTDOWN_GRACE_S,
        sweep_interval_s: float = SWEEP_INTERVAL_S,
        prune_interval_s: float = PRUNE_INTERVAL_S,
        heartbeat_s: float | None = None,
        retry_backoff: BackoffConfig = RETRY_BACKOFF,
        **kwargs: Any,
    ) -> None:
        super().__init__(**kwargs)
        self.inbox = inbox
        self.grace_s = grace_s
        self.sweep_interval_s = sweep_interval_s
        self.prune_interval_s = prune_interval_s
        self.heartbeat_s = heartbeat_s  # None: one process, nobody to take its updates over
        self.retry_backoff = retry_backoff
        self.outages = Outages()
        self.sent_journal: sent_calls.RedisJournal | None = None  # replicas: what each update sent
        self.handling: dict[int, asyncio.Task[None]] = {}
        self.latest: dict[Sender, asyncio.Task[None]] = {}  # each sender's last update in hand
        self.draining = asyncio.Event()
        self._maintenance: asyncio.Task[None] | None = None
        self._heartbeat: asyncio.Task[None] | None = None

    # --- handling ---

    def handle_in_background(
        self, bot: Bot, update: Update, *, fresh: bool = False, **kwargs: Any
    ) -> asyncio.Task[None] | None:
        """Handle a received update in its own task (None: it is being handled already). ``fresh``:
        just recorded as new by `Inbox.receive`, so not handled by anyone yet."""
        update_id = update.update_id
        if update_id in self.handling:
            return None
        sender = sender_of(update)
        earlier = self.latest.get(sender) if sender is not None else None
        task = asyncio.create_task(self._handle(bot, update, kwargs, fresh=fresh, after=earlier))
        self.handling[update_id] = task
        task.add_done_callback(lambda _: self.handling.pop(update_id, None))
        if sender is not None:
            self.latest[sender] = task
            task.add_done_callback(lambda done: self._forget_latest(sender, done))
        return task

    def _forget_latest(self, sender: Sender, task: asyncio.Task[None]) -> None:
        if self.latest.get(sender) is task:
            del self.latest[sender]

    async def _handle(
        self,
        bot: Bot,
        update: Update,
        kwargs: dict[str, Any],
        *,
        fresh: bool,
        after: asyncio.Task[None] | None = None,
    ) -> None:
        """Handle the update, retried while the infrastructure fails; ``after``: the sender's
        previous update, finished first (also while it waits for a retry: it is not overtaken)."""
        if after is not None and not after.done():
            await asyncio.wait([after])
        loop = asyncio.get_running_loop()
        give_up_at = loop.time() + RETRY_FOR_S
        backoff = Backoff(config=self.retry_backoff)
        sent = sent_calls.SentCalls(self.sent_journal, bot.id, update.update_id)
        if not fresh:  # taken over, perhaps from a replica that died after a call
            await sent.read_journal()
        receipt = Receipt(fresh=fresh)
        while True:
            with sent_calls.attempt(sent):
                await self._feed(bot, update, {**kwargs, RECEIPT_KEY: receipt})
            if receipt.finished:
                if receipt.failure is None:
                    self.outages.succeeded()
                return
            failure = receipt.failure
            if failure is None or loop.time() >= give_up_at:
                break
            # The database, Redis or the disk failed: pending, tried again after a while.
            self.outages.failed_on(failure)
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self.draining.wait(), next(backoff))
            if self.draining.is_set():
                return  # shutting down: still pending, handled after the restart
            receipt = Receipt(noticed=receipt.noticed)  # not fresh: another replica may have taken it
        # The handler raised (logged, and the errors router has told the user) or the update never
        # reached the database middleware: mark it handled, it is not retried.
        try:
            await self.inbox.finish(bot.id, update.update_id)
        except Exception:
            log.exception("could not mark update %s handled; it will be handled again", update.update_id)

    async def _feed(self, bot: Bot, update: Update, kwargs: dict[str, Any]) -> None:
        """One attempt at the update through the public `feed_update`, as aiogram's own polling does
        it: a Telegram method a handler returns is called, an exception is logged (the receipt in
        ``kwargs`` says what became of the update)."""
        try:
            response = await self.feed_update(bot, update, **kwargs)
            if isinstance(response, TelegramMethod):
                await self.silent_call_request(bot, response)
        except Exception as e:
            log.exception("Update %s failed - %s: %s", update.update_id, type(e).__name__, e)

    async def recover(self, bot: Bot, *, all_of_them: bool, **kwargs: Any) -> int:
        """Handle pending updates (left by a crash, or by a replica whose lease ran out); how many."""
        taken = 0
        for update_id, payload in await self.inbox.take_pending(bot.id, all_of_them=all_of_them):
            if update_id in self.handling:
                continue
            update = Update.model_validate(payload, context={"bot": bot})
            self.handle_in_background(bot, update, **kwargs)
            taken += 1
        if taken:
            log.info("handling %d update(s) received before and not yet handled", taken)
        return taken

    # --- intake ---

    async def receive_webhook_update(self, bot: Bot, update: Update, payload: dict[str, Any]) -> bool:
        """Record a webhook update, then handle it in the background; False for a repeated delivery.
        Raises when it could not be recorded (the webhook must then not answer 200)."""
        fresh = await self.inbox.receive(bot.id, [(update.update_id, payload)], arrivals=(bot, [update]))
        if update.update_id in fresh:
            self.handle_in_background(bot, update, fresh=True)
            return True
        log.info("Dropping update %s: already received", update.update_id)
        return False

    async def start_inbox(self, bot: Bot, *, all_of_them: bool, **kwargs: Any) -> None:
        """Handle what is pending, then keep sweeping (leases run out, old rows pruned)."""
        self.draining.clear()  # started again after a drain (tests, an embedding app)
        await self.recover(bot, all_of_them=all_of_them, **kwargs)
        if self._maintenance is None or self._maintenance.done():
            self._maintenance = asyncio.create_task(self._maintain(bot, kwargs))
        if self.heartbeat_s is not None and (self._heartbeat is None or self._heartbeat.done()):
            self._heartbeat = asyncio.create_task(
                self._beat(bot.id, self.heartbeat_s), name="inbox-heartbeat"
            )

    async def _beat(self, bot_id: int, every_s: float) -> None:
        """Renew the leases of the updates in hand, all in one statement, every ``every_s``."""
        while True:
            await asyncio.sleep(every_s)
            if not self.handling:
                continue
            renew_locks = getattr(self.fsm.events_isolation, "renew", None)  # bot.redis_fsm
            for renew in (renew_locks, functools.partial(self.inbox.renew, bot_id, list(self.handling))):
                if renew is None:
                    continue
                try:  # the users' locks first: the leases' statement may wait on a row lock
                    await renew()
                except Exception as e:  # the database or Redis failing: the updates' retries say so
                    log.debug("inbox heartbeat failed: %s", e)

    async def _maintain(self, bot: Bot, kwargs: dict[str, Any]) -> None:
        loop = asyncio.get_running_loop()
        next_prune = loop.time() + self.prune_interval_s
        while True:
            await asyncio.sleep(min(self.sweep_interval_s, max(next_prune - loop.time(), 0)))
            try:
                if loop.time() >= next_prune:
                    next_prune = loop.time() + self.prune_interval_s
                    await forget_old_updates(self.inbox.sessionmaker)
                await self.recover(bot, all_of_them=False, **kwargs)
            except Exception:
                log.exception("inbox maintenance failed; retrying later")

    async def _polling(
        self,
        bot: Bot,
        polling_timeout: int = 30,
        handle_as_tasks: bool = True,
        backoff_config: BackoffConfig = DEFAULT_BACKOFF,
        allowed_updates: list[str] | None = None,
        tasks_concurrency_limit: int | None = None,
        **kwargs: Any,
    ) -> None:
        """The loop aiogram's `start_polling` runs per bot (its only hook), confirming a batch only
        once it is recorded in the inbox; each update is then handled through `feed_update`."""
        user = await bot.me()
        log.info("Run polling for bot @%s id=%d", user.username, bot.id)
        # The only consumer of this bot's getUpdates: whatever is pending is ours.
        await self.start_inbox(bot, all_of_them=True, **kwargs)
        backoff = Backoff(config=backoff_config)
        get_updates = GetReceivedUpdates(timeout=polling_timeout, allowed_updates=allowed_updates)
        request_kwargs = {}
        if bot.session.timeout:
            request_kwargs["request_timeout"] = int(bot.session.timeout + polling_timeout)
        try:
            while True:
                try:
                    updates = await bot(get_updates, **request_kwargs)
                except Exception as e:  # Telegram unreachable: retry
                    log.error("Failed to fetch updates - %s: %s", type(e).__name__, e)
                    await backoff.asleep()
                    continue
                backoff.reset()
                if not updates:
                    continue
                recorded = True
                try:
                    fresh = await self.inbox.receive(
                        bot.id,
                        [(update.update_id, update_payload(update)) for update in updates],
                        arrivals=(bot, updates),
                    )
                except Exception as e:
                    # The database is failing: the handlers would fail on it as well. Handle from
                    # memory (each retried until the database is back, bot.db.outage) rather than
                    # hold the batch back, and Telegram's queue behind it, for as long as it lasts.
                    if is_infrastructure(e):
                        self.outages.failed_on(e)
                    else:
                        log.error("Could not record %d update(s) - %s: %s", len(updates), type(e).__name__, e)
                    fresh = {update.update_id for update in updates}
                    recorded = False
                # Recorded: the next getUpdates confirms them to Telegram.
                get_updates.offset = updates[-1].update_id + 1
                for update in updates:
                    if update.update_id in fresh:
                        self.handle_in_background(bot, update, fresh=recorded, **kwargs)
                    else:
                        log.info("Dropping update %s: already received", update.update_id)
        finally:
            log.info("Polling stopped for bot @%s id=%d", user.username, bot.id)

    # --- shutdown ---

    async def drain(self, timeout: float | None = None) -> None:
        """Wait for the updates in hand (at most ``timeout``, the grace period); cancel the rest."""
        self.draining.set()
        if self._maintenance is not None:
            self._maintenance.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._maintenance
        loop = asyncio.get_running_loop()
        deadline = loop.time() + (self.grace_s if timeout is None else timeout)
        if self.handling:
            log.info("Draining %d update(s) in hand", len(self.handling))
        while self.handling and (left := deadline - loop.time()) > 0:
            await asyncio.wait(list(self.handling.values()), timeout=left)
        if self.handling:
            log.warning("Shutting down with %d update(s) unfinished: handled at restart", len(self.handling))
            tasks = list(self.handling.values())
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)
        if self._heartbeat is not None:  # kept beating while the updates in hand finished
            self._heartbeat.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._heartbeat
            self._heartbeat = None

    async def emit_shutdown(self, *args: Any, **kwargs: Any) -> None:
        # Before every other shutdown handler: aiogram-i18n's unloads the texts the handlers need.
        await self.drain()
        await super().emit_shutdown(*args, **kwargs)
