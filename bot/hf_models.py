"""Models users name by their Hugging Face id (or huggingface.co link) that the catalogue lacks.

Such a model is looked up when it is first asked for (`HfModels.ensure`): the database cache first
(`bot.db.hf_cache`, shared by replicas), then the Hub itself (`core.model.hub.HttpHub`, within
`LOOKUP_BUDGET_S`, no retries, in a worker thread, the update's transaction committed first so no
lock waits on the network). What was found is kept in memory for the estimates that follow, which
size it from `hub()` and never reach the network themselves. Offline, not found, a config refused
(`core.model.checks`, never cached) or a name the Hub cannot have: the user gets one clear sentence
in their language (`ANSWERS`) at once. Set `HF_LOOKUP=0` to answer only from the catalogue (and the
cache). A slow or hostile Hub cannot hold the bot: look-ups run in MAX_LOOKUPS threads of their own,
each within its budget, and a circuit breaker (`Breaker`) stops asking a failing Hub (see `HfModels`).
"""

from __future__ import annotations

import asyncio
import logging
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from html import escape
from typing import Any

from cachetools import LRUCache
from sqlalchemy.ext.asyncio import AsyncSession

from bot.db import hf_cache
from bot.db.hf_cache import FOUND, NOT_FOUND, UNSUPPORTED, HubAnswer
from bot.db.work import UpdateWork
from bot.metrics import HF_BUCKETS, Tally, Timing
from core.catalogue.catalog import Catalog
from core.errors import CoreError, UnknownModelError
from core.model import config as hf_config
from core.model import hub as hf

log = logging.getLogger(__name__)

UNAVAILABLE = "unavailable"  # the Hub did not answer in time: not cached, asked again next time
OFF = "off"  # HF_LOOKUP=0 and nothing cached
KNOWN = "known"  # in the catalogue, or not a Hugging Face id at all: nothing to look up
NOT_A_HUB_ID = "not_a_hub_id"  # `org/модель`: no repository can have that name; never sent
REFUSED = "refused"  # prefix: "refused-range" etc., a config with values no model has (not cached)
MEMORY_SIZE = 512  # models kept in memory (a config.json is a few KB)
# The thread's own deadline is LOOKUP_BUDGET_S; this bounds a wait past it (a slow DNS answer).
WAIT_SLACK_S = 0.5
MAX_LOOKUPS = 4
"""Look-ups running at once (threads of their own). A look-up ends within its budget, so four
serve ~80 new models a minute; one more meanwhile is told "try again in a minute" at once."""
BREAKER_FAILURES = 3  # look-ups in a row that failed (time-outs, 5xx) open the breaker...
BREAKER_OPEN_S = 30.0  # ...for this long: answered "try later" at once, the Hub not asked
# bot.ftl key of each answer that is not a model to size (dialog.ensure_models says it)
ANSWERS = {
    NOT_FOUND: "hf-not-found",
    UNAVAILABLE: "hf-unavailable",
    UNSUPPORTED: "hf-unsupported",
    NOT_A_HUB_ID: "hf-not-a-hub-id",
    **{f"{REFUSED}-{code}": f"hf-refused-{code}" for code in ("range", "inconsistent", "malformed")},
}


def fetch(repo_id: str, endpoint: str, budget_s: float) -> HubAnswer | hf.ConfigRefused | None:
    """In a worker thread: what the Hub says of `repo_id`; the refusal when its config holds values
    no model has; None when it did not answer in time."""
    try:
        config, counts = hf.look_up(repo_id, hf.HttpHub(endpoint, budget_s))
    except UnknownModelError:
        return HubAnswer(repo_id, NOT_FOUND)
    except hf.HubUnavailable as e:
        log.info("Hugging Face look-up of %s failed: %s", repo_id, e.message)
        return None
    except hf.ConfigRefused as e:
        log.warning("Hugging Face config of %s refused: %s", repo_id, e.message)
        return e
    except CoreError as e:
        log.info("Hugging Face config of %s is not one we read: %s", repo_id, e.message)
        return HubAnswer(repo_id, UNSUPPORTED)
    return HubAnswer(repo_id, FOUND, config, counts)


def checked(answer: HubAnswer) -> hf.ConfigRefused | None:
    """The refusal of a cached config the checks would refuse now; None when it passes."""
    try:
        hf_config.spec_from_config(answer.config or {}, answer.repo_id, answer.parameter_counts)
    except hf.ConfigRefused as e:
        return e
    except CoreError as e:  # not one we read: refused as malformed rather than sized
        log.warning("cached config of %s no longer read: %s", answer.repo_id, e.message)
        return hf.ConfigRefused(answer.repo_id, "malformed", field="config.json")
    return None


def outcome(answer: HubAnswer | hf.ConfigRefused | None) -> str:
    """A network look-up's outcome as counted (bot.metrics): the cached status, refused or unavailable."""
    if answer is None:
        return UNAVAILABLE
    return REFUSED if isinstance(answer, hf.ConfigRefused) else answer.status


class Breaker:
    """A circuit breaker: open after `failures` failed look-ups in a row, for `open_s` seconds; then
    one look-up is let through, and a failure opens it again at once."""

    def __init__(
        self,
        failures: int = BREAKER_FAILURES,
        open_s: float = BREAKER_OPEN_S,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.failures, self.open_s, self.clock = failures, open_s, clock
        self._failed = 0
        self._open_until = 0.0

    def closed(self) -> bool:
        return self.clock() >= self._open_until

    def record(self, ok: bool) -> None:
        if ok:
            self._failed = 0
            return
        self._failed += 1
        if self._failed >= self.failures:
            self._open_until = self.clock() + self.open_s
            log.warning("the Hub failed %d times in a row: not asked for %.0f s", self._failed, self.open_s)
            self._failed = self.failures - 1  # once open, one more failure opens it again


class HfModels:
    """The models read from the Hub, in memory (bounded), over the database cache.

    The database cache is shared by replicas, so the second user is answered at once; the models
    found are kept for the estimates that follow (details, follow-ups, inline), which size them from
    `hub()`, a `core.model.hub.MemoryHub`. Config.json and the parameter counts are both read within
    `LOOKUP_BUDGET_S`. Offline, not found, a config we do not read or one with values no model has
    (`core.model.checks`: refused, never cached), or a name the Hub cannot have (`org/модель`): one
    sentence in the user's language (`ANSWERS`, `hf-*` in bot.ftl) at once, instead of a long wait
    and an English error. Look-ups run in their own MAX_LOOKUPS threads (not the loop's default
    executor, which aiohttp's DNS look-ups and `/offers reload` need), each ends within its budget
    (`core.model.hub.HttpHub`), one more while all are busy is "try later" at once, and after
    BREAKER_FAILURES failures in a row the Hub is not asked for BREAKER_OPEN_S seconds (`Breaker`)."""

    def __init__(
        self,
        budget_s: float = hf.LOOKUP_BUDGET_S,
        breaker: Breaker | None = None,
        max_lookups: int = MAX_LOOKUPS,
    ) -> None:
        self.budget_s = budget_s
        self.breaker = breaker or Breaker()
        self.max_lookups = max_lookups
        self._executor = ThreadPoolExecutor(max_lookups, thread_name_prefix="hf-lookup")
        self._running = 0  # threads still at work (one may outlive its wait by WAIT_SLACK_S)
        self._lock = threading.Lock()
        self._found: LRUCache[str, tuple[dict[str, Any], dict[str, int] | None]] = LRUCache(MEMORY_SIZE)
        self._refused: LRUCache[str, dict[str, str]] = LRUCache(MEMORY_SIZE)
        self._inflight: dict[str, asyncio.Future[HubAnswer | hf.ConfigRefused | None]] = {}
        self.fetches = 0  # look-ups that went to the network: for tests and logs
        self.lookups = Tally()  # by outcome, not tried ones too (bot.metrics)
        self.lookup_time = Timing(HF_BUCKETS)  # seconds of each look-up that went to the network

    def hub(self) -> hf.MemoryHub:
        """What the estimates size Hugging Face ids from: only what was looked up."""
        return hf.MemoryHub(self._found, key=hf_cache.key_of)

    @staticmethod
    def needs_lookup(model: Any, catalog: Catalog) -> bool:
        return isinstance(model, str) and hf.looks_like_hf_id(model) and catalog.find_model(model) is None

    async def ensure(
        self,
        model: Any,
        catalog: Catalog,
        db: AsyncSession | UpdateWork,
        *,
        endpoint: str = hf.HF_ENDPOINT,
        enabled: bool = True,
    ) -> str:
        """Make `model` sizeable if it is a Hugging Face id: KNOWN, FOUND, NOT_FOUND, UNSUPPORTED,
        UNAVAILABLE, OFF, NOT_A_HUB_ID or "refused-<code>" (`why` gives the sentence's details)."""
        if not self.needs_lookup(model, catalog):
            return KNOWN
        if not hf.is_hub_id(model.strip()):
            return NOT_A_HUB_ID
        key = hf_cache.key_of(model)
        if self._found.get(key) is not None:  # a hit is the most recently used
            return FOUND
        cached = (
            await db.read(hf_cache.get, model)
            if isinstance(db, UpdateWork)
            else await hf_cache.get(db, model)
        )
        if cached is not None and cached.status == FOUND:
            refused = checked(cached)  # a row kept before the checks (`core.model.checks`) existed
            if refused is not None:
                return self._refuse(key, refused)
        if cached is None:
            if not enabled:
                return OFF
            if isinstance(db, AsyncSession) and db.in_transaction():  # nothing waits on the network
                await db.commit()
            fetched = await self._fetch_once(key, model, endpoint, self.budget_s)
            if fetched is None:
                return UNAVAILABLE
            if isinstance(fetched, hf.ConfigRefused):
                return self._refuse(key, fetched)
            cached = fetched
            await _keep(db, cached)
        if cached.status == FOUND and cached.config is not None:
            self._remember(key, cached.config, cached.parameter_counts)
        return cached.status

    def _refuse(self, key: str, refused: hf.ConfigRefused) -> str:
        self._refused[key] = {k: escape(v) for k, v in refused.details.items()}
        return f"{REFUSED}-{refused.code}"

    def why(self, model: Any) -> dict[str, str]:
        """The details of the last refusal of `model`'s config (key, value, bounds), HTML-escaped."""
        return self._refused.get(hf_cache.key_of(model), {}) if isinstance(model, str) else {}

    async def _fetch_once(
        self, key: str, repo_id: str, endpoint: str, budget_s: float
    ) -> HubAnswer | hf.ConfigRefused | None:
        """One network look-up per id at a time: users asking for it meanwhile wait for the same one.
        None at once while the breaker is open or MAX_LOOKUPS are running."""
        running = self._inflight.get(key)
        if running is not None:
            return await self._wait(running, repo_id, budget_s)
        if not self.breaker.closed():
            log.info("Hugging Face look-up of %s not tried: the Hub failed just before", repo_id)
            self.lookups.add("breaker_open")
            return None
        if self._running >= self.max_lookups:
            log.warning("Hugging Face look-up of %s not tried: %d running", repo_id, self._running)
            self.lookups.add("busy")
            return None
        loop = asyncio.get_running_loop()
        with self._lock:
            self._running += 1
        future = loop.run_in_executor(self._executor, self._fetch, repo_id, endpoint, budget_s)
        self._inflight[key] = future
        self.fetches += 1
        started = loop.time()
        try:
            answer = await self._wait(future, repo_id, budget_s)
            self.breaker.record(answer is not None)
            self.lookup_time.observe(loop.time() - started)
            self.lookups.add(outcome(answer))
            return answer
        finally:
            self._inflight.pop(key, None)

    def _fetch(self, repo_id: str, endpoint: str, budget_s: float) -> HubAnswer | hf.ConfigRefused | None:
        """`fetch`, counted out when the thread is done (whatever became of the loop waiting)."""
        try:
            return fetch(repo_id, endpoint, budget_s)
        finally:
            with self._lock:
                self._running -= 1

    @staticmethod
    async def _wait(
        future: asyncio.Future[HubAnswer | hf.ConfigRefused | None], repo_id: str, budget_s: float
    ) -> HubAnswer | hf.ConfigRefused | None:
        try:
            return await asyncio.wait_for(asyncio.shield(future), budget_s + WAIT_SLACK_S)
        except TimeoutError:
            log.info("Hugging Face look-up of %s ran past %.1f s", repo_id, budget_s)
            return None

    def _remember(self, key: str, config: dict[str, Any], counts: dict[str, int] | None) -> None:
        self._found[key] = (config, counts)


HF_MODELS = HfModels()


async def _keep(db: AsyncSession | UpdateWork, answer: HubAnswer) -> None:
    """The Hub's answer into the cache table (an update's work: committed before this returns)."""
    if isinstance(db, UpdateWork):
        await db.write(hf_cache.put, answer)
    else:
        await hf_cache.put(db, answer)
