"""The picture worker process: `python -m bot.picture_worker [module:function]`, started by
`bot.pictures` with the bot, draws answers with matplotlib apart from the bot's interpreter, so a
render holds no GIL the event loop needs.

Protocol on stdin/stdout: frames of a 4-byte big-endian length and a pickle. The worker sends `READY`
once matplotlib is loaded; then the bot sends `(id, answer)` and the worker answers `(id, True, (png,
caption_lines))` or `(id, False, traceback_text)`, one at a time, in order; anything else it prints
goes to stderr. It lives no longer than the bot: the bot holds the only write end of its stdin, so
when the bot exits (`kill -9` included) the worker reads EOF and exits. It imports nothing of aiogram,
the database or the settings (it starts in about a second, most of it matplotlib's import).
"""

from __future__ import annotations

import contextlib
import importlib
import os
import pickle
import signal
import sys
import traceback
from collections.abc import Callable
from typing import Any, BinaryIO

from core.language.answer import Answer

HEADER_BYTES = 4  # a frame's length, big-endian
READY = (0, True, None)  # the first frame: started, matplotlib loaded (requests are numbered from 1)
MAX_FRAME = 64 * 1024 * 1024  # a longer length means the stream is out of step: stop reading it
NICENESS = 10
"""The worker's scheduling priority below the bot's (``nice``): it draws with the CPU the answers
leave. A render takes 0.1-0.3 s of a core; under a crowd on a 2-core host the worker drawing at the
bot's priority took one core from the bot and the rest of the host for as long as the crowd lasted
(`bench/bot_load.py`: 50 users walking the guided dialog got their steps 0.2× as fast as a bare bot's
with pictures, 0.5× without). At 10 (Linux's weight 110 against 1024) the bot and Telegram's side come
first; a picture then takes longer, and one past `bot.pictures.RENDER_TIMEOUT_S` is skipped, as when
the renderer is busy: the text answer has every number. Read when a worker is started (its argument)."""


def render(answer: Answer) -> tuple[bytes, list[str]]:
    """The answer's PNG and its caption's lines (see `core.layouts.picture`)."""
    from core.layouts.picture import caption, draw, layout, to_png

    lay = layout(answer)
    return to_png(draw(lay)), caption(lay)


def reference(function: Callable[..., Any]) -> str:
    """'module:function', how the worker is told which render to run (a module-level function)."""
    name = f"{function.__module__}:{function.__qualname__}"
    if "<" in name:  # a lambda or a nested function: the worker could not import it
        raise ValueError(f"{name} is not a module-level function")
    return name


def resolve(name: str) -> Callable[[Answer], tuple[bytes, list[str]]]:
    module, _, function = name.partition(":")
    found: Callable[[Answer], tuple[bytes, list[str]]] = getattr(importlib.import_module(module), function)
    return found


def frame(value: object) -> bytes:
    body = pickle.dumps(value, protocol=pickle.HIGHEST_PROTOCOL)
    return len(body).to_bytes(HEADER_BYTES, "big") + body


def read_frame(stream: BinaryIO) -> Any:
    """The next frame's value; None at the end of the stream (the bot has gone)."""
    header = stream.read(HEADER_BYTES)
    if len(header) < HEADER_BYTES:
        return None
    size = int.from_bytes(header, "big")
    body = stream.read(size) if size <= MAX_FRAME else b""
    return pickle.loads(body) if len(body) == size else None


def serve(requests: BinaryIO, replies: BinaryIO, draw: Callable[[Answer], tuple[bytes, list[str]]]) -> None:
    """Answer requests until the end of `requests`."""
    while (request := read_frame(requests)) is not None:
        ident, answer = request
        reply: tuple[int, bool, object]
        try:
            reply = (ident, True, draw(answer))
        except Exception:
            reply = (ident, False, traceback.format_exc())
        try:
            replies.write(frame(reply))
            replies.flush()
        except BrokenPipeError:  # the bot has gone while this one was drawn
            return


def warm() -> None:
    """What every render needs, loaded before the first: matplotlib's Agg canvas and the font."""
    import matplotlib.backends.backend_agg  # noqa: F401

    from core.layouts.picture import drawable

    drawable("")  # the font's character map


def main(argv: list[str]) -> None:
    # Ctrl-C in a terminal reaches the whole process group: the bot stops the worker itself.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    niceness, *function = argv  # as the bot's `NICENESS` was when it started this worker
    with contextlib.suppress(OSError, AttributeError):  # not where priorities cannot be lowered
        os.nice(int(niceness))
    draw = resolve(function[0]) if function else render
    replies = os.fdopen(os.dup(sys.stdout.fileno()), "wb")
    os.dup2(sys.stderr.fileno(), sys.stdout.fileno())  # a stray print() goes to the log, not the frames
    warm()
    replies.write(frame(READY))
    replies.flush()
    serve(sys.stdin.buffer, replies, draw)


if __name__ == "__main__":
    main(sys.argv[1:])
