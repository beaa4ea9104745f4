"""The Hugging Face look-up cache: what the Hub said of a model id (its config.json and parameter counts,
or that it has no such model), kept in the database so every replica and every later user gets it
without the network. See `bot.hf_models` for when it is read and written."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import timedelta
from typing import Any

from sqlalchemy.ext.asyncio import AsyncSession

from bot.db.models import HfModel, utc_now
from bot.db.upserts import dialect_insert

FOUND = "found"
NOT_FOUND = "not_found"  # no such repository, or gated / private: we cannot read its config
UNSUPPORTED = "unsupported"  # a config.json this estimator does not read (not a language model's)
STATUSES = (FOUND, NOT_FOUND, UNSUPPORTED)

# How long an answer stands. A config.json does not change once a model is published; "not found"
# may (a model announced before its weights, a typo fixed upstream): asked again after a few hours.
KEPT = {FOUND: timedelta(days=30), UNSUPPORTED: timedelta(days=7), NOT_FOUND: timedelta(hours=6)}


@dataclass(frozen=True)
class HubAnswer:
    repo_id: str
    status: str
    config: dict[str, Any] | None = None
    parameter_counts: dict[str, int] | None = None


def key_of(repo_id: str) -> str:
    """The Hub resolves ids case-insensitively (`qwen/qwen3-8b` is `Qwen/Qwen3-8B`)."""
    return repo_id.strip().lower()


async def get(session: AsyncSession, repo_id: str) -> HubAnswer | None:
    """The cached answer for `repo_id`, if there is one still standing."""
    row = await session.get(HfModel, key_of(repo_id))
    if row is None or row.status not in KEPT or utc_now() - row.fetched_at > KEPT[row.status]:
        return None
    counts = {str(k): int(v) for k, v in row.parameter_counts.items()} if row.parameter_counts else None
    return HubAnswer(row.repo_id, row.status, row.config, counts)


async def put(session: AsyncSession, answer: HubAnswer) -> None:
    """Keep (or replace) the answer; one statement, so two replicas writing the same id do not clash."""
    if answer.status not in STATUSES:
        raise ValueError(f"unknown status {answer.status!r}")
    values = {
        "repo_id": answer.repo_id,
        "status": answer.status,
        "config": answer.config,
        "parameter_counts": answer.parameter_counts,
        "fetched_at": utc_now(),
    }
    await session.execute(
        dialect_insert(session, HfModel)
        .values(repo_key=key_of(answer.repo_id), **values)
        .on_conflict_do_update(index_elements=[HfModel.repo_key], set_=values)
    )
