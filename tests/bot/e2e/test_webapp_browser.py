"""The Mini App in a real browser: headless Chromium (Debian's `chromium` + `chromium-driver`) drives
the page served by the real bot, signed in with initData signed as Telegram signs it. It loads,
searches a model, moves the context slider (the total becomes the core's figure for the request the
page sent), switches the card (the verdict changes to the core's), sends "Оставить заявку" (the form
opens in the chat and the lead's card reaches the sales chat), and at 390×844 and at 360 px wide no
element runs past the viewport; the 390×844 screenshot is docs/miniapp.png (shown in the README).
The context slider ends at the model's own maximum: 2048 for a 2K model (where it rests, left alone),
40960 the top stop of a 40K one.

Without Chromium the tests are skipped, saying why, except under CI (`CI` set), where they fail.
Every wait is for a condition in the page or the chat, never a fixed sleep."""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

import pytest

from bot.webapp.auth import sign
from bot.webapp.layout import encode
from core.inverse.solve import run as estimate
from core.language.answer import build_answer
from core.language.phrases import format_bytes
from tests.bot.e2e.conftest import text
from tests.bot.e2e.test_webapp_api import spaced
from tests.bot.e2e.webapp_fixtures import ThreadedBot, bot_in_thread

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
CHROMEDRIVER = shutil.which("chromedriver")
# The README's picture: rewritten only when asked (SAVE_SCREENSHOTS=1), so a test run leaves the tree clean.
SCREENSHOT = Path(__file__).parents[3] / "docs" / "miniapp.png"
PHONE = (390, 844)  # iPhone 12-15's CSS viewport
NARROW = 360  # the narrowest common Android width
WAIT_S = 15.0
OVERFLOW_JS = """
const width = document.documentElement.clientWidth;
const out = [];
for (const el of document.querySelectorAll("body *")) {
  const r = el.getBoundingClientRect();
  if (r.width === 0 && r.height === 0) continue;
  if (r.left < -0.5 || r.right > width + 0.5) {
    out.push(`${el.tagName}#${el.id}.${el.className}: ${r.left.toFixed(1)}..${r.right.toFixed(1)}`);
  }
}
return {width, scrollWidth: document.documentElement.scrollWidth, overflowing: out};
"""

if CHROMIUM is None or CHROMEDRIVER is None:
    if os.environ.get("CI"):
        raise RuntimeError("CI is set but chromium / chromedriver are missing (.ci/run installs them)")
    pytest.skip(
        "chromium and chromium-driver are not installed (apt-get install -y chromium chromium-driver)",
        allow_module_level=True,
    )

from selenium import webdriver  # noqa: E402  (after the skip: selenium is a dev extra)
from selenium.common.exceptions import StaleElementReferenceException  # noqa: E402
from selenium.webdriver.chrome.service import Service  # noqa: E402
from selenium.webdriver.common.by import By  # noqa: E402
from selenium.webdriver.common.keys import Keys  # noqa: E402
from selenium.webdriver.remote.webdriver import WebDriver  # noqa: E402
from selenium.webdriver.support.select import Select  # noqa: E402
from selenium.webdriver.support.ui import WebDriverWait  # noqa: E402


@pytest.fixture(scope="module")
def browser() -> Iterator[WebDriver]:
    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM or ""
    for arg in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                "--disable-extensions", f"--window-size={PHONE[0]},{PHONE[1]}", "--hide-scrollbars",
                "--force-device-scale-factor=1", "--lang=ru"):  # fmt: skip
        options.add_argument(arg)
    driver = webdriver.Chrome(service=Service(CHROMEDRIVER or ""), options=options)
    # No network here: Telegram's script is refused at once (the page works without it).
    driver.execute_cdp_cmd("Network.enable", {})
    driver.execute_cdp_cmd("Network.setBlockedURLs", {"urls": ["*telegram.org*"]})
    try:
        yield driver
    finally:
        driver.quit()


@pytest.fixture
def bot(tmp_path: Path, template_db: Path) -> Iterator[ThreadedBot]:
    from tests.bot.e2e.webapp_fixtures import SALES_CHAT

    with bot_in_thread(tmp_path, template_db, sales_chat_id=SALES_CHAT) as bot:
        bot.harness.sandbox.user(id=900, first_name="Manager").in_group(chat_id=SALES_CHAT, title="Sales")
        yield bot


def viewport(driver: WebDriver, width: int, height: int) -> None:
    driver.execute_cdp_cmd(
        "Emulation.setDeviceMetricsOverride",
        {"width": width, "height": height, "deviceScaleFactor": 1, "mobile": True},
    )


def wait(driver: WebDriver, condition: Any, what: str) -> Any:
    """`condition(driver)` once truthy; an element replaced meanwhile (the suggestions are redrawn as
    answers come) is looked for again."""
    waiting = WebDriverWait(
        driver, WAIT_S, poll_frequency=0.05, ignored_exceptions=(StaleElementReferenceException,)
    )
    return waiting.until(lambda d: condition(d), message=what)


def answered(driver: WebDriver, **expected: Any) -> dict[str, Any]:
    """Wait for the answer to the request whose fields include `expected`; the request the page sent."""

    def ready(d: WebDriver) -> dict[str, Any] | None:
        result = d.find_element(By.ID, "result")
        if result.get_attribute("data-state") != "ready":
            return None
        sent: dict[str, Any] = json.loads(result.get_attribute("data-request") or "{}")
        return sent if all(sent.get(k) == v for k, v in expected.items()) else None

    sent: dict[str, Any] = wait(driver, ready, f"an answer to {expected}")
    return sent


def pick(driver: WebDriver, query: str, model_id: str) -> dict[str, Any]:
    """Type `query` in the model field, pick `model_id` among the suggestions; the request it sizes."""
    model = driver.find_element(By.ID, "model")
    model.clear()
    model.send_keys(query)

    def picked(d: WebDriver) -> bool:
        for li in d.find_elements(By.CSS_SELECTOR, "#suggest li"):
            if li.is_displayed() and li.get_attribute("data-id") == model_id:
                li.click()
                return True
        return False

    wait(driver, picked, f"{model_id} among the suggestions, picked")
    return answered(driver, model=model_id)


def shown(driver: WebDriver) -> tuple[int, str]:
    result = driver.find_element(By.ID, "result")
    return int(result.get_attribute("data-total-bytes") or 0), result.get_attribute("data-verdict") or ""


def no_overflow(driver: WebDriver) -> None:
    layout = driver.execute_script(OVERFLOW_JS)
    assert layout["overflowing"] == [], layout
    assert layout["scrollWidth"] <= layout["width"], layout


def test_the_calculator_in_a_browser(browser: WebDriver, bot: ThreadedBot, tmp_path: Path) -> None:
    user = bot.harness.user(language_code="ru", username="tester")
    viewport(browser, *PHONE)
    init_data = sign(bot.token, user.user)
    browser.get(f"{bot.url}/app#{urlencode({'tgWebAppData': init_data})}")
    first, _ = shown(browser) if answered(browser) else (0, "")
    assert browser.find_element(By.ID, "quote").text == text("webapp-quote")

    # Search a model: the catalogue answers as the user types; picking it sizes it.
    pick(browser, "qwen2.5 7b", "qwen2.5-7b")
    before, _ = shown(browser)

    # Move the context slider to its end: the total is the core's figure for what the page sent.
    slider = browser.find_element(By.ID, "s-context_length")
    slider.send_keys(Keys.END)
    sent = answered(browser, model="qwen2.5-7b", context_length=131072)
    total, _ = shown(browser)
    result = estimate(sent)
    assert total == result.total_bytes != before != first
    assert format_bytes(result.total_bytes, "ru") in browser.find_element(By.ID, "need").text

    # Switch the card: the verdict is the core's for each, and it changes.
    verdicts = []
    for gpu in ("rtx3090", "h200"):
        Select(browser.find_element(By.ID, "gpu")).select_by_value(gpu)
        sent = answered(browser, gpus=[gpu])
        answer = build_answer(estimate(sent), "ru", currency="RUB")
        assert shown(browser)[1] == answer.verdict
        verdicts.append(answer.verdict)
        # The answer's own top mitigations, and the card's fit bands under the bar.
        listed = [li.text for li in browser.find_elements(By.CSS_SELECTOR, "#mitigations li")]
        assert listed == [spaced(m) for m in answer.mitigations]  # WebDriver's text: plain spaces
        assert len(browser.find_elements(By.CSS_SELECTOR, "#bands span")) == 3
    assert verdicts == ["does_not_fit", "fits"]
    assert not browser.find_elements(By.CSS_SELECTOR, "#mitigations li")  # it fits: none to show

    # The layout at a phone's size: nothing past the viewport; the picture for the README.
    no_overflow(browser)
    shot = SCREENSHOT if os.environ.get("SAVE_SCREENSHOTS") == "1" else tmp_path / SCREENSHOT.name
    assert browser.save_screenshot(str(shot)) and shot.stat().st_size > 0
    viewport(browser, NARROW, PHONE[1])
    no_overflow(browser)
    viewport(browser, *PHONE)

    # "Оставить заявку": the answer and the quote form open in the chat; the lead reaches sales.
    browser.find_element(By.ID, "quote").click()
    wait(browser, lambda d: d.find_element(By.ID, "status").text == text("webapp-sent-quote"), "sent")
    sandbox = bot.harness.sandbox
    asked = text("lead-ask-contact", config="").split("\n")[0].strip()
    bot.run(sandbox.wait_for(lambda: asked in (_last(user) or ""), "the quote form in the chat"))
    assert "Qwen2.5 7B" in (_last(user) or "")
    bot.run(user.click(text("btn-lead-username", username="tester")))
    bot.run(user.send("из калькулятора"))
    from tests.bot.e2e.webapp_fixtures import SALES_CHAT

    def card() -> str | None:
        return next((m.text for m in sandbox.chat(SALES_CHAT) if m.from_bot and m.text), None)

    bot.run(sandbox.wait_for(lambda: card() is not None, "the lead's card in the sales chat"))
    assert "из калькулятора" in (card() or "") and "Qwen2.5 7B" in (card() or "")

    # Opened from "🎛 Калькулятор" under an answer (?r=) or by a ?startapp= link (start_param in
    # initData): the page asks for that request at once.
    under_answer = {"task": "training", "method": "qlora", "model": "llama-3.1-8b", "seq_len": 4096}
    browser.get(f"{bot.url}/app?r={encode(under_answer)}#{urlencode({'tgWebAppData': init_data})}")
    answered(browser, **under_answer)
    linked = {"task": "inference", "model": "mistral-7b", "concurrency": 16, "gpus": ["l40s"], "num_gpus": 2}
    with_param = sign(bot.token, user.user, start_param=encode(linked))
    browser.get(f"{bot.url}/app#{urlencode({'tgWebAppData': with_param})}")
    sent = answered(browser, **linked)
    assert shown(browser)[0] == estimate(sent).total_bytes


def test_the_context_slider_ends_at_the_models_maximum(browser: WebDriver, bot: ThreadedBot) -> None:
    user = bot.harness.user(language_code="ru")
    viewport(browser, *PHONE)
    browser.get(f"{bot.url}/app#{urlencode({'tgWebAppData': sign(bot.token, user.user)})}")
    answered(browser)
    slider = browser.find_element(By.ID, "s-context_length")

    def at(tokens: int) -> None:  # the slider shows `tokens` ("40 960")
        shows = spaced(slider.find_element(By.XPATH, "../label/output").text)
        assert shows == f"{tokens:,}".replace(",", " ")

    # Falcon 40B (2K): the slider ends at 2048, and, not moved, rests there (the core's default).
    sent = pick(browser, "falcon 40b", "falcon-40b")
    assert "context_length" not in sent
    assert slider.get_attribute("data-max") == "2048"
    assert slider.get_attribute("value") == slider.get_attribute("max")
    at(2048)

    # Qwen3 8B (40K): its top stop is 40960, no power of two; the one below it 32768.
    pick(browser, "qwen3 8b", "qwen3-8b")
    assert slider.get_attribute("data-max") == "40960"
    at(4096)
    slider.send_keys(Keys.END)
    answered(browser, model="qwen3-8b", context_length=40960)
    at(40960)
    slider.send_keys(Keys.LEFT)
    answered(browser, model="qwen3-8b", context_length=32768)
    at(32768)


def _last(user: Any) -> str | None:
    messages = user.bot_messages()
    return messages[-1].text if messages else None
