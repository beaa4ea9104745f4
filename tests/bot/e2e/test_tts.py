"""Text-to-speech questions through the real bot (issue 22 item 4), in Russian and English: Bark,
XTTS-v2 and F5-TTS are sized by name; other TTS stays an honest "not sized yet"."""

from __future__ import annotations

import pytest

from tests.bot.e2e.conftest import Harness, assert_no_failed_calls, result_mark


def plain(message_text: str | None) -> str:
    return (message_text or "").replace("\xa0", " ")


@pytest.mark.parametrize(
    ("phrase", "lang", "said"),
    [
        ("сколько видеопамяти нужно для xtts v2", "ru", "XTTS-v2"),
        ("bark tts on rtx 3060", "en", "Bark"),
        ("f5-tts на 4060", "ru", "F5-TTS"),
    ],
)
async def test_named_tts_models_are_sized(harness: Harness, phrase: str, lang: str, said: str) -> None:
    user = harness.user(language_code=lang)
    reply = (await user.send(phrase))[-1]
    body = plain(reply.text)
    assert result_mark(lang) in body, body
    assert said in body
    assert ("fp16" if said == "F5-TTS" else "fp32") in body  # the dtype their code loads them in
    assert_no_failed_calls(harness.sandbox)


@pytest.mark.parametrize(
    ("phrase", "lang", "said"),
    [("озвучка текста на 3060", "ru", "пока не считаю"), ("silero tts on a t4", "en", "not size")],
)
async def test_other_tts_is_not_sized_yet(harness: Harness, phrase: str, lang: str, said: str) -> None:
    user = harness.user(language_code=lang)
    body = plain((await user.send(phrase))[-1].text)
    assert said in body and "Bark" in body, body
    assert result_mark(lang) not in body
    assert_no_failed_calls(harness.sandbox)


@pytest.mark.parametrize("lang", ["ru", "en"])
async def test_about_tells_what_tts_is_sized(harness: Harness, lang: str) -> None:
    user = harness.user(language_code=lang)
    shown = "\n".join(plain(r.text) for r in await user.send("/about"))
    assert "F5-TTS" in shown and "XTTS-v2" in shown and "Bark" in shown
