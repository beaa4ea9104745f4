"""getFile and the file download URL: a document a user sent (or the bot uploaded) is read back by
`bot.download`; an unknown id, a file over 20 MB and an unknown path are refused like Telegram."""

from __future__ import annotations

import aiohttp
import pytest
from aiogram import Bot
from aiogram.exceptions import TelegramBadRequest
from aiogram.types import BufferedInputFile

from tgsandbox import Sandbox
from tgsandbox.methods.files import MAX_DOWNLOAD_BYTES
from tgsandbox.params import Upload

CHAT = 4242


async def test_a_sent_document_is_downloaded(bot: Bot, sandbox: Sandbox) -> None:
    sandbox.user(id=CHAT)
    sent = await bot.send_document(CHAT, BufferedInputFile(b"line 1\nline 2\n", "run log.txt"))
    assert sent.document is not None
    file = await bot.get_file(sent.document.file_id)
    assert file.file_size == 14 and file.file_path and file.file_path.endswith("run_log.txt")
    data = await bot.download(sent.document)
    assert data is not None and data.read() == b"line 1\nline 2\n"


async def test_unknown_and_too_big_files_are_refused(bot: Bot, sandbox: Sandbox) -> None:
    with pytest.raises(TelegramBadRequest, match="invalid file_id"):
        await bot.get_file("BQACAgIAAxkBAAIB")
    sandbox.telegram.files["big"] = Upload("big.log", b"x" * (MAX_DOWNLOAD_BYTES + 1))
    with pytest.raises(TelegramBadRequest, match="file is too big"):
        await bot.get_file("big")
    async with aiohttp.ClientSession() as session:
        url = f"{sandbox.base_url}/file/bot{sandbox.token}/documents/nothing/x.txt"
        async with session.get(url) as response:
            assert response.status == 404
        url = f"{sandbox.base_url}/file/botWRONG/documents/big/big.log"
        async with session.get(url) as response:
            assert response.status == 401
