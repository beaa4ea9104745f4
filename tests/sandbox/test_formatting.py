"""HTML parsing details that clients depend on: UTF-16 offsets, trimming, nesting, rendering."""

from __future__ import annotations

from tgsandbox.formatting import format_text, parse_html
from tgsandbox.render import render_entities


def spans(source: str) -> list[tuple[str, int, int]]:
    return [(e.type, e.offset, e.length) for e in parse_html(source).entities]


def test_offsets_are_utf16_units() -> None:
    assert spans("😀 <b>GPU</b>") == [("bold", 3, 3)]  # the emoji is a surrogate pair


def test_nested_entities_close_inner_first() -> None:
    assert spans("<b>a<i>b</i>c</b>") == [("italic", 1, 1), ("bold", 0, 3)]


def test_entities_follow_trimmed_text() -> None:
    formatted = format_text("  <b> hi</b> there ", "HTML")
    assert formatted.text == "hi there"
    assert [(e.type, e.offset, e.length) for e in formatted.entities] == [("bold", 0, 2)]


def test_unknown_named_entity_stays_literal_and_numeric_ones_decode() -> None:
    assert parse_html("&nbsp;&#65;&#x42;&lt").text == "&nbsp;AB<"


def test_plain_text_without_parse_mode_keeps_tags() -> None:
    assert format_text("<b>x</b>", None).text == "<b>x</b>"


def test_render_nested_and_links() -> None:
    parsed = parse_html('😀 <b>bold <i>both</i></b> <a href="https://x.org">site</a> <code>c</code>')
    assert render_entities(parsed.text, parsed.entities) == "😀 *bold _both_* site (https://x.org) `c`"
