"""Plain-text rendering of messages, the way a terminal can show them."""

from __future__ import annotations

from aiogram.types import MessageEntity

from .state import ChatMessage

# How each entity shows in plain text: (opening, closing) around the entity's text.
MARKERS = {
    "bold": ("*", "*"),
    "italic": ("_", "_"),
    "underline": ("__", "__"),
    "strikethrough": ("~", "~"),
    "spoiler": ("||", "||"),
    "code": ("`", "`"),
    "pre": ("```\n", "\n```"),
    "blockquote": ("> ", ""),
    "expandable_blockquote": ("> ", ""),
}


def _python_index(text: str) -> list[int]:
    """Map each UTF-16 offset (Telegram's unit) to a Python string index."""
    index = []
    for position, char in enumerate(text):
        index.extend([position] * (2 if ord(char) > 0xFFFF else 1))
    index.append(len(text))
    return index


def render_entities(text: str, entities: list[MessageEntity]) -> str:
    """Show bold as *x*, italic as _x_, code as `x`, links as "x (url)" and so on."""
    at = _python_index(text)
    insertions: list[tuple[int, int, int, str]] = []
    for entity in entities:
        start, end = at[min(entity.offset, len(at) - 1)], at[min(entity.offset + entity.length, len(at) - 1)]
        opening, closing = MARKERS.get(entity.type, ("", ""))
        if entity.type == "text_link":
            closing = f" ({entity.url})"
        # Outer entities open first and close last; closings at a position come before openings.
        insertions.append((start, 1, -end, opening))
        insertions.append((end, 0, -start, closing))
    pieces, last = [], 0
    for position, _, _, marker in sorted(insertions, key=lambda item: item[:3]):
        pieces.append(text[last:position])
        pieces.append(marker)
        last = position
    pieces.append(text[last:])
    return "".join(pieces)


def render_message(
    message: ChatMessage, numbered_from: int = 1, *, edited: bool = False, photo_path: str | None = None
) -> str:
    """A bot message with its media flags and its buttons numbered ``[n]`` from ``numbered_from``; a
    photo saved to a file shows as ``[photo: <path>]``."""
    lines = ["bot (edited):" if edited else "bot:"]
    if message.photo_file_id:
        lines.append(f"[photo: {photo_path}]" if photo_path else "[photo]")
    if message.document_name:
        lines.append(f"[document: {message.document_name}]")
    if message.text:
        lines.append(render_entities(message.text, message.entities))
    number = numbered_from
    for row in message.buttons:
        cells = []
        for button in row:
            cells.append(f"[{number}] {button.text}" + (f" -> {button.url}" if button.url else ""))
            number += 1
        lines.append("  " + "   ".join(cells))
    return "\n".join(lines)
