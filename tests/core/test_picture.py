"""The answer as a picture (`core.picture`): a 1280×720 PNG whose bars are the breakdown, whose lines
are the cards' usable memory, and whose every number is also in the caption."""

from __future__ import annotations

import io

import pytest
from matplotlib.image import imread
from matplotlib.lines import Line2D
from matplotlib.patches import Rectangle

from core.answer import build_answer
from core.estimate import estimate
from core.parse import understand
from core.picture import (
    HEIGHT_PX,
    WIDTH_PX,
    caption,
    draw,
    drawable,
    layout,
    numbers_in,
    render_png,
    to_png,
)

QUESTIONS = [
    ("llama 3.1 8b int4 32k 4 пользователя", "ru"),  # fits the recommended card
    ("llama 3.1 70b fp16 on 3090", "en"),  # the own card fails, four rented cards fit
    ("qwen2.5 32b на 4090 48", "ru"),  # the own card is offered, two of them fit
    ("flux dev 1024x1024", "en"),  # a diffusion pipeline: text encoders, VAE
    ("llama 3.1 8b full fine-tune", "en"),  # training: gradients and optimizer states
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
def test_every_number_drawn_is_in_the_caption(question: str, lang: str) -> None:
    _, answer = answer_for(question, lang)
    lay = layout(answer)
    text = "\n".join(caption(lay))
    drawn = numbers_in(all_texts(draw(lay)))
    assert drawn, "the picture shows its numbers"
    assert {n for n in drawn if n not in text} == set()
    # the decision's numbers: the total, each part, the price
    for _, size in answer.parts:
        assert drawable(size) in text
    assert answer.need in text or drawable(answer.need) in text


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
