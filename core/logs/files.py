"""A log sent as a file: which files are read, up to what size, and their bytes as text.

A start-up log is 20-60 kB and the reader keeps 200,000 characters of any text (`parse.clip`: its
head and its tail), so a file is read up to `MAX_LOG_FILE_BYTES`; a longer one is refused before it
is downloaded (Telegram states a document's `file_size`). Text is UTF-8 (a BOM allowed) or, as
Windows PowerShell's `nvidia-smi > file` writes it, UTF-16 with its BOM; a file with NUL bytes or
that decodes as neither is not a text log.
"""

from __future__ import annotations

import codecs
from pathlib import PurePosixPath

MAX_LOG_FILE_BYTES = 2 * 2**20  # 2 MiB: ten of the longest start-up logs; the bot's download per file
LOG_FILE_SUFFIXES = frozenset({".txt", ".log", ".out", ".err", ""})  # "" a file saved without one
_UTF16_BOMS = (codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)


def is_log_file_name(name: str | None, mime_type: str | None = None) -> bool:
    """A file that may hold a log: `.txt`, `.log` (`.out`, `.err`, none), or sent as `text/plain`."""
    if mime_type is not None and mime_type.startswith("text/"):
        return True
    return PurePosixPath(name or "").suffix.lower() in LOG_FILE_SUFFIXES


def decode_log_file(data: bytes) -> str | None:
    """The file's text, or None when it is not text (binary, or an encoding other than UTF-8/16)."""
    try:
        text = data.decode("utf-16") if data.startswith(_UTF16_BOMS) else data.decode("utf-8-sig")
    except UnicodeDecodeError:
        return None
    return None if "\x00" in text else text
