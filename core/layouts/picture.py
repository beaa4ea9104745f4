"""The answer as a picture: one PNG card (1280×720) laid out from an `Answer`, nothing else.

What it shows: the verdict and the price as the title (the answer's lead), the memory asked, and the
breakdown as one stacked bar — bytes per card of the requested configuration, largest part first —
against the usable memory of the user's own card and of the recommended one (a vertical line each,
labelled with the card and its usable memory; the heading above the bar says the share used). A
recommended configuration with another number of cards gets a bar of its own below (its per-card
need, one colour) against its own line: no line is read against a bar it does not belong to. Every text drawn
comes from `layout(answer)`, and every number drawn is in the text answer sent just before the picture
(a test checks it); the caption is one line, the settings the estimate used, never cut. The bars'
geometry is in the layout (bytes), the figure's rectangles carry it (`gid` 'segment:<code>', 'bar:<i>').
Drawn by `core.layouts.picture_drawing`, every text legible on a phone (`MIN_PHONE_PX`).
"""

from __future__ import annotations

from core.language.answer import Answer
from core.layouts.picture_drawing import (
    DARK_TEXT_ON,
    DPI,
    HEIGHT_PX,
    LABEL_PT,
    LINE_SPACING,
    MARGIN_PX,
    MIN_PHONE_PX,
    PHONE_WIDTH_PX,
    PNG_COMPRESSION,
    POINTS_PER_INCH,
    TEXT_PT,
    TITLE_PT,
    WIDTH_PX,
    draw,
    line_height,
    to_png,
)
from core.layouts.picture_layout import (
    AXIS_MARGIN,
    FONT,
    GLYPHS,
    NO_VERDICT_COLOUR,
    OTHER_COLOUR,
    PART_COLOURS,
    STACK_COLOURS,
    VERDICT_COLOURS,
    Bar,
    Layout,
    Mark,
    Segment,
    caption,
    drawable,
    layout,
    numbers_in,
)

__all__ = [
    "AXIS_MARGIN",
    "DARK_TEXT_ON",
    "DPI",
    "FONT",
    "GLYPHS",
    "HEIGHT_PX",
    "LABEL_PT",
    "LINE_SPACING",
    "MARGIN_PX",
    "MIN_PHONE_PX",
    "NO_VERDICT_COLOUR",
    "OTHER_COLOUR",
    "PART_COLOURS",
    "PHONE_WIDTH_PX",
    "PNG_COMPRESSION",
    "POINTS_PER_INCH",
    "STACK_COLOURS",
    "TEXT_PT",
    "TITLE_PT",
    "VERDICT_COLOURS",
    "WIDTH_PX",
    "Bar",
    "Layout",
    "Mark",
    "Segment",
    "caption",
    "draw",
    "drawable",
    "layout",
    "line_height",
    "numbers_in",
    "render_png",
    "to_png",
]


def render_png(answer: Answer) -> bytes:
    """The answer's picture as PNG bytes (1280×720)."""
    return to_png(draw(layout(answer)))
