"""The answer's picture as kept and sent: its PNG, its caption lines and Telegram's ids of its uploads
(`Picture`); the key it is cached by, a hash of what it shows (`picture_key`); its caption as Telegram
HTML within Telegram's 1024 (`caption_html`). Drawn and sent by ``bot.pictures``."""

from __future__ import annotations

import asyncio
import hashlib
from dataclasses import dataclass, field
from html import escape

from core.language.answer import Answer

MAX_CAPTION = 1024  # Telegram's caption limit, in UTF-16 code units after entity parsing


@dataclass
class Picture:
    png: bytes
    caption: list[str]
    file_ids: dict[int, str] = field(default_factory=dict)  # bot id → Telegram's id of the upload
    # bot id → the first upload on its way (its file id, None if it failed): the others wait for it
    uploads: dict[int, asyncio.Future[str | None]] = field(default_factory=dict, repr=False, compare=False)


def picture_key(answer: Answer) -> str:
    """A hash of what the picture shows (not of the answer's other lines)."""
    shown = (
        answer.lang,
        answer.lead,
        answer.need,
        answer.settings,
        answer.parts,
        answer.part_codes,
        answer.part_bytes,
        answer.cards,
        answer.verdict,
    )
    return hashlib.sha256(repr(shown).encode()).hexdigest()


def caption_html(lines: list[str]) -> str:
    """The caption as Telegram HTML: its first line in bold; lines from the end dropped to fit 1024."""
    kept = list(lines)
    while True:
        text = "\n".join([f"<b>{escape(kept[0])}</b>", *map(escape, kept[1:])]) if kept else ""
        plain = "\n".join(kept)
        if len(plain.encode("utf-16-le")) // 2 <= MAX_CAPTION or len(kept) <= 1:
            return text
        kept.pop()
