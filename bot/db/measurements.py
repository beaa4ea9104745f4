"""Measurements from pasted logs (table `measurements`): written when the user presses "store it",
listed and exported by admins (`/measurements`, `/measurements export`)."""

from __future__ import annotations

from typing import Any

from sqlalchemy import func, select
from sqlalchemy.ext.asyncio import AsyncSession

from bot.db.models import Measurement

COLUMNS = (
    "id", "created_at", "user_id", "kind", "gpu", "gpu_name", "model", "model_id",
    "total_bytes", "need_bytes", "failed_bytes", "reading",
)  # fmt: skip
"""measurements.csv's columns (`reading`: the reader's numbers as JSON)."""
MAX_TEXT = {"kind": 16, "gpu": 64, "gpu_name": 80, "model": 200, "model_id": 64}


async def add(session: AsyncSession, user_id: int | None, values: dict[str, Any]) -> int:
    """Store one measurement (texts cut to their columns); its id."""
    row = Measurement(user_id=user_id, **_fitted(values))
    session.add(row)
    await session.flush()
    return row.id


def _fitted(values: dict[str, Any]) -> dict[str, Any]:
    out = {k: v for k, v in values.items() if k in COLUMNS and k not in ("id", "created_at", "user_id")}
    for key, limit in MAX_TEXT.items():
        if isinstance(out.get(key), str):
            out[key] = out[key][:limit]
    return out


async def recent(session: AsyncSession, limit: int) -> tuple[int, list[Measurement]]:
    """How many there are, and the newest `limit`."""
    count = await session.scalar(select(func.count()).select_from(Measurement)) or 0
    rows = await session.scalars(select(Measurement).order_by(Measurement.id.desc()).limit(limit))
    return count, list(rows)


async def rows(session: AsyncSession) -> list[tuple[Any, ...]]:
    """Every measurement, oldest first, as COLUMNS."""
    import json

    found = await session.scalars(select(Measurement).order_by(Measurement.id))
    return [
        tuple(json.dumps(m.reading, ensure_ascii=False) if c == "reading" else getattr(m, c) for c in COLUMNS)
        for m in found
    ]
