"""Estimates and their answers remembered, for a process that answers many users (the bot).

`Estimates.run` is `core.inverse.solve.run` remembered (a bounded LRU), keyed by the request as the
estimator reads it (the validated `Request`, as JSON) and by the `Catalog` object: `/offers reload`
builds a new catalogue, so nothing sized from the old one is reused. A request naming a Hugging Face
model is sized from a `MemoryHub`: its estimate is reused only while every record it read from the hub
is still the very one the hub holds (a model looked up since, evicted, or looked up again is sized
afresh); with any other hub, or none (which may reach the network), nothing is remembered, nor are
errors. `Estimates.answer` is `core.language.answer.build_answer` remembered per result, language and
notes (an answer that compares with a previous one is built each time). Results and answers are
shared by every caller, so none may change one: an `Answer` is frozen; a `Result` is only read (or
copied: `model_copy(update=...)`). Not thread-safe: one event loop.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from cachetools import LRUCache

from core.catalogue.catalog import Catalog, default_catalog
from core.contract import Assumption, Request, Result
from core.inverse.solve import run
from core.language.answer import Answer, build_answer
from core.language.words import normalize_lang
from core.model.hub import Hub, MemoryHub
from core.sizing.estimate import parse_request

# ~50 KB a result (its verdicts, offers, mitigations): ~13 MB in all. Enough for every user of a
# crowd to press "📋 Details" or follow up on their last answer (a few hundred at once).
ESTIMATES_SIZE = 256
# Answers kept per result: its languages × the notes its questions came with (a handful).
ANSWERS_PER_RESULT = 8


class _Reading(MemoryHub):
    """The hub as one estimate reads it, noting which record it read for each repository."""

    def __init__(self, hub: MemoryHub) -> None:
        super().__init__(hub.records, hub.key)
        self.read: dict[str, object | None] = {}

    def config(self, repo_id: str) -> dict[str, Any]:
        self.read[repo_id] = self.records.get(self.key(repo_id))
        return super().config(repo_id)

    def parameter_counts(self, repo_id: str) -> dict[str, int] | None:
        self.read[repo_id] = self.records.get(self.key(repo_id))
        return super().parameter_counts(repo_id)


@dataclass
class _Entry:
    result: Result
    hub_reads: tuple[tuple[str, object | None], ...]  # (repository, the record read: None if none)
    answers: dict[tuple[str, str | None, tuple[str, ...]], Answer] = field(default_factory=dict)

    def current(self, hub: MemoryHub) -> bool:
        """Whether the hub still holds every record the estimate read (the same objects)."""
        return all(hub.records.get(hub.key(repo)) is record for repo, record in self.hub_reads)


class _Entries(LRUCache[tuple[Catalog, str], _Entry]):
    """The remembered estimates, least recently used dropped past `size`; an entry dropped or
    removed leaves `by_result` with it."""

    def __init__(self, size: int, by_result: dict[int, _Entry]) -> None:
        super().__init__(size)
        self.by_result = by_result

    def __delitem__(self, key: tuple[Catalog, str]) -> None:
        entry = self[key]
        super().__delitem__(key)
        self.by_result.pop(id(entry.result), None)


class Estimates:
    """`run` and `answer`, remembered; `hits` and `misses` count the estimates (for tests and logs).

    The bot sizes one request again and again: "📋 Details" and a follow-up read the last answer
    again, and a crowd come from one post asks alike; the short answer and its details read the same
    `Answer`."""

    def __init__(self, size: int = ESTIMATES_SIZE) -> None:
        self.size = size
        self._by_result: dict[int, _Entry] = {}  # id(entry.result) → entry, for `answer`
        self._entries = _Entries(size, self._by_result)
        self.hits = 0
        self.misses = 0

    def run(
        self, request: Request | dict[str, Any], catalog: Catalog | None = None, *, hub: Hub | None = None
    ) -> Result:
        """`core.inverse.solve.run(request, catalog, hub=hub)`, the same result object while it holds."""
        catalog = catalog or default_catalog()
        if not isinstance(hub, MemoryHub):
            return run(request, catalog, hub=hub)
        req = parse_request(request)
        key = (catalog, req.model_dump_json())
        entry = self._entries.get(key)  # a hit is the most recently used
        if entry is not None and entry.current(hub):
            self.hits += 1
            return entry.result
        self.misses += 1
        reading = _Reading(hub)
        result = run(req, catalog, hub=reading)
        self._entries.pop(key, None)  # a stale entry of this request
        entry = _Entry(result, tuple(reading.read.items()))
        self._entries[key] = entry
        self._by_result[id(result)] = entry
        return result

    def answer(
        self,
        result: Result,
        lang: str,
        notes: Sequence[Assumption] = (),
        previous: Result | None = None,
        currency: str | None = None,
    ) -> Answer:
        """`core.language.answer.build_answer(result, lang, notes, previous)`; built once for a result `run`
        remembers (without `previous`)."""
        entry = self._by_result.get(id(result))
        if previous is not None or entry is None or entry.result is not result:
            return build_answer(result, lang, notes, previous, currency)
        key = (normalize_lang(lang), currency, tuple(n.model_dump_json() for n in notes))
        answer = entry.answers.get(key)
        if answer is None:
            if len(entry.answers) >= ANSWERS_PER_RESULT:
                entry.answers.clear()
            answer = entry.answers[key] = build_answer(result, lang, notes, currency=currency)
        return answer

    def remembered(self) -> list[tuple[Catalog, Request, Result]]:
        """What is remembered: each result with the catalogue and the request it was sized from."""
        return [(c, Request.model_validate_json(r), e.result) for (c, r), e in self._entries.items()]

    def clear(self) -> None:
        self._entries.clear()
        self._by_result.clear()

    def __len__(self) -> int:
        return len(self._entries)
