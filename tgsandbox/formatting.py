"""Telegram's HTML parse mode, ported from TDLib's ``parse_html`` so errors read exactly like Telegram's.

Offsets in error messages are UTF-8 byte offsets (as Telegram reports them); entity offsets and lengths
are UTF-16 code units (as the Bot API sends them).
"""

from __future__ import annotations

from dataclasses import dataclass

from aiogram.types import MessageEntity

from .errors import ApiError, bad_request

SUPPORTED_TAGS = frozenset(
    {
        "a",
        "b",
        "strong",
        "i",
        "em",
        "s",
        "strike",
        "del",
        "u",
        "ins",
        "tg-spoiler",
        "tg-emoji",
        "span",
        "pre",
        "code",
        "blockquote",
    }
)
ENTITY_TYPE_BY_TAG = {
    "b": "bold",
    "strong": "bold",
    "i": "italic",
    "em": "italic",
    "u": "underline",
    "ins": "underline",
    "s": "strikethrough",
    "strike": "strikethrough",
    "del": "strikethrough",
    "tg-spoiler": "spoiler",
    "span": "spoiler",
    "code": "code",
    "pre": "pre",
    "blockquote": "blockquote",
    "a": "text_link",
    "tg-emoji": "custom_emoji",
}
NAMED_ENTITIES = {"lt": "<", "gt": ">", "amp": "&", "quot": '"'}
# The attributes that give a tag its argument (a link's URL, a code block's language, ...): the value,
# less the prefix, which it must start with
_ARGUMENT_PREFIXES = {
    ("a", "href"): "",
    ("code", "class"): "language-",
    ("span", "class"): "tg-",
    ("tg-emoji", "emoji-id"): "",
}
MAX_TEXT_LENGTH = 4096
MAX_CAPTION_LENGTH = 1024


@dataclass
class FormattedText:
    text: str
    entities: list[MessageEntity]


@dataclass
class _OpenTag:
    name: str
    argument: str
    expandable: bool
    start: int  # UTF-16 offset in the output text


def utf16_length(text: str) -> int:
    return len(text.encode("utf-16-le")) // 2


def _parse_error(reason: str) -> ApiError:
    return bad_request(f"can't parse entities: {reason}")


class _HtmlParser:
    def __init__(self, source: str) -> None:
        self.source = source
        self.pos = 0
        self.output: list[str] = []
        self.output_utf16 = 0
        self.open_tags: list[_OpenTag] = []
        self.entities: list[MessageEntity] = []
        self.code_languages: dict[int, str] = {}

    def byte_offset(self, index: int) -> int:
        return len(self.source[:index].encode("utf-8"))

    def peek(self) -> str:
        """The current character, or "" at the end (TDLib's NUL terminator)."""
        return self.source[self.pos] if self.pos < len(self.source) else ""

    def emit(self, chunk: str) -> None:
        self.output.append(chunk)
        self.output_utf16 += utf16_length(chunk)

    def parse(self) -> FormattedText:
        while self.pos < len(self.source):
            char = self.source[self.pos]
            if char == "&" and (decoded := self.decode_entity()) is not None:
                self.emit(decoded)
            elif char != "<":
                self.emit(char)
                self.pos += 1
            elif self.source[self.pos + 1 : self.pos + 2] == "/":
                self.end_tag()
            else:
                self.start_tag()
        if self.open_tags:
            raise _parse_error(f'Can\'t find end tag corresponding to start tag "{self.open_tags[-1].name}"')
        return FormattedText("".join(self.output), self.entities)

    def decode_entity(self) -> str | None:
        """``&lt;`` ``&gt;`` ``&amp;`` ``&quot;`` and numeric entities; anything else stays literal text."""
        source, start = self.source, self.pos
        end = start + 1
        if source[end : end + 1] == "#":
            end += 1
            hexadecimal = source[end : end + 1] in ("x", "X")
            end += hexadecimal
            digits = "0123456789abcdefABCDEF" if hexadecimal else "0123456789"
            digits_start = end
            while end < len(source) and source[end] in digits:
                end += 1
            if end == digits_start:
                return None
            code = int(source[digits_start:end], 16 if hexadecimal else 10)
            if code == 0 or code > 0x10FFFF:
                return None
            decoded = chr(code)
        else:
            while end < len(source) and source[end].isascii() and source[end].isalpha():
                end += 1
            decoded_or_none = NAMED_ENTITIES.get(source[start + 1 : end])
            if decoded_or_none is None:
                return None
            decoded = decoded_or_none
        self.pos = end + 1 if source[end : end + 1] == ";" else end
        return decoded

    def start_tag(self) -> None:
        begin = self.pos
        self.pos += 1
        name_begin = self.pos
        while self.peek() and not self.peek().isspace() and self.peek() != ">":
            self.pos += 1
        if not self.peek():
            raise _parse_error(f"Unclosed start tag at byte offset {self.byte_offset(begin)}")
        name = self.source[name_begin : self.pos].lower()
        if name not in SUPPORTED_TAGS:
            raise _parse_error(f'Unsupported start tag "{name}" at byte offset {self.byte_offset(begin)}')
        argument, expandable = self.attributes(name, begin)
        if name == "span" and argument != "spoiler":
            offset = self.byte_offset(begin)
            raise _parse_error(f'Tag "span" must have class "tg-spoiler" at byte offset {offset}')
        self.open_tags.append(_OpenTag(name, argument, expandable, self.output_utf16))
        self.pos += 1  # past ">"

    def attributes(self, tag: str, begin: int) -> tuple[str, bool]:
        argument, expandable = "", False
        while self.peek() != ">":
            self.skip_spaces()
            if self.peek() == ">":
                break
            attribute = self.attribute_name(tag, begin)
            value = self.assigned_value(begin)
            if value is None:  # a bare attribute
                expandable = expandable or (tag == "blockquote" and attribute == "expandable")
                continue
            prefix = _ARGUMENT_PREFIXES.get((tag, attribute))
            if prefix is not None and value.startswith(prefix):
                argument = value.removeprefix(prefix)
            elif (tag, attribute) == ("blockquote", "expandable"):
                expandable = True
        return argument, expandable

    def skip_spaces(self) -> None:
        while self.peek().isspace():
            self.pos += 1

    def attribute_name(self, tag: str, begin: int) -> str:
        name_begin = self.pos
        while self.peek() and not self.peek().isspace() and self.peek() not in "=>":
            self.pos += 1
        attribute = self.source[name_begin : self.pos].lower()
        if not attribute:
            raise _parse_error(
                f'Empty attribute name in the tag "{tag}" at byte offset {self.byte_offset(begin)}'
            )
        return attribute

    def assigned_value(self, begin: int) -> str | None:
        """After an attribute's name: the value after "=", or None when no "=" follows."""
        unclosed = _parse_error(f"Unclosed start tag at byte offset {self.byte_offset(begin)}")
        self.skip_spaces()
        if not self.peek():
            raise unclosed
        if self.peek() != "=":
            return None
        self.pos += 1
        self.skip_spaces()
        if not self.peek():
            raise unclosed
        value = self.attribute_value()
        if not self.peek():
            raise unclosed
        return value

    def attribute_value(self) -> str:
        quote = self.peek()
        if quote not in ("'", '"'):
            value_begin = self.pos
            while self.peek().isascii() and (self.peek().isalnum() or self.peek() in ".-"):
                self.pos += 1
            return self.source[value_begin : self.pos].lower()
        self.pos += 1
        chunks: list[str] = []
        while self.peek() and self.peek() != quote:
            if self.peek() == "&" and (decoded := self.decode_entity()) is not None:
                chunks.append(decoded)
            else:
                chunks.append(self.peek())
                self.pos += 1
        if self.peek() == quote:
            self.pos += 1
        return "".join(chunks)

    def end_tag(self) -> None:
        begin = self.pos
        if not self.open_tags:
            raise _parse_error(f"Unexpected end tag at byte offset {self.byte_offset(begin)}")
        self.pos += 2
        while self.peek() and not self.peek().isspace() and self.peek() != ">":
            self.pos += 1
        end_name = self.source[begin + 2 : self.pos]
        while self.peek().isspace():
            self.pos += 1
        if self.peek() != ">":
            raise _parse_error(f"Unclosed end tag at byte offset {self.byte_offset(begin)}")
        opened = self.open_tags.pop()
        if end_name and end_name != opened.name:
            raise _parse_error(
                f"Unmatched end tag at byte offset {self.byte_offset(begin)}, "
                f'expected "</{opened.name}>", found "</{end_name}>"'
            )
        self.pos += 1
        self.add_entity(opened)

    def add_entity(self, tag: _OpenTag) -> None:
        length = self.output_utf16 - tag.start
        if length == 0:
            return  # Telegram drops empty entities
        kind = ENTITY_TYPE_BY_TAG[tag.name]
        entity = MessageEntity(type=kind, offset=tag.start, length=length)
        if tag.name == "a":
            url = tag.argument or self.utf16_slice(tag.start, length)
            if not url.startswith(("http://", "https://", "tg://")) and "." not in url:
                return  # TDLib drops links it cannot turn into a URL
            entity.url = url
        elif tag.name == "pre":
            inner = self.entities[-1] if self.entities else None
            if inner and inner.type == "code" and (inner.offset, inner.length) == (tag.start, length):
                self.entities.pop()  # <pre><code class="language-x"> is one pre entity with a language
                entity.language = self.code_languages.get(id(inner))
        elif tag.name == "tg-emoji":
            entity.custom_emoji_id = tag.argument
        elif tag.name == "blockquote" and tag.expandable:
            entity.type = "expandable_blockquote"
        if tag.name == "code" and tag.argument:
            self.code_languages[id(entity)] = tag.argument
        self.entities.append(entity)

    def utf16_slice(self, offset: int, length: int) -> str:
        encoded = "".join(self.output).encode("utf-16-le")
        return encoded[offset * 2 : (offset + length) * 2].decode("utf-16-le")


def parse_html(source: str) -> FormattedText:
    """Plain text and entities of an HTML-formatted message, or a 400 exactly as Telegram words it."""
    return _HtmlParser(source).parse()


def strip_text(formatted: FormattedText) -> FormattedText:
    """Trim surrounding whitespace like Telegram does, keeping entities on the same characters."""
    text = formatted.text
    leading = utf16_length(text) - utf16_length(text.lstrip())
    stripped = text.strip()
    limit = utf16_length(stripped)
    entities: list[MessageEntity] = []
    for entity in formatted.entities:
        start = max(entity.offset - leading, 0)
        end = min(entity.offset + entity.length - leading, limit)
        if end > start:
            entities.append(entity.model_copy(update={"offset": start, "length": end - start}))
    return FormattedText(stripped, entities)


def format_text(
    source: str | None,
    parse_mode: str | None,
    entities: list[MessageEntity] | None = None,
    *,
    caption: bool = False,
) -> FormattedText:
    """Validate a message text (or caption) as Telegram does and return what a client would show."""
    if parse_mode is not None and parse_mode.lower() not in ("html", "markdown", "markdownv2"):
        raise bad_request("unsupported parse_mode")
    source = source or ""
    if parse_mode is not None and parse_mode.lower() == "html":
        formatted = parse_html(source)
    else:
        # Markdown is not emulated: its text is kept verbatim (a documented limitation).
        formatted = FormattedText(source, list(entities or []))
    formatted = strip_text(formatted)
    if not caption and not formatted.text:
        raise bad_request("message text is empty")
    limit = MAX_CAPTION_LENGTH if caption else MAX_TEXT_LENGTH
    if utf16_length(formatted.text) > limit:
        raise bad_request("message caption is too long" if caption else "message is too long")
    return formatted
