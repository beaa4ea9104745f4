"""A pasted log through the real bot on the sandbox (ru and en): a CUDA OOM, a vLLM log naming its
model and an nvidia-smi table are answered from what they measured (card, need, what to change, what
to rent, with the rent and quote buttons); the measurement is stored only when the user presses the
button; the admin lists and exports it; a log-like text the reader does not know gets the one clear
reply, and a question naming vLLM is still a question."""

from __future__ import annotations

import pytest
from sqlalchemy import select

from bot.db.engine import create_engine, create_sessionmaker
from bot.db.models import Measurement
from bot.handlers.pasted_logs import MeasurementCB
from core.language import words as core_texts
from tests.bot.e2e.conftest import ADMIN_ID, Harness, assert_no_failed_calls, buttons, result_mark, text
from tests.core import log_excerpts as X

OOM = (  # the issue's own example: a 24 GB card, 2 GiB more asked while 22.52 GiB were in use
    "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity "
    "of 23.65 GiB of which 1.12 GiB is free. Including non-PyTorch memory, this process has 22.52 GiB "
    "memory in use. Of the allocated memory 21.80 GiB is allocated by PyTorch, and 310.15 MiB is reserved "
    "by PyTorch but unallocated."
)


def core(key: str, lang: str, **args: object) -> str:
    return core_texts.t(key, lang, **args)  # type: ignore[arg-type]


async def stored(h: Harness) -> list[Measurement]:
    engine = create_engine(h.db_url)
    try:
        async with create_sessionmaker(engine)() as session:
            return list(await session.scalars(select(Measurement).order_by(Measurement.id)))
    finally:
        await engine.dispose()


@pytest.mark.parametrize("lang", ["ru", "en"])
async def test_an_oom_is_answered_and_stored_only_on_consent(harness: Harness, lang: str) -> None:
    user = harness.user(language_code=lang)
    reply = (await user.send(OOM))[-1]
    body = reply.text or ""
    assert body.startswith(core("log-title-torch_oom", lang))
    assert "RTX 4090 24 GB" in body and "RTX 3090 24 GB" in body  # 23.65 GiB as CUDA reports it
    assert core("log-ask-model", lang) in body  # an OOM names no model: asked
    assert "🚀" in body and "1× RTX 4090 48 GB" in body  # what to rent: the need fits the 48 GB card
    assert text("btn-rent", lang, count=1, gpu="RTX 4090 48 GB") in buttons(reply)
    assert result_mark(lang) not in body  # not read as a sizing question
    assert text("log-store-button", lang) in buttons(reply)
    assert not await stored(harness)  # nothing kept before the user agrees

    answer = await user.click(text("log-store-button", lang))
    assert answer.text == text("log-stored", lang, id=1)
    (row,) = await stored(harness)
    assert row.kind == "torch_oom" and row.gpu == "rtx4090" and row.failed_bytes == 2 << 30
    assert row.need_bytes is not None and row.need_bytes > row.total_bytes  # type: ignore[operator]
    db_user = await harness.db_user(user.id)
    assert db_user is not None and row.user_id == db_user.id
    reply = user.chat.messages[reply.message_id]  # as shown now
    assert text("log-store-button", lang) not in buttons(reply)
    assert text("btn-rent", lang, count=1, gpu="RTX 4090 48 GB") in buttons(reply)  # rent and quote stay
    again = await user.press(MeasurementCB().pack(), message=reply)  # a stale press: stored once
    assert again.text == text("log-store-expired", lang) and len(await stored(harness)) == 1
    assert_no_failed_calls(harness.sandbox)


@pytest.mark.parametrize("lang", ["ru", "en"])
async def test_a_vllm_log_naming_its_model_gets_the_estimators_mitigations(
    harness: Harness, lang: str
) -> None:
    user = harness.user(language_code=lang)
    body = (await user.send(X.VLLM_V1_70B.text))[-1].text or ""
    assert body.startswith(core("log-title-vllm", lang))
    assert core("log-model-any", lang, model="Llama 3.1 70B") in body
    assert "✅" in body  # the mitigations of the estimate, with where each fits


@pytest.mark.parametrize("lang", ["ru", "en"])
async def test_a_short_kv_cache_is_told_its_max_model_len(harness: Harness, lang: str) -> None:
    user = harness.user(language_code=lang)
    body = (await user.send(X.VLLM_3090_29K.text))[-1].text or ""
    assert "--max-model-len 23648" in body and "--gpu-memory-utilization 0.93" in body


async def test_nvidia_smi_is_read(harness: Harness) -> None:
    user = harness.user(language_code="ru")
    reply = (await user.send(X.SMI_5090.text))[-1]
    assert (reply.text or "").startswith(core("log-title-nvidia_smi", "ru"))
    assert "2× RTX 5090 32 GB" in (reply.text or "")


@pytest.mark.parametrize("lang", ["ru", "en"])
async def test_an_unknown_log_and_a_huge_one_get_the_clear_reply(harness: Harness, lang: str) -> None:
    user = harness.user(language_code=lang)
    garbage = "Traceback (most recent call last):\n" + '  File "x.py", line 1, in <module>\n' * 110
    huge = (garbage * 2)[:4096]  # Telegram's longest message
    for pasted in (garbage[:300], huge):
        reply = (await user.send(pasted))[-1]
        assert (reply.text or "").startswith(core("log-unknown", lang, limit=200_000)[:40])
        assert not reply.buttons
    assert_no_failed_calls(harness.sandbox)


@pytest.mark.parametrize(
    "question",
    ["llama 3.1 8b vllm на 4090 48", "у меня CUDA out of memory на 4090 с llama 3.1 8b, что делать?"],
)
async def test_a_question_naming_vllm_or_an_oom_is_still_a_question(harness: Harness, question: str) -> None:
    user = harness.user(language_code="ru")
    reply = (await user.send(question))[-1]
    assert result_mark("ru") in (reply.text or "")


async def test_the_admin_lists_and_exports_the_measurements(admin_harness: Harness) -> None:
    h = admin_harness
    user = h.user(language_code="ru")
    await user.send(X.LLAMA_WEIGHTS_OOM.text)
    await user.click(text("log-store-button", "ru"))
    admin = h.sandbox.user(id=ADMIN_ID, first_name="Boss", username="boss", language_code="en")
    listing = (await admin.send("/measurements"))[-1].text or ""
    assert listing.startswith(text("admin-measurements-title", "en", count=1))
    assert "#1" in listing and "llama_cpp" in listing and "141.4 GiB" in listing
    replies = await admin.send("/measurements export")
    assert replies[-1].has_document
    assert replies[-1].text == text("admin-export-caption", "en", file="measurements.csv", rows=1)
    other = h.user(language_code="en")  # not an admin: the command is unknown to them
    assert "#1" not in ((await other.send("/measurements"))[-1].text or "")
