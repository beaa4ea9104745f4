"""A log sent as a file (a Telegram document) through the real bot on the sandbox, ru and en: the bot
downloads it (getFile, the file URL) and answers it as a pasted log; a file over the cap is refused
before any download, a binary or non-text file is told what is read."""

from __future__ import annotations

import codecs

import pytest

from core.language import words as core_texts
from core.language.phrases import format_bytes
from core.logs.files import MAX_LOG_FILE_BYTES
from tests.bot.e2e.conftest import Harness, assert_no_failed_calls, buttons, text
from tests.core import log_excerpts as X


def core(key: str, lang: str, **args: object) -> str:
    return core_texts.t(key, lang, **args)  # type: ignore[arg-type]


def downloads(harness: Harness) -> int:
    return len([r for r in harness.sandbox.requests if r.method.lower() == "getfile"])


@pytest.mark.parametrize("lang", ["ru", "en"])
async def test_a_vllm_log_file_gets_the_log_answer(harness: Harness, lang: str) -> None:
    user = harness.user(language_code=lang)
    reply = (await user.send_document("vllm.log", X.VLLM_V1_70B.text.encode(), mime_type="text/plain"))[-1]
    body = reply.text or ""
    assert body.startswith(core("log-title-vllm", lang)), body
    assert core("log-model-any", lang, model="Llama 3.1 70B") in body
    assert text("log-store-button", lang) in buttons(reply)  # the same answer as pasted, button included
    assert downloads(harness) == 1
    assert_no_failed_calls(harness.sandbox)


async def test_a_windows_nvidia_smi_file_in_utf16_is_read(harness: Harness) -> None:
    """PowerShell's `nvidia-smi > smi.txt` writes UTF-16 with a BOM."""
    user = harness.user(language_code="ru")
    data = codecs.BOM_UTF16_LE + X.SMI_5090.text.encode("utf-16-le")
    reply = (await user.send_document("smi.txt", data))[-1]
    assert (reply.text or "").startswith(core("log-title-nvidia_smi", "ru"))
    assert "2× RTX 5090 32 GB" in (reply.text or "")


@pytest.mark.parametrize("lang", ["ru", "en"])
async def test_a_too_big_file_is_refused_before_download(harness: Harness, lang: str) -> None:
    user = harness.user(language_code=lang)
    data = b"INFO vllm start\n" * (MAX_LOG_FILE_BYTES // 16 + 1)
    (reply,) = await user.send_document("huge.log", data)
    limit = format_bytes(MAX_LOG_FILE_BYTES, lang)
    size = format_bytes(len(data), lang)
    assert reply.text == text("log-file-too-big", lang, name="huge.log", size=size, limit=limit)
    assert downloads(harness) == 0
    assert_no_failed_calls(harness.sandbox)


@pytest.mark.parametrize("lang", ["ru", "en"])
async def test_a_binary_file_gets_a_clear_reply(harness: Harness, lang: str) -> None:
    user = harness.user(language_code=lang)
    (reply,) = await user.send_document("oom.log", b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\xff\xfe\x00")
    assert reply.text == text("log-file-not-text", lang, name="oom.log")
    (reply,) = await user.send_document("model.safetensors", b"\x00" * 64)  # not even downloaded
    assert reply.text == text("log-file-not-text", lang, name="model.safetensors")
    assert downloads(harness) == 1
    assert_no_failed_calls(harness.sandbox)


async def test_a_text_file_that_is_no_log_gets_the_unknown_format_reply(harness: Harness) -> None:
    user = harness.user(language_code="en")
    (reply,) = await user.send_document("notes.txt", b"Hello, which GPU should I rent?\n")
    assert (reply.text or "").startswith(core("log-unknown", "en", limit=200_000).split(".")[0])
