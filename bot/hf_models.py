"""Models users name by their Hugging Face id (or huggingface.co link) that the catalogue lacks.

Such a model is looked up when it is first asked for: the database cache first (`bot.db.hf_cache`,
shared by replicas, so the second user is answered at once), then the Hub itself (`core.hf.HttpHub`:
config.json and the parameter counts, both within `LOOKUP_BUDGET_S`, no retries, in a worker thread,
with the update's transaction committed first so no lock waits on the network). What was found is
kept in memory too, for the estimates that follow (details, follow-ups, inline): they size it from
`hub()`, a `core.hf.MemoryHub`, and never reach the network themselves.

Offline, not found, or a config we do not read: the user gets one clear sentence in their language
(`hf-*` in bot.ftl) at once, instead of a long wait and an English error. Set `HF_LOOKUP=0` to
answer only from the catalogue (and the cache).
"""

from __future__ import annotations

import asyncio
import logging
from collections import OrderedDict
from typing import Any

from sqlalchemy.ext.asyncio import AsyncSession

from bot.db import hf_cache
from bot.db.hf_cache import FOUND, NOT_FOUND, UNSUPPORTED, HubAnswer
from core import hf
from core.catalog import Catalog
from core.errors import CoreError, UnknownModelError

log = logging.getLogger(__name__)

UNAVAILABLE = "unavailable"  # the Hub did not answer in time: not cached, asked again next time
OFF = "off"  # HF_LOOKUP=0 and nothing cached
KNOWN = "known"  # in the catalogue, or not a Hugging Face id at all: nothing to look up
MEMORY_SIZE = 512  # models kept in memory (a config.json is a few KB)
# The thread's own budget is LOOKUP_BUDGET_S; this bounds a request stuck past its socket timeouts.
WAIT_SLACK_S = 0.5


def fetch(repo_id: str, endpoint: str, budget_s: float) -> HubAnswer | None:
    """In a worker thread: what the Hub says of `repo_id`; None when it did not answer in time."""
    try:
        config, counts = hf.look_up(repo_id, hf.HttpHub(endpoint, budget_s))
    except UnknownModelError:
        return HubAnswer(repo_id, NOT_FOUND)
    except hf.HubUnavailable as e:
        log.info("Hugging Face look-up of %s failed: %s", repo_id, e.message)
        return None
    except CoreError as e:
        log.info("Hugging Face config of %s is not one we read: %s", repo_id, e.message)
        return HubAnswer(repo_id, UNSUPPORTED)
    return HubAnswer(repo_id, FOUND, config, counts)


class HfModels:
    """The models read from the Hub, in memory (bounded), over the database cache."""

    def __init__(self, budget_s: float = hf.LOOKUP_BUDGET_S) -> None:
        self.budget_s = budget_s
        self._found: OrderedDict[str, tuple[dict[str, Any], dict[str, int] | None]] = OrderedDict()
        self._inflight: dict[str, asyncio.Future[HubAnswer | None]] = {}
        self.fetches = 0  # look-ups that went to the network: for tests and logs

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
        session: AsyncSession,
        *,
        endpoint: str = hf.HF_ENDPOINT,
        enabled: bool = True,
    ) -> str:
        """Make `model` sizeable if it is a Hugging Face id: KNOWN, FOUND, NOT_FOUND, UNSUPPORTED,
        UNAVAILABLE or OFF."""
        if not self.needs_lookup(model, catalog):
            return KNOWN
        key = hf_cache.key_of(model)
        if key in self._found:
            self._found.move_to_end(key)
            return FOUND
        cached = await hf_cache.get(session, model)
        if cached is None:
            if not enabled:
                return OFF
            if session.in_transaction():  # nothing of this update waits on the network
                await session.commit()
            cached = await self._fetch_once(key, model, endpoint, self.budget_s)
            if cached is None:
                return UNAVAILABLE
            await hf_cache.put(session, cached)
        if cached.status == FOUND and cached.config is not None:
            self._remember(key, cached.config, cached.parameter_counts)
        return cached.status

    async def _fetch_once(self, key: str, repo_id: str, endpoint: str, budget_s: float) -> HubAnswer | None:
        """One network look-up per id at a time: users asking for it meanwhile wait for the same one."""
        running = self._inflight.get(key)
        if running is not None:
            return await self._wait(running, repo_id, budget_s)
        loop = asyncio.get_running_loop()
        future = loop.run_in_executor(None, fetch, repo_id, endpoint, budget_s)
        self._inflight[key] = future
        self.fetches += 1
        try:
            return await self._wait(future, repo_id, budget_s)
        finally:
            self._inflight.pop(key, None)

    @staticmethod
    async def _wait(
        future: asyncio.Future[HubAnswer | None], repo_id: str, budget_s: float
    ) -> HubAnswer | None:
        try:
            return await asyncio.wait_for(asyncio.shield(future), budget_s + WAIT_SLACK_S)
        except TimeoutError:
            log.info("Hugging Face look-up of %s ran past %.1f s", repo_id, budget_s)
            return None

    def _remember(self, key: str, config: dict[str, Any], counts: dict[str, int] | None) -> None:
        self._found[key] = (config, counts)
        self._found.move_to_end(key)
        while len(self._found) > MEMORY_SIZE:
            self._found.popitem(last=False)


HF_MODELS = HfModels()
