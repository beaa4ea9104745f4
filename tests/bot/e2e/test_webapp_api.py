"""The Mini App's API against the real bot: initData checked (missing, forged, stale → 401), bodies
capped (413), floods throttled (429), errors as JSON, the answer's contract figures those of the
CLI, and the page's "quote" and "to the chat" reaching the chat as the chat's own answer and form."""

from __future__ import annotations

import io
import json
import re
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import pytest

from bot.webapp import layout, routes
from bot.webapp.auth import MAX_AGE_S, sign, verify
from core import cli
from tests.bot.e2e.conftest import result_mark, text
from tests.bot.e2e.webapp_fixtures import Page, page_fixture  # noqa: F401  (the fixture `page`)

REQUEST = {"task": "inference", "model": "llama-3.1-8b", "context_length": 32768, "concurrency": 4}
CONTRACT = ("total_bytes", "breakdown", "verdicts", "recommendation")
README = Path(__file__).parents[3] / "README.md"
SETTINGS = "контекст 32 768 токенов, 4 пользователя"  # how the chat states REQUEST's workload


def spaced(text: str | None) -> str:
    """`text` with the narrow and no-break spaces of numbers as plain ones."""
    return re.sub("[\u00a0\u202f]", " ", text or "")


def cli_estimate(request: dict[str, Any]) -> tuple[int, Any]:
    """`python -m core estimate --json` of `request`: (exit status, JSON out)."""
    out = io.StringIO()
    status = cli.main(["estimate", "--json"], stdin=io.StringIO(json.dumps(request)), stdout=out)
    return status, json.loads(out.getvalue())


async def test_the_answer_carries_the_contracts_figures(page: Page) -> None:
    status, body = await page.call("/app/api/answer", REQUEST)
    assert status == 200
    code, result = cli_estimate(REQUEST)
    assert code == 0
    assert {k: body[k] for k in CONTRACT} == {k: result[k] for k in CONTRACT}
    assert body["request"] == result["request"]
    # The bar's parts are the breakdown the answer shows (the picture's), their sum its total.
    assert sum(p["bytes"] for p in body["parts"]) == body["cards"][0]["need_bytes"] == body["total_bytes"]
    assert body["lead"].startswith("✅") and body["verdict"] == "fits"
    card = body["cards"][0]
    assert card["need_bytes"] < card["comfortable_bytes"] < card["tight_bytes"] < card["usable_bytes"]


async def test_the_readme_documents_every_field_of_the_answer(page: Page) -> None:
    status, body = await page.call("/app/api/answer", REQUEST)
    assert status == 200
    section = README.read_text(encoding="utf-8").split("## Mini App", 1)[1].split("\n## ", 1)[0]
    rows = [line.split("|")[1] for line in section.splitlines() if line.startswith("| `")]
    documented = {name for cell in rows for name in re.findall(r"`(\w+)`", cell)}
    assert documented == set(body)


@pytest.mark.parametrize(
    ("method", "path"),
    [("POST", "/app/api/init"), ("GET", "/app/api/models?q=llama"), ("POST", "/app/api/answer"),
     ("POST", "/app/api/lead"), ("POST", "/app/api/chat")],
)  # fmt: skip
async def test_missing_initdata_is_401(page: Page, method: str, path: str) -> None:
    async with page.http.request(method, page.url + path, json=REQUEST) as r:
        assert r.status == 401
        assert await r.json() == {"error": "unauthorized", "field": None, "message": ""}


async def test_forged_initdata_is_401(page: Page) -> None:
    forged = sign("123456:ANOTHER-bots-token-abcdefghijk", page.user.user)
    assert (await page.call("/app/api/answer", REQUEST, init_data=forged))[0] == 401
    # Signed right, then another user put in: the hash no longer matches.
    genuine = page.init_data()
    tampered = genuine.replace(f"%22id%22%3A{page.user.id}", "%22id%22%3A1")
    assert tampered != genuine
    assert (await page.call("/app/api/answer", REQUEST, init_data=tampered))[0] == 401
    assert (await page.call("/app/api/answer", REQUEST, init_data="hash=00&user=%7B%7D"))[0] == 401


async def test_stale_initdata_is_401(page: Page) -> None:
    stale = page.init_data(auth_date=int(time.time()) - MAX_AGE_S - 60)
    status, body = await page.call("/app/api/answer", REQUEST, init_data=stale)
    assert (status, body["error"]) == (401, "unauthorized")
    fresh = page.init_data(auth_date=int(time.time()) - MAX_AGE_S + 60)
    assert (await page.call("/app/api/answer", REQUEST, init_data=fresh))[0] == 200


async def test_an_oversized_body_is_413(page: Page) -> None:
    big = {**REQUEST, "padding": "x" * (routes.MAX_BODY + 1)}
    status, body = await page.call("/app/api/answer", big)
    assert (status, body["error"]) == (413, "too_large")

    async def chunks() -> AsyncIterator[bytes]:  # no Content-Length: counted as it comes
        for _ in range(routes.MAX_BODY // 1024 + 2):
            yield b" " * 1024

    headers = {"X-Telegram-Init-Data": page.init_data()}
    async with page.http.post(page.url + "/app/api/answer", data=chunks(), headers=headers) as r:
        assert r.status == 413
        assert (await r.json())["error"] == "too_large"


async def test_a_flood_is_throttled_per_user(page: Page) -> None:
    statuses = [(await page.call("/app/api/answer", REQUEST))[0] for _ in range(40)]
    assert statuses[0] == 200
    assert 429 in statuses
    status, body = await page.call("/app/api/answer", REQUEST)
    assert (status, body["error"]) == (429, "throttled")
    other = sign(page.token, {"id": page.user.id + 1, "first_name": "Other", "language_code": "en"})
    assert (await page.call("/app/api/answer", REQUEST, init_data=other))[0] == 200  # others are served


async def test_errors_are_json_never_a_traceback(page: Page, monkeypatch: pytest.MonkeyPatch) -> None:
    status, body = await page.call("/app/api/answer", {**REQUEST, "context_length": -5})
    assert (status, body["error"], body["field"]) == (422, "invalid", "context_length")
    status, body = await page.call("/app/api/answer", {"task": "inference", "model": "no-such-model-xyz"})
    assert (status, body["error"]) == (422, "invalid")
    async with page.http.post(
        page.url + "/app/api/answer", data=b"{not json", headers={"X-Telegram-Init-Data": page.init_data()}
    ) as r:
        assert (r.status, (await r.json())["error"]) == (400, "invalid")

    def broken(*args: Any) -> Any:
        raise RuntimeError("a bug")

    monkeypatch.setattr(layout, "page", broken)
    async with page.http.post(
        page.url + "/app/api/answer", json=REQUEST, headers={"X-Telegram-Init-Data": page.init_data()}
    ) as r:
        raw = await r.text()
    assert r.status == 500
    assert json.loads(raw) == {"error": "internal", "field": None, "message": ""}
    assert "Traceback" not in raw and "a bug" not in raw


async def test_init_gives_the_words_and_the_linked_request(page: Page) -> None:
    status, body = await page.call("/app/api/init", {"start": layout.encode(REQUEST)})
    assert status == 200
    assert body["lang"] == "ru" and body["strings"]["quote"] == "✉️ Оставить заявку"
    assert body["start"] == REQUEST
    assert {g["id"] for g in body["gpus"]} >= {"rtx4090-48gb", "h100-sxm", "rtx3090"}
    en = sign(page.token, {"id": 77, "first_name": "E", "language_code": "en"})
    assert (await page.call("/app/api/init", {}, init_data=en))[1]["strings"]["quote"] == "✉️ Request a quote"


async def test_search_finds_catalogue_models_and_offers_a_hub_id(page: Page) -> None:
    status, body = await page.call("/app/api/models?q=llama+3.1+70b", method="GET")
    assert status == 200 and body["models"][0]["id"] == "llama-3.1-70b"
    status, body = await page.call("/app/api/models?q=someorg/some-model", method="GET")
    assert body["models"][0] == {"id": "someorg/some-model", "name": "someorg/some-model", "params_b": None,
                                 "kind": "huggingface"}  # fmt: skip


async def test_to_the_chat_posts_the_answer_with_the_calculator(page: Page) -> None:
    assert (await page.call("/app/api/chat", REQUEST))[1] == {"ok": True}
    replies = await page.user.wait_reply()
    answer = next(m for m in replies if result_mark() in (m.text or ""))
    assert SETTINGS in spaced(answer.text)
    calculator = next(b for row in answer.buttons for b in row if b.text == text("btn-calculator"))
    assert calculator.web_app is not None and calculator.web_app.startswith("https://calc.example/app?r=")
    assert layout.decode(parse_qs(urlsplit(calculator.web_app).query)["r"][0]) == REQUEST
    # The menu button opens the page (setChatMenuButton at start, WEBAPP_URL set).
    menu = page.harness.sandbox.telegram.menu_buttons[None]
    assert menu["type"] == "web_app" and menu["web_app"]["url"] == "https://calc.example/app"


async def test_quote_opens_the_form_with_that_configuration(page: Page) -> None:
    assert (await page.call("/app/api/lead", REQUEST))[1] == {"ok": True}
    replies = await page.user.wait_reply()
    form = replies[-1]
    assert (form.text or "").startswith(text("lead-ask-contact", config="X").split("X")[0].strip()[:10])
    assert SETTINGS in spaced(form.text)
    await page.user.click(text("btn-lead-username", username="tester"))
    await page.user.send("нужно на неделю")
    card = await page.wait_card()  # the lead, its card in the sales chat: the chat's own
    assert SETTINGS in spaced(card.text) and "нужно на неделю" in (card.text or "")


def test_initdata_signed_as_telegram_signs_it_is_accepted() -> None:
    token = "123456:ABCDEFGHIJKLMNOPQRSTUVWXYZ"
    data = verify(token, sign(token, {"id": 5, "first_name": "A"}, query_id="AAH"))
    assert data is not None and data.user is not None and data.user.id == 5
    assert verify(token, None) is None and verify(token, "x" * 5000) is None


def test_a_request_survives_the_link() -> None:
    request = {**REQUEST, "gpus": ["rtx3090"], "num_gpus": 2, "engine": "vllm"}
    assert layout.decode(layout.encode(request)) == {k: v for k, v in request.items() if k != "engine"}
    assert layout.decode("not base64 json!") is None and layout.decode("W10") is None  # "[]"


async def test_the_page_speaks_the_language_chosen_in_the_chat(page: Page) -> None:
    await page.user.send("/lang")
    await page.user.click(text("lang-en"))
    status, body = await page.call("/app/api/init", {})  # Telegram still says "ru"
    assert status == 200 and body["lang"] == "en"
    status, body = await page.call("/app/api/answer", REQUEST)
    assert status == 200 and body["lead"].startswith("✅ Fits")


async def test_the_calculator_button_is_for_private_chats_only(page: Page) -> None:
    """Telegram refuses web_app buttons in groups: an answer there has none; in private it has one."""
    bot = page.harness.sandbox.bot_user.username
    member = page.harness.user().in_group(chat_id=-1004242, title="Team")
    in_group = await member.send(f"@{bot} llama 3.1 8b int4")
    assert any("Llama 3.1 8B" in (m.text or "") for m in in_group)  # answered there
    assert not any(b.web_app for m in in_group for row in m.buttons for b in row)
    private = [m for m in await page.user.send("llama 3.1 8b int4") if result_mark() in (m.text or "")]
    assert [b.text for m in private for row in m.buttons for b in row if b.web_app] == [
        text("btn-calculator")
    ]


async def test_the_context_sliders_end_at_the_models_own_maximum(page: Page) -> None:
    """The answer bounds the sliders that follow the model: a catalogue model's `max_context` where it
    is below the page's top (even no power of two), the page's top otherwise and for a bare size."""
    low, high = routes.SLIDERS["context_length"][0], routes.SLIDERS["context_length"][1]
    seq_low, seq_high = routes.SLIDERS["seq_len"][0], routes.SLIDERS["seq_len"][1]
    tops = {
        "falcon-40b": (2048, 2048),  # a 2K model: both end at 2048
        "qwen3-8b": (40960, seq_high),  # 40K: context ends at 40960; training's top is below it
        "llama-3.1-8b": (high, seq_high),  # 128K, the page's own top
        "70b": (high, seq_high),  # a bare size: no maximum of its own
    }
    for model, (context_top, seq_top) in tops.items():
        status, body = await page.call("/app/api/answer", {"task": "inference", "model": model})
        assert status == 200, body
        assert body["sliders"] == {
            "context_length": {"min": low, "max": context_top, "log2": True},
            "seq_len": {"min": seq_low, "max": seq_top, "log2": True},
        }, model
    # The page opens with the page's own ranges, whatever the model.
    status, init = await page.call("/app/api/init", {"start": layout.encode({"model": "falcon-40b"})})
    assert init["sliders"]["context_length"] == {"min": low, "max": high, "log2": True}


async def test_a_slider_left_alone_shows_the_cores_default_within_the_model(page: Page) -> None:
    """Falcon 40B (2K): the context it is sized at when none is asked is 2048, the slider's top; a
    training sequence length too."""
    status, body = await page.call("/app/api/answer", {"task": "inference", "model": "falcon-40b"})
    assert status == 200
    assert body["request"]["context_length"] == 2048 == body["sliders"]["context_length"]["max"]
    request = {"task": "training", "method": "lora", "model": "falcon-40b"}
    status, body = await page.call("/app/api/answer", request)
    assert status == 200
    assert body["request"]["seq_len"] == 2048 == body["sliders"]["seq_len"]["max"]


async def test_a_context_beyond_the_model_is_still_sized(page: Page) -> None:
    """An old page, a link or a hand sending more than the model's maximum: sized as asked, the
    core noting it (the CLI's own answer), never refused."""
    request = {"task": "inference", "model": "falcon-40b", "context_length": 8192}
    status, body = await page.call("/app/api/answer", request)
    assert status == 200, body
    code, result = cli_estimate(request)
    assert code == 0 and body["request"]["context_length"] == 8192
    assert {k: body[k] for k in CONTRACT} == {k: result[k] for k in CONTRACT}
    assert "context_beyond_model" in [a["code"] for a in result["assumptions"]]
    assert body["sliders"]["context_length"]["max"] == 2048


def test_a_model_shorter_than_the_sliders_bottom_gets_a_range_of_its_own() -> None:
    """Whisper reads 448 tokens, below the context slider's bottom (512): the range is that one stop."""
    from core.catalogue.catalog import default_catalog
    from core.sizing import partial

    whisper = partial.catalogue_model({"model": "whisper-large-v3"}, default_catalog())
    assert whisper is not None and whisper.max_context == 448
    bounds = routes.sliders(routes.MODEL_BOUND, whisper)
    assert bounds["context_length"] == {"min": 448, "max": 448, "log2": True}
    assert bounds["seq_len"] == {"min": routes.SLIDERS["seq_len"][0], "max": 448, "log2": True}
