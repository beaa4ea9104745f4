"""The bot's picture service (`bot.pictures`): bounded, cached by what it shows, a caption within 1024."""

from __future__ import annotations

from bot.pictures import MAX_CAPTION, Pictures, caption_html, picture_key
from core.answer import build_answer
from core.estimate import estimate
from core.parse import understand


def answer_of(question: str, lang: str = "en"):  # type: ignore[no-untyped-def]
    understood = understand(question)
    return build_answer(estimate(understood.request), lang, understood.notes)


async def test_the_same_answer_is_drawn_once() -> None:
    pictures = Pictures()
    try:
        first = await pictures.picture(answer_of("llama 3.1 8b int4"))
        again = await pictures.picture(answer_of("llama 3.1 8b int4"))
        other = await pictures.picture(answer_of("llama 3.1 8b int4", "ru"))  # another language
    finally:
        pictures.close()
    assert first is not None and again is first and other is not None and other is not first
    assert pictures.rendered == 2


async def test_past_the_bound_the_picture_is_skipped() -> None:
    pictures = Pictures(max_pending=0)
    assert await pictures.picture(answer_of("llama 3.1 8b int4")) is None
    assert pictures.rendered == 0


def test_the_key_is_what_the_picture_shows() -> None:
    a, b = answer_of("llama 3.1 8b int4 8k"), answer_of("llama 3.1 8b int4 16k")
    assert picture_key(a) == picture_key(answer_of("llama 3.1 8b int4 8k"))
    assert picture_key(a) != picture_key(b)


def test_caption_is_escaped_bold_lead_and_fits() -> None:
    html = caption_html(["✔ Fits <here>", "a & b"])
    assert html == "<b>✔ Fits &lt;here&gt;</b>\na &amp; b"
    long = caption_html(["lead", *(f"line {i} " + "x" * 60 for i in range(40))])
    assert long.startswith("<b>lead</b>")
    plain = long.replace("<b>", "").replace("</b>", "")
    assert len(plain.encode("utf-16-le")) // 2 <= MAX_CAPTION
