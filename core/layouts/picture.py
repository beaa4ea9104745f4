"""The answer as a picture: one PNG card (1280×720) laid out from an `Answer`, nothing else.

What it shows: the verdict and the price as the title (the answer's lead), the memory asked, and the
breakdown as one stacked bar — bytes per card of the requested configuration, largest part first —
against the usable memory of the user's own card and of the recommended one (a vertical line each,
labelled with the card and its usable memory; the heading above the bar says the share used).
A recommended configuration with another number of cards needs another amount per card: it gets a
bar of its own below (its per-card need, one colour), against its own line, so no line is read
against a bar it does not belong to.

Every text drawn comes from `layout(answer)`, and every number drawn is in the text answer sent just
before the picture (a test checks it); the caption is one line, the settings the estimate used (the
picture's own settings line may be cut, the caption never is). The bars' geometry is in the layout
(bytes), and the figure's rectangles carry it (`gid` 'segment:<code>', 'bar:<i>').

Sizes on a phone: Telegram shows a 1280-pixel-wide photo about `PHONE_WIDTH_PX` = 380 points wide.
The smallest text drawn is `MIN_PHONE_PX` = 11 points there — the smallest text style of Apple's
Human Interface Guidelines (Caption 2, 11 pt) — i.e. an em of ≥ 37 px in the image, 27 pt at 100 dpi
(`LABEL_PT`). The axis carries no numbers of its own; legend entries flow onto as many rows as they
need and are never cut. Drawn with matplotlib's Agg canvas on a `Figure` of its own (no pyplot, no
global backend state); matplotlib is imported when the first picture is drawn, not with the core.
"""

from __future__ import annotations

import io
import re
from collections.abc import Iterable
from dataclasses import dataclass
from functools import lru_cache
from typing import TYPE_CHECKING, Any

from core.language.answer import Answer
from core.language.cards import VERDICT_ICONS
from core.language.phrases import format_bytes
from core.language.words import label, t

if TYPE_CHECKING:
    from matplotlib.backends.backend_agg import RendererAgg
    from matplotlib.figure import Figure

WIDTH_PX, HEIGHT_PX, DPI = 1280, 720, 100
MARGIN_PX = 40
PHONE_WIDTH_PX = 380  # Telegram's width of a photo in a chat on a phone, in points
MIN_PHONE_PX = 11  # the smallest text on the phone (Apple HIG's smallest style, Caption 2: 11 pt)
POINTS_PER_INCH = 72
# The smallest font size that keeps MIN_PHONE_PX at phone width: 11 × 1280 / 380 = 37.05 px = 26.7 pt.
LABEL_PT = -(-MIN_PHONE_PX * WIDTH_PX * POINTS_PER_INCH // (PHONE_WIDTH_PX * DPI))  # ceiling: 27
TITLE_PT, TEXT_PT = 32, 28
LINE_SPACING = 1.2  # a line's height, in ems
AXIS_MARGIN = 1.03  # the axis runs this far past the largest of the bars and the cards' lines
PNG_COMPRESSION = 1  # zlib level: a third of the default's time; Telegram re-encodes photos anyway
FONT = "DejaVu Sans"  # bundled with matplotlib: Latin, Cyrillic, ₽, ×, ✔ ✘ ⚠

VERDICT_COLOURS = {"fits": "#1b7f3b", "tight": "#b86e00", "does_not_fit": "#c0262d"}
NO_VERDICT_COLOUR = "#c0262d"
# One colour per breakdown component (Okabe–Ito, readable with colour-vision deficiencies).
PART_COLOURS = {
    "weights": "#0072B2",
    "kv_cache": "#E69F00",
    "activations": "#009E73",
    "gradients": "#CC79A7",
    "optimizer_states": "#D55E00",
    "text_encoders": "#56B4E9",
    "vae_decode": "#F0E442",
    "overhead": "#8C8C8C",
}
OTHER_COLOUR = "#444444"
# The models beside the main one (a RAG stack: `extra_models:<i>` parts), one colour each.
STACK_COLOURS = ("#6A3D9A", "#B15928", "#1F78B4", "#33A02C")
DARK_TEXT_ON = frozenset({"kv_cache", "vae_decode", "text_encoders"})  # light colours: dark sizes on them
# Emoji of the text answer the font has no glyph for, and their drawable stand-ins (others are dropped).
GLYPHS = {"✅": "✔", "❌": "✘", "⚠️": "⚠"}
# Drawn widths of words, (word, points, bold) → figure width; the vocabulary of answers is small.
_WIDTHS: dict[tuple[str, int, bool], float] = {}
MAX_MEASURED = 20_000


@dataclass(frozen=True)
class Segment:
    """One part of the stacked bar: `start`..`start + size` bytes along the axis."""

    code: str
    name: str  # 'KV cache'
    label: str  # the legend's words, with the size: 'KV cache: 16.0 GB'
    size_text: str  # drawn inside the segment when it is wide enough
    start: int
    size: int
    colour: str


@dataclass(frozen=True)
class Mark:
    """A card's usable memory per card: a vertical line at `at` bytes on bar `row`, with its verdict."""

    text: str  # the heading above its bar: '✔ fits: 26.9 GB · 62 % used'
    label: str  # beside the line: the card and its usable memory, '1× RTX 4090 48 GB: 43.2 GB'
    at: int
    row: int  # 0: the breakdown's bar; 1, 2: the bar of another configuration
    own: bool
    colour: str


@dataclass(frozen=True)
class Bar:
    """The per-card need of a configuration with another number of cards than asked (one colour)."""

    row: int
    size: int
    colour: str


@dataclass(frozen=True)
class Layout:
    lang: str
    title: str  # the lead: verdict, card, price, speed
    subtitle: str  # the memory asked
    settings: str
    total: int
    total_text: str  # 'per card: 26.9 GB', at the breakdown bar's end
    segments: tuple[Segment, ...]
    bars: tuple[Bar, ...]
    marks: tuple[Mark, ...]
    axis_max: int
    colour: str  # of the title: the verdict's


def layout(answer: Answer) -> Layout:
    """What to draw, and where along the bars' axis (bytes), from the one answer."""
    lang = answer.lang
    segments: list[Segment] = []
    start = 0
    for (name, size_text), code, size in zip(answer.parts, answer.part_codes, answer.part_bytes, strict=True):
        legend = t("picture-part", lang, part=name, size=size_text)
        colour = PART_COLOURS.get(code, OTHER_COLOUR)
        if code.startswith("extra_models:"):
            colour = STACK_COLOURS[int(code.split(":", 1)[1]) % len(STACK_COLOURS)]
        segments.append(Segment(code, name, legend, size_text, start, size, colour))
        start += size
    bars: list[Bar] = []
    marks: list[Mark] = []
    # Two cards on the breakdown's bar: each heading names its card, not the verdict (its colour says it).
    shared = sum(card.as_asked for card in answer.cards) > 1
    for card in answer.cards:
        colour = VERDICT_COLOURS.get(card.verdict, NO_VERDICT_COLOUR)
        row = 0
        if not card.as_asked:
            row = len(bars) + 1
            bars.append(Bar(row, card.need_bytes, colour))
        used = t(
            "picture-used", lang, icon=VERDICT_ICONS.get(card.verdict, ""),
            verdict=card.config if card.as_asked and shared else label("verdict", card.verdict, lang),
            need=format_bytes(card.need_bytes, lang),
            percent=round(100 * card.need_bytes / max(card.usable_bytes, 1)),
        )  # fmt: skip
        capacity = t("picture-capacity", lang, card=card.config, size=format_bytes(card.usable_bytes, lang))
        marks.append(Mark(drawable(used), drawable(capacity), card.usable_bytes, row, card.own, colour))
    longest = max([start, *(b.size for b in bars), *(m.at for m in marks), 1])
    return Layout(
        lang=lang,
        title=drawable(answer.lead),
        subtitle=drawable(answer.need),
        settings=drawable(answer.settings),
        total=start,
        total_text=t("picture-total", lang, total=format_bytes(start, lang)),
        segments=tuple(segments),
        bars=tuple(bars),
        marks=tuple(marks),
        axis_max=round(longest * AXIS_MARGIN),
        colour=VERDICT_COLOURS.get(answer.verdict or "", NO_VERDICT_COLOUR),
    )


def caption(lay: Layout) -> list[str]:
    """The photo's caption: one line, what was sized (the model and its settings). The text answer just
    above it says the rest; repeating its lead made the headline appear three times on the screen."""
    return [lay.settings]


def drawable(text: str) -> str:
    """`text` with the emoji the font cannot draw replaced (✅ → ✔) or dropped (🚀), spaces tidied."""
    for emoji, glyph in GLYPHS.items():
        text = text.replace(emoji, glyph)
    known = _font_chars()
    kept = "".join(ch for ch in text if ord(ch) in known or ch in "\n ")
    return re.sub(r"[ \t]{2,}", " ", kept).strip()


def numbers_in(texts: Iterable[str]) -> set[str]:
    """The numbers written in `texts` ('26,9', '149', '32 768'), to check that a caption has them."""
    return {n for text in texts for n in re.findall(r"\d+(?:[.,\u00a0\u202f]\d+)*", text)}


def render_png(answer: Answer) -> bytes:
    """The answer's picture as PNG bytes (1280×720)."""
    return to_png(draw(layout(answer)))


# --- drawing ---------------------------------------------------------------------------------------


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


def draw(lay: Layout) -> Figure:
    """The figure of a layout, not yet rendered: the texts at the top, the bars in the middle (each with
    its heading above it and its cards' labelled lines), the legend at the bottom. In figure
    coordinates, no axes (they would cost a third of the render)."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure
    from matplotlib.lines import Line2D
    from matplotlib.patches import Rectangle

    fig = Figure(figsize=(WIDTH_PX / DPI, HEIGHT_PX / DPI), dpi=DPI, facecolor="white")
    pen = _Pen(fig, FigureCanvasAgg(fig).get_renderer())
    left, width = MARGIN_PX / WIDTH_PX, 1 - 2 * MARGIN_PX / WIDTH_PX
    line_h = line_height(LABEL_PT)
    pad = 6 / WIDTH_PX  # between a card's line and its label

    def x_of(n_bytes: float) -> float:
        return left + width * n_bytes / lay.axis_max

    y = 1 - 20 / HEIGHT_PX
    for text, points, style in (
        (lay.title, TITLE_PT, {"fontweight": "bold", "color": lay.colour}),
        (lay.subtitle, TEXT_PT, {"color": "#222222"}),
        (lay.settings, LABEL_PT, {"color": "#555555", "style": "italic"}),
    ):
        lines = 2 if points > LABEL_PT else 1
        fitted = pen.fit(text, points, width, lines=lines, bold="fontweight" in style)
        pen.text(left, y, fitted, points, va="top", **style)
        y -= len(fitted.splitlines()) * line_height(points) + 4 / HEIGHT_PX

    legend = _legend_rows(pen, lay.segments, width)
    legend_top = 0.015 + len(legend) * line_h
    rows = 1 + len(lay.bars)
    # Above each bar its heading: the verdict line of each card drawn on it (in the card's colour, the
    # line's style: dashed for the user's card), or the breakdown's total when no card is on it; below
    # it the labels of its cards' lines.
    headings: list[list[tuple[str, str]]] = [[] for _ in range(rows)]
    labelled: list[int] = [0] * rows
    for mark in lay.marks:
        headings[mark.row].append((mark.text, mark.colour))
        labelled[mark.row] += 1
    if not headings[0]:
        headings[0].append((lay.total_text, "#222222"))
    fitted_headings = [
        [(pen.fit(text, LABEL_PT, width, lines=1, bold=True), colour) for text, colour in heading]
        for heading in headings
    ]
    heading_lines = sum(len(text.splitlines()) for heading in fitted_headings for text, _ in heading)
    gap = 0.012
    room = y - legend_top - 0.01
    bar_h = min(max((room - (heading_lines + sum(labelled)) * line_h - gap * 2 * rows) / rows, 0.05), 0.16)
    tops: list[float] = []
    top = y
    for row, heading in enumerate(fitted_headings):
        for text, colour in heading:
            top -= len(text.splitlines()) * line_h
            pen.text(
                left,
                top + 0.004,
                text,
                LABEL_PT,
                va="bottom",
                fontweight="bold",
                color=colour,
                linespacing=LINE_SPACING,
            )
        tops.append(top - 0.004)
        top -= 0.004 + bar_h + gap + labelled[row] * line_h + gap

    def add_bar(row: int, start: float, size: float, colour: str, gid: str) -> None:
        fig.add_artist(
            Rectangle(
                (x_of(start), tops[row] - bar_h),
                width * size / lay.axis_max,
                bar_h,
                facecolor=colour,
                edgecolor="white",
                linewidth=2,
                gid=gid,
            )
        )

    for seg in lay.segments:
        add_bar(0, seg.start, seg.size, seg.colour, f"segment:{seg.code}")
        if width * seg.size / lay.axis_max >= pen.width(seg.size_text, LABEL_PT, True) + 0.01:
            dark = seg.code in DARK_TEXT_ON
            pen.text(
                x_of(seg.start + seg.size / 2),
                tops[0] - bar_h / 2,
                seg.size_text,
                LABEL_PT,
                ha="center",
                va="center",
                fontweight="bold",
                color="#111111" if dark else "white",
            )
    for i, bar in enumerate(lay.bars):
        add_bar(bar.row, 0, bar.size, bar.colour, f"bar:{i}")
    below = [tops[row] - bar_h - gap for row in range(rows)]
    for i, mark in enumerate(lay.marks):
        x = x_of(mark.at)
        fig.add_artist(
            Line2D(
                [x, x],
                [below[mark.row], tops[mark.row] + 0.004],
                color=mark.colour,
                linewidth=4,
                linestyle=(0, (3, 1.5)) if mark.own else "-",
                gid=f"card:{i}",
            )
        )
        # the card's label beside its line, on the side with room for it
        label_w = pen.width(mark.label, LABEL_PT)
        on_right = x + pad + label_w <= left + width
        pen.text(
            x + pad if on_right else x - pad,
            below[mark.row],
            mark.label,
            LABEL_PT,
            ha="left" if on_right else "right",
            va="top",
            color=mark.colour,
            gid=f"capacity:{i}",
        )
        below[mark.row] -= line_h

    for row, entries in enumerate(legend):
        top = legend_top - row * line_h
        for x, seg in entries:
            fig.add_artist(
                Rectangle(
                    (x, top - line_h * 0.8), 0.022, line_h * 0.7, facecolor=seg.colour, edgecolor="none"
                )
            )
            pen.text(
                x + LEGEND_SWATCH, top - line_h * 0.45, seg.label, LABEL_PT, va="center", color="#222222"
            )
    return fig


LEGEND_SWATCH = 0.03  # the colour square and its space, figure width
LEGEND_GAP = 0.03  # between two entries on a row


def _legend_rows(pen: _Pen, segments: Iterable[Segment], room: float) -> list[list[tuple[float, Segment]]]:
    """The legend's entries flowed onto rows (x of each entry): whole, never cut."""
    left = MARGIN_PX / WIDTH_PX
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


@lru_cache(maxsize=1)
def _font_chars() -> frozenset[int]:
    from matplotlib import font_manager
    from matplotlib.ft2font import FT2Font

    return frozenset(FT2Font(font_manager.findfont(FONT)).get_charmap())
