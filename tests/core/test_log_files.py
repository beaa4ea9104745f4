"""A log sent as a file (core/logs/files.py): which names are read, and bytes → text or None."""

from __future__ import annotations

import codecs

import pytest

from core.logs.files import decode_log_file, is_log_file_name


@pytest.mark.parametrize(
    ("name", "mime", "read"),
    [
        ("vllm.log", None, True),
        ("OOM.TXT", None, True),
        ("nohup.out", None, True),
        ("server", None, True),
        ("trace.json", "text/plain", True),
        ("model.safetensors", None, False),
        ("screenshot.png", "image/png", False),
        (None, None, True),
    ],
)
def test_log_file_names(name: str | None, mime: str | None, read: bool) -> None:
    assert is_log_file_name(name, mime) is read


def test_decoding() -> None:
    text = "GPU 0 has a total capacity of 23.65 GiB — ок\n"
    assert decode_log_file(text.encode()) == text
    assert decode_log_file(codecs.BOM_UTF8 + text.encode()) == text
    assert decode_log_file(codecs.BOM_UTF16_LE + text.encode("utf-16-le")) == text
    assert decode_log_file(codecs.BOM_UTF16_BE + text.encode("utf-16-be")) == text
    assert decode_log_file(b"\x89PNG\r\n\x1a\n\xff\xfe\xfd") is None  # not UTF-8
    assert decode_log_file(b"abc\x00def") is None  # NUL: binary
    assert decode_log_file(b"") == ""
