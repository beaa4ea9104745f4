"""The picture's layout (`layout`): what the PNG card of an `Answer` shows and where along its bars'
axis (bytes): the title, the stacked breakdown, the bars of other card counts, the cards' lines, each
in its colour; and `drawable`, the answer's words as the picture's font can draw them. No drawing here
(`core.layouts.picture_drawing` draws a `Layout`); `core.layouts.picture` is the public door."""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from functools import lru_cache

from core.language.answer import Answer
from core.language.cards import VERDICT_ICONS
from core.language.phrases import format_bytes
from core.language.words import label, t

AXIS_MARGIN = 1.03  # the axis runs this far past the largest of the bars and the cards' lines
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
# Emoji of the text answer the font has no glyph for, and their drawable stand-ins (others are dropped).
GLYPHS = {"✅": "✔", "❌": "✘", "⚠️": "⚠"}


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


@lru_cache(maxsize=1)
def _font_chars() -> frozenset[int]:
    from matplotlib import font_manager
    from matplotlib.ft2font import FT2Font

    return frozenset(FT2Font(font_manager.findfont(FONT)).get_charmap())
