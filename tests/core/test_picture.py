"""The answer as a picture (`core.layouts.picture`): a 1280×720 PNG whose bars are the breakdown, whose lines
are the cards' usable memory (labelled), whose every number is also in the text answer, readable at a
phone's width, with a one-line caption."""

from __future__ import annotations

import io

import pytest
from matplotlib.image import imread
from matplotlib.lines import Line2D
from matplotlib.patches import Rectangle
from matplotlib.text import Text

from core.language.answer import build_answer
from core.language.phrases import format_bytes
from core.layouts.picture import (
    DPI,
    HEIGHT_PX,
    MIN_PHONE_PX,
    PHONE_WIDTH_PX,
    WIDTH_PX,
    caption,
    draw,
    drawable,
    layout,
    numbers_in,
    render_png,
    to_png,
)
from core.layouts.plain import layout as text_layout
from core.parse import understand
from core.sizing.estimate import estimate

QUESTIONS = [
    ("llama 3.1 8b int4 32k 4 пользователя", "ru"),  # fits the recommended card
    ("llama 3.1 70b fp16 on 3090", "en"),  # the own card fails, four rented cards fit
    ("qwen2.5 32b на 4090 48", "ru"),  # the own card is offered, two of them fit
    ("flux dev 1024x1024", "en"),  # a diffusion pipeline: text encoders, VAE
    ("llama 3.1 8b full fine-tune", "en"),  # training: gradients and optimizer states
]
CROWDED = [
    *QUESTIONS,
    ("полное дообучение qwen2.5 7b на 4 h100", "ru"),  # long legend labels, the named cards
    ("qwen2.5 7b + bge-m3 + bge-reranker на 3090", "ru"),  # a RAG stack: a legend of many rows
]


def answer_for(question: str, lang: str):  # type: ignore[no-untyped-def]
    understood = understand(question)
    result = estimate(understood.request)
    return result, build_answer(result, lang, understood.notes)


def all_texts(fig) -> list[str]:  # type: ignore[no-untyped-def]
    return [t.get_text() for t in fig.findobj(lambda a: hasattr(a, "get_text") and a.get_text())]


@pytest.mark.parametrize(("question", "lang"), QUESTIONS)
def test_png_decodes_at_phone_size(question: str, lang: str) -> None:
    _, answer = answer_for(question, lang)
    png = render_png(answer)
    assert png.startswith(b"\x89PNG\r\n\x1a\n")
    pixels = imread(io.BytesIO(png), format="png")
    assert pixels.shape[:2] == (HEIGHT_PX, WIDTH_PX)
    assert pixels.std() > 0.05  # something is drawn on the white card


@pytest.mark.parametrize(("question", "lang"), QUESTIONS)
def test_bars_are_the_breakdown(question: str, lang: str) -> None:
    result, answer = answer_for(question, lang)
    lay = layout(answer)
    rec = result.recommendation
    # the breakdown of the configuration the lead sizes: the recommended one's where it has its own
    own = result.target is not None
    breakdown = rec.breakdown if rec is not None and rec.breakdown and not own else result.breakdown
    shown = {code: n for code, n in breakdown.items() if n > 0 or code == "overhead"}
    assert {s.code: s.size for s in lay.segments} == shown
    assert lay.total == sum(shown.values())
    # stacked: each segment starts where the previous one ends, largest first
    starts = [sum(x.size for x in lay.segments[:i]) for i in range(len(shown))]
    assert [s.start for s in lay.segments] == starts
    assert [s.size for s in lay.segments] == sorted(shown.values(), reverse=True)

    fig = draw(lay)
    rects = {r.get_gid(): r for r in fig.findobj(Rectangle) if r.get_gid()}
    scale = rects[f"segment:{lay.segments[0].code}"].get_width() / lay.segments[0].size
    for seg in lay.segments:
        assert rects[f"segment:{seg.code}"].get_width() == pytest.approx(seg.size * scale)
    for i, bar in enumerate(lay.bars):
        assert rects[f"bar:{i}"].get_width() == pytest.approx(bar.size * scale)


def test_lines_are_the_cards_usable_memory() -> None:
    result, answer = answer_for("llama 3.1 70b fp16 on 3090", "en")
    lay = layout(answer)
    assert result.target is not None and result.recommendation is not None
    own, rented = lay.marks
    assert own.own and own.at == result.target.usable_bytes and own.row == 0
    # four rented cards need another amount per card: a bar of its own, against its own line
    assert not rented.own and rented.row == 1
    assert lay.bars[0].size == result.recommendation.bytes_per_gpu
    fig = draw(lay)
    lines = {ln.get_gid(): ln for ln in fig.findobj(Line2D) if ln.get_gid()}
    rect = next(r for r in fig.findobj(Rectangle) if r.get_gid() == f"segment:{lay.segments[0].code}")
    left, scale = rect.get_x(), rect.get_width() / lay.segments[0].size
    for i, mark in enumerate(lay.marks):
        x = lines[f"card:{i}"].get_xdata()[0]
        assert x == pytest.approx(left + mark.at * scale)


@pytest.mark.parametrize(("question", "lang"), QUESTIONS)
def test_every_number_drawn_is_in_the_text_answer(question: str, lang: str) -> None:
    """The picture is never the only place a number appears: the text answer (sent just before it) has
    each — but the share of a card used, which the picture adds from two numbers the text shows."""
    _, answer = answer_for(question, lang)
    lay = layout(answer)
    shown = drawable(text_layout(answer))
    drawn = numbers_in(t for t in all_texts(draw(lay)) if "%" not in t)
    assert drawn, "the picture shows its numbers"
    assert {n for n in drawn if n not in shown} == set()


@pytest.mark.parametrize(("question", "lang"), QUESTIONS)
def test_caption_is_one_line_not_the_headline(question: str, lang: str) -> None:
    """The headline is in the text answer and the picture's title: the caption says what was sized,
    whole (the picture's own settings line may be cut)."""
    _, answer = answer_for(question, lang)
    lay = layout(answer)
    assert caption(lay) == [drawable(answer.settings)]
    assert "\n" not in caption(lay)[0] and lay.title not in caption(lay)[0]


@pytest.mark.parametrize(("question", "lang"), CROWDED)
def test_each_cards_line_is_labelled_with_the_card_its_memory_and_the_share_used(
    question: str, lang: str
) -> None:
    _, answer = answer_for(question, lang)
    lay = layout(answer)
    texts = all_texts(draw(lay))
    for card, mark in zip(answer.cards, lay.marks, strict=True):
        assert mark.label == f"{card.config}: {format_bytes(card.usable_bytes, lang)}"
        assert mark.label in texts
        percent = round(100 * card.need_bytes / card.usable_bytes)
        assert f"{percent} %" in mark.text and mark.text in texts


@pytest.mark.parametrize(("question", "lang"), CROWDED)
def test_legend_labels_are_whole_and_no_text_overlaps_another(question: str, lang: str) -> None:
    _, answer = answer_for(question, lang)
    lay = layout(answer)
    fig = draw(lay)
    texts = all_texts(fig)
    for seg in lay.segments:
        assert seg.label in texts, f"cut: {seg.label}"
    renderer = fig.canvas.get_renderer()
    boxes = [
        (a.get_text(), a.get_window_extent(renderer))
        for a in fig.findobj(Text) if a.get_text() and a.get_text() not in {s.size_text for s in lay.segments}
    ]  # fmt: skip
    for text, box in boxes:  # inside the picture
        assert box.x0 >= 0 and box.y0 >= 0 and box.x1 <= WIDTH_PX and box.y1 <= HEIGHT_PX, text
    for i, (one, a) in enumerate(boxes):
        for other, b in boxes[i + 1 :]:
            shared_x = min(a.x1, b.x1) - max(a.x0, b.x0)
            shared_y = min(a.y1, b.y1) - max(a.y0, b.y0)
            assert shared_x <= 1 or shared_y <= 1, f"{one!r} overlaps {other!r}"  # touching is fine


@pytest.mark.parametrize(("question", "lang"), CROWDED)
def test_smallest_text_is_readable_at_phone_width(question: str, lang: str) -> None:
    """Scaled to a phone's 380 points, every text's em is at least 11 points (Apple's smallest style),
    as measured on the drawing."""
    _, answer = answer_for(question, lang)
    fig = draw(layout(answer))
    scale = PHONE_WIDTH_PX / WIDTH_PX
    sizes = [a.get_fontsize() * DPI / 72 * scale for a in fig.findobj(Text) if a.get_text()]
    assert min(sizes) >= MIN_PHONE_PX == 11
    # the glyphs drawn: a capital's height at the smallest size, scaled, is over 7.7 px (DejaVu's cap
    # height is 0.73 em)
    renderer = fig.canvas.get_renderer()
    smallest = min((a for a in fig.findobj(Text) if a.get_text()), key=lambda a: a.get_fontsize())
    _, height, descent = renderer.get_text_width_height_descent("H", smallest.get_fontproperties(), False)
    assert (height - descent) * scale >= 0.7 * MIN_PHONE_PX


def test_title_is_the_verdict_and_the_price() -> None:
    _, ru = answer_for("llama 3.1 8b int4 32k 4 пользователя", "ru")
    lay = layout(ru)
    assert lay.title.startswith("✔ Влезет") and "149" in lay.title  # the lead, its emoji drawable
    assert "149" in " ".join(all_texts(draw(lay)))
    _, en = answer_for("llama 3.1 70b fp16 on 3090", "en")
    assert layout(en).title.startswith("✘ Does not fit on 1× RTX 3090")


def test_emoji_the_font_lacks_are_replaced_or_dropped() -> None:
    assert drawable("🚀 To rent: 2× H100") == "To rent: 2× H100"
    assert drawable("✅ fits · ❌ no · ⚠️ tight") == "✔ fits · ✘ no · ⚠ tight"


def test_same_answer_same_png() -> None:
    """Deterministic: the bot caches pictures by what they show."""
    _, answer = answer_for("mistral 7b q4_k_m", "en")
    fig = draw(layout(answer))
    assert to_png(fig) == render_png(answer)
