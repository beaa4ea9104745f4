"""Renders for the picture worker in tests, instead of the real one (`bot.picture_worker.render`):
module-level, in a module of their own that imports little, since the worker imports it by name."""

from __future__ import annotations

import os
import threading

from bot import picture_worker
from core.language.answer import Answer

CRASH_EXIT_CODE = 3


def crash_on_russian(answer: Answer) -> tuple[bytes, list[str]]:
    """The worker dies (as on a segfault) drawing a Russian answer; draws the others."""
    if answer.lang == "ru":
        os._exit(CRASH_EXIT_CODE)
    return picture_worker.render(answer)


def fail_always(answer: Answer) -> tuple[bytes, list[str]]:
    raise RuntimeError("no fonts today")


def hang(answer: Answer) -> tuple[bytes, list[str]]:
    threading.Event().wait()  # a render that never ends
    raise AssertionError("unreachable")


def drawn_labels(answer: Answer) -> tuple[bytes, list[str]]:
    """Draws as the bot does, and sends as the caption what the picture says of its bars: the total of
    the breakdown bar and each card's capacity label (a test reads them off the photo's caption)."""
    from core.layouts.picture import draw, layout, to_png

    lay = layout(answer)
    return to_png(draw(lay)), [lay.total_text, *(mark.label for mark in lay.marks)]
