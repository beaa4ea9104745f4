"""Drawing a picture's `Layout` (`draw`) on a matplotlib `Figure` of its own with the Agg canvas (no
pyplot, no global backend state), and encoding it (`to_png`): the texts at the top, the bars in the
middle, the legend at the bottom, every text at least `MIN_PHONE_PX` points on a phone (see
`PHONE_WIDTH_PX`). matplotlib is imported when the first picture is drawn, not with the core."""

from __future__ import annotations

import io
from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from core.layouts.picture_layout import FONT, Layout, Segment

if TYPE_CHECKING:
    from matplotlib.backends.backend_agg import RendererAgg
    from matplotlib.figure import Figure

WIDTH_PX, HEIGHT_PX, DPI = 1280, 720, 100
MARGIN_PX = 40
# Sizes on a phone: Telegram shows a 1280-pixel-wide photo about PHONE_WIDTH_PX = 380 points wide.
# The smallest text drawn is MIN_PHONE_PX = 11 points there — the smallest text style of Apple's
# Human Interface Guidelines (Caption 2, 11 pt) — i.e. an em of ≥ 37 px in the image, 27 pt at 100 dpi
# (LABEL_PT). The axis carries no numbers of its own; legend entries flow onto as many rows as they
# need and are never cut; the picture's own settings line may be cut, the caption never is.
PHONE_WIDTH_PX = 380  # Telegram's width of a photo in a chat on a phone, in points
MIN_PHONE_PX = 11  # the smallest text on the phone (Apple HIG's smallest style, Caption 2: 11 pt)
POINTS_PER_INCH = 72
# The smallest font size that keeps MIN_PHONE_PX at phone width: 11 × 1280 / 380 = 37.05 px = 26.7 pt.
LABEL_PT = -(-MIN_PHONE_PX * WIDTH_PX * POINTS_PER_INCH // (PHONE_WIDTH_PX * DPI))  # ceiling: 27
TITLE_PT, TEXT_PT = 32, 28
LINE_SPACING = 1.2  # a line's height, in ems
PNG_COMPRESSION = 1  # zlib level: a third of the default's time; Telegram re-encodes photos anyway
DARK_TEXT_ON = frozenset({"kv_cache", "vae_decode", "text_encoders"})  # light colours: dark sizes on them
# Drawn widths of words, (word, points, bold) → figure width; the vocabulary of answers is small.
_WIDTHS: dict[tuple[str, int, bool], float] = {}
MAX_MEASURED = 20_000


class _Pen:
    """Places texts on the figure, measuring them with the Agg renderer that will draw them."""

    def __init__(self, fig: Figure, renderer: RendererAgg) -> None:
        self.fig, self.renderer = fig, renderer

    def width(self, text: str, points: int, bold: bool = False) -> float:
        """Width of `text` drawn at `points`, as a fraction of the figure's width: the sum of its words'
        (each measured once per process: FreeType's layout of a string costs about a millisecond)."""
        words = text.split(" ")
        space = self._measure(" ", points, bold) if len(words) > 1 else 0.0
        return sum(self._measure(w, points, bold) for w in words) + space * (len(words) - 1)

    def _measure(self, word: str, points: int, bold: bool) -> float:
        key = (word, points, bold)
        if key not in _WIDTHS:
            from matplotlib.font_manager import FontProperties

            props = FontProperties(family=FONT, size=points, weight="bold" if bold else "normal")
            w, _, _ = self.renderer.get_text_width_height_descent(word or " ", props, ismath=False)
            if len(_WIDTHS) > MAX_MEASURED:
                _WIDTHS.clear()
            _WIDTHS[key] = float(w) / WIDTH_PX
        return _WIDTHS[key]

    def fit(self, text: str, points: int, room: float, *, lines: int, bold: bool = False) -> str:
        """`text` wrapped into `room` (figure width), at most `lines` lines, the rest cut with '…'."""
        out: list[str] = []
        words = text.split(" ")
        while words and len(out) < lines:
            line = words.pop(0)
            while words and self.width(f"{line} {words[0]}", points, bold) <= room:
                line = f"{line} {words.pop(0)}"
            out.append(line)
        if words:
            last = out[-1].split(" ")
            while len(last) > 1 and self.width(" ".join([*last, "…"]), points, bold) > room:
                last.pop()
            out[-1] = " ".join([*last, "…"])
        return "\n".join(out)

    def text(self, x: float, y: float, text: str, points: int, **kwargs: Any) -> None:
        self.fig.text(x, y, text, fontsize=points, family=FONT, **kwargs)


def line_height(points: int) -> float:
    """One line of text at `points`, as a fraction of the figure's height."""
    return points * LINE_SPACING / POINTS_PER_INCH * DPI / HEIGHT_PX


LEFT, WIDTH = MARGIN_PX / WIDTH_PX, 1 - 2 * MARGIN_PX / WIDTH_PX  # the drawing's room, figure width
LINE_H = line_height(LABEL_PT)
PAD = 6 / WIDTH_PX  # between a card's line and its label
GAP = 0.012  # above and below each bar's block, figure height


def draw(lay: Layout) -> Figure:
    """The figure of a layout, not yet rendered: the texts at the top, the bars in the middle (each with
    its heading above it and its cards' labelled lines), the legend at the bottom. In figure
    coordinates, no axes (they would cost a third of the render)."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    fig = Figure(figsize=(WIDTH_PX / DPI, HEIGHT_PX / DPI), dpi=DPI, facecolor="white")
    pen = _Pen(fig, FigureCanvasAgg(fig).get_renderer())
    y = _draw_titles(pen, lay)
    legend = _legend_rows(pen, lay.segments, WIDTH)
    legend_top = 0.015 + len(legend) * LINE_H
    bars = _draw_headings(pen, lay, y, legend_top)
    _draw_segments(bars, lay)
    _draw_marks(bars, lay)
    _draw_legend(pen, legend, legend_top)
    return fig


def _draw_titles(pen: _Pen, lay: Layout) -> float:
    """The title, the memory asked and the settings, from the top; the height below them."""
    y = 1 - 20 / HEIGHT_PX
    for text, points, style in (
        (lay.title, TITLE_PT, {"fontweight": "bold", "color": lay.colour}),
        (lay.subtitle, TEXT_PT, {"color": "#222222"}),
        (lay.settings, LABEL_PT, {"color": "#555555", "style": "italic"}),
    ):
        lines = 2 if points > LABEL_PT else 1
        fitted = pen.fit(text, points, WIDTH, lines=lines, bold="fontweight" in style)
        pen.text(LEFT, y, fitted, points, va="top", **style)
        y -= len(fitted.splitlines()) * line_height(points) + 4 / HEIGHT_PX
    return y


@dataclass(frozen=True)
class _Bars:
    """Where the bars go: the top of each row's bar and their height, in figure coordinates."""

    pen: _Pen
    axis_max: int
    tops: list[float]
    bar_h: float

    def x_of(self, n_bytes: float) -> float:
        return LEFT + WIDTH * n_bytes / self.axis_max

    def add_bar(self, row: int, start: float, size: float, colour: str, gid: str) -> None:
        from matplotlib.patches import Rectangle

        self.pen.fig.add_artist(
            Rectangle(
                (self.x_of(start), self.tops[row] - self.bar_h),
                WIDTH * size / self.axis_max,
                self.bar_h,
                facecolor=colour,
                edgecolor="white",
                linewidth=2,
                gid=gid,
            )
        )


def _headings(pen: _Pen, lay: Layout) -> tuple[list[list[tuple[str, str]]], list[int]]:
    """Above each bar its heading: the verdict line of each card drawn on it (in the card's colour, the
    line's style: dashed for the user's card), or the breakdown's total when no card is on it; and how
    many cards' lines each bar has (their labels go below it)."""
    rows = 1 + len(lay.bars)
    headings: list[list[tuple[str, str]]] = [[] for _ in range(rows)]
    labelled: list[int] = [0] * rows
    for mark in lay.marks:
        headings[mark.row].append((mark.text, mark.colour))
        labelled[mark.row] += 1
    if not headings[0]:
        headings[0].append((lay.total_text, "#222222"))
    fitted = [
        [(pen.fit(text, LABEL_PT, WIDTH, lines=1, bold=True), colour) for text, colour in heading]
        for heading in headings
    ]
    return fitted, labelled


def _draw_headings(pen: _Pen, lay: Layout, y: float, legend_top: float) -> _Bars:
    """Each bar's heading, the bars sized to share the room between the titles and the legend."""
    fitted_headings, labelled = _headings(pen, lay)
    rows = len(labelled)
    heading_lines = sum(len(text.splitlines()) for heading in fitted_headings for text, _ in heading)
    room = y - legend_top - 0.01
    bar_h = min(max((room - (heading_lines + sum(labelled)) * LINE_H - GAP * 2 * rows) / rows, 0.05), 0.16)
    tops: list[float] = []
    top = y
    for row, heading in enumerate(fitted_headings):
        for text, colour in heading:
            top -= len(text.splitlines()) * LINE_H
            pen.text(
                LEFT,
                top + 0.004,
                text,
                LABEL_PT,
                va="bottom",
                fontweight="bold",
                color=colour,
                linespacing=LINE_SPACING,
            )
        tops.append(top - 0.004)
        top -= 0.004 + bar_h + GAP + labelled[row] * LINE_H + GAP
    return _Bars(pen, lay.axis_max, tops, bar_h)


def _draw_segments(bars: _Bars, lay: Layout) -> None:
    """The breakdown's stacked bar (each part's size inside it where it fits), then the other bars."""
    for seg in lay.segments:
        bars.add_bar(0, seg.start, seg.size, seg.colour, f"segment:{seg.code}")
        if WIDTH * seg.size / lay.axis_max >= bars.pen.width(seg.size_text, LABEL_PT, True) + 0.01:
            dark = seg.code in DARK_TEXT_ON
            bars.pen.text(
                bars.x_of(seg.start + seg.size / 2),
                bars.tops[0] - bars.bar_h / 2,
                seg.size_text,
                LABEL_PT,
                ha="center",
                va="center",
                fontweight="bold",
                color="#111111" if dark else "white",
            )
    for i, bar in enumerate(lay.bars):
        bars.add_bar(bar.row, 0, bar.size, bar.colour, f"bar:{i}")


def _draw_marks(bars: _Bars, lay: Layout) -> None:
    """Each card's line across its bar, and its label below the bar."""
    from matplotlib.lines import Line2D

    below = [top - bars.bar_h - GAP for top in bars.tops]
    for i, mark in enumerate(lay.marks):
        x = bars.x_of(mark.at)
        bars.pen.fig.add_artist(
            Line2D(
                [x, x],
                [below[mark.row], bars.tops[mark.row] + 0.004],
                color=mark.colour,
                linewidth=4,
                linestyle=(0, (3, 1.5)) if mark.own else "-",
                gid=f"card:{i}",
            )
        )
        # the card's label beside its line, on the side with room for it
        label_w = bars.pen.width(mark.label, LABEL_PT)
        on_right = x + PAD + label_w <= LEFT + WIDTH
        bars.pen.text(
            x + PAD if on_right else x - PAD,
            below[mark.row],
            mark.label,
            LABEL_PT,
            ha="left" if on_right else "right",
            va="top",
            color=mark.colour,
            gid=f"capacity:{i}",
        )
        below[mark.row] -= LINE_H


def _draw_legend(pen: _Pen, legend: list[list[tuple[float, Segment]]], legend_top: float) -> None:
    from matplotlib.patches import Rectangle

    for row, entries in enumerate(legend):
        top = legend_top - row * LINE_H
        for x, seg in entries:
            pen.fig.add_artist(
                Rectangle(
                    (x, top - LINE_H * 0.8), 0.022, LINE_H * 0.7, facecolor=seg.colour, edgecolor="none"
                )
            )
            pen.text(
                x + LEGEND_SWATCH, top - LINE_H * 0.45, seg.label, LABEL_PT, va="center", color="#222222"
            )


LEGEND_SWATCH = 0.03  # the colour square and its space, figure width
LEGEND_GAP = 0.03  # between two entries on a row


def _legend_rows(pen: _Pen, segments: Iterable[Segment], room: float) -> list[list[tuple[float, Segment]]]:
    """The legend's entries flowed onto rows (x of each entry): whole, never cut."""
    left = LEFT
    rows: list[list[tuple[float, Segment]]] = []
    x = left + room  # start a row at the first entry
    for seg in segments:
        w = LEGEND_SWATCH + pen.width(seg.label, LABEL_PT)
        if x + w > left + room and (not rows or rows[-1]):
            rows.append([])
            x = left
        rows[-1].append((x, seg))
        x += w + LEGEND_GAP
    return rows


def to_png(fig: Figure) -> bytes:
    """Rendered by Agg once and encoded by Pillow (a dependency of matplotlib) at zlib level 1: a third
    of `savefig`'s time (it draws again and compresses harder)."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from PIL import Image

    canvas = fig.canvas if isinstance(fig.canvas, FigureCanvasAgg) else FigureCanvasAgg(fig)
    canvas.draw()
    image = Image.frombuffer("RGBA", canvas.get_width_height(), canvas.buffer_rgba(), "raw", "RGBA", 0, 1)
    buffer = io.BytesIO()
    image.convert("RGB").save(buffer, format="PNG", compress_level=PNG_COMPRESSION)
    return buffer.getvalue()
