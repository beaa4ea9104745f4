"""The answer's picture in the chat: rendered off the event loop, cached, sent after the text answer.

- **When.** With every result in a private chat (the dialog's result, a quick answer, a follow-up
  such as "а в int4?"), right after the text answer, which stays the answer: a render that fails,
  times out or finds the renderer busy sends nothing more, and the user still has every number (the
  caption repeats what the picture shows, see `core.picture.caption`). Not in groups (a second message
  per question is noise there), not in inline mode (an inline result cannot upload a photo, and has to
  answer at once), not for comparisons and details (they are lists, not one breakdown).
  `ANSWER_PICTURES=0` turns them off.
- **Off the loop.** matplotlib draws in a pool of `RENDER_WORKERS` thread(s): the loop keeps
  handling other updates while one renders. At most `MAX_PENDING` renders wait for it; past that the
  picture is skipped (the text has gone already), so a burst cannot queue work without bound.
- **Cached** by what the picture shows (the answer's lead, parts, cards: a hash of them; the same
  request answered again hashes the same, and an offer's new price does not reuse a stale picture):
  the PNG and its caption, and once Telegram has it, its `file_id`, so a repeated answer is re-sent
  by id without drawing or uploading it again.
"""

from __future__ import annotations

import asyncio
import hashlib
import logging
from collections import OrderedDict
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from html import escape

from aiogram import Bot
from aiogram.exceptions import TelegramAPIError
from aiogram.types import BufferedInputFile
from aiohttp import ClientError

from core.answer import Answer

log = logging.getLogger(__name__)

RENDER_WORKERS = 1  # matplotlib is not thread-safe across figures sharing fonts: one drawing at a time
MAX_PENDING = 4  # renders waiting or running; more are skipped (≈ 0.6 s of work at ~150 ms each)
RENDER_TIMEOUT_S = 5.0  # a render past this is given up (the text answer has been sent)
CACHE_SIZE = 128  # pictures kept (~100 KB each)
MAX_CAPTION = 1024  # Telegram's caption limit, in UTF-16 code units after entity parsing


@dataclass
class Picture:
    png: bytes
    caption: list[str]
    file_ids: dict[int, str] = field(default_factory=dict)  # bot id → Telegram's id of the upload


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


def _render(answer: Answer) -> Picture:
    """In a worker thread: the PNG and its caption (matplotlib is imported here on the first call)."""
    from core.picture import caption, draw, layout, to_png

    lay = layout(answer)
    return Picture(png=to_png(draw(lay)), caption=caption(lay))


def caption_html(lines: list[str]) -> str:
    """The caption as Telegram HTML: the lead in bold; lines from the end dropped to fit 1024."""
    kept = list(lines)
    while True:
        text = "\n".join([f"<b>{escape(kept[0])}</b>", *map(escape, kept[1:])]) if kept else ""
        plain = "\n".join(kept)
        if len(plain.encode("utf-16-le")) // 2 <= MAX_CAPTION or len(kept) <= 1:
            return text
        kept.pop()


class Pictures:
    """The renderer and its cache; one per process (`PICTURES`), shared by every Dispatcher."""

    def __init__(self, workers: int = RENDER_WORKERS, max_pending: int = MAX_PENDING) -> None:
        self.workers = workers
        self.max_pending = max_pending
        self.pending = 0
        self.rendered = 0  # pictures drawn (not taken from the cache): for tests and logs
        self._executor: ThreadPoolExecutor | None = None
        self._cache: OrderedDict[str, Picture] = OrderedDict()

    async def picture(self, answer: Answer) -> Picture | None:
        """The answer's picture, from the cache or drawn in the pool; None when busy or failed."""
        key = picture_key(answer)
        cached = self._cache.get(key)
        if cached is not None:
            self._cache.move_to_end(key)
            return cached
        if self.pending >= self.max_pending:
            log.info("picture skipped: %d renders pending", self.pending)
            return None
        if self._executor is None:
            self._executor = ThreadPoolExecutor(self.workers, thread_name_prefix="picture")
        self.pending += 1
        try:
            loop = asyncio.get_running_loop()
            drawn = await asyncio.wait_for(
                loop.run_in_executor(self._executor, _render, answer), RENDER_TIMEOUT_S
            )
        except Exception:
            log.exception("could not draw the answer's picture; the text answer stands")
            return None
        finally:
            self.pending -= 1
        self.rendered += 1
        self._cache[key] = drawn
        while len(self._cache) > CACHE_SIZE:
            self._cache.popitem(last=False)
        return drawn

    async def send(self, bot: Bot, chat_id: int, answer: Answer) -> bool:
        """Send the answer's picture to `chat_id`; False when it was not (busy, failed: logged)."""
        picture = await self.picture(answer)
        if picture is None:
            return False
        photo = picture.file_ids.get(bot.id) or BufferedInputFile(picture.png, filename="answer.png")
        try:
            sent = await bot.send_photo(chat_id, photo, caption=caption_html(picture.caption))
        except (TimeoutError, TelegramAPIError, ClientError) as e:
            log.info("could not send the answer's picture (%s); the text answer stands", e)
            return False
        if sent.photo:
            picture.file_ids[bot.id] = sent.photo[-1].file_id
        return True

    def close(self) -> None:
        if self._executor is not None:
            self._executor.shutdown(wait=False, cancel_futures=True)
            self._executor = None


PICTURES = Pictures()
