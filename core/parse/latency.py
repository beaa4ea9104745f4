"""A load and a latency target in free text, ru and en: "10 rps under 2s", "10 RPS at under 2 s",
"10 запросов в секунду, ответ быстрее 2 секунд", "ttft < 500 ms". Sets `requests_per_second` and
`ttft_target_s` (core.advice.latency answers them with the servers it takes). A time is read as the target
only beside a load or a first-token word, so "за 2 секунды" alone is not one."""

from __future__ import annotations

import re

from core.contract import Task
from core.parse.patterns import gated
from core.parse.text import Fields, _Text

_NUMBER = r"(?<![\w.])(\d{1,7}(?:\.\d{1,3})?)"
_RPS_WORD = (
    r"(?:rps|qps|req/s|requests?\s*/\s*s(?:ec)?|(?:requests?|queries|calls)\s+(?:a|per|/)\s*sec(?:ond)?"
    r"|запрос\w*\s*(?:в|/)\s*(?:секунд\w*|сек|с)(?![\w])|обращени\w*\s+в\s+секунд\w*)"
)
_RPS = gated(re.compile(_NUMBER + r"\s*" + _RPS_WORD), r"rps|qps|/\s*s|sec|секунд|сек|/с|\sс(?![\w])")
_FIRST_TOKEN = re.compile(
    r"(?<![\w])(?:ttft|time\s+to\s+first\s+token|first\s+token|перв\w+\s+токен\w*|ответ\w*|латентност\w*|latency)"
    r"(?![\w])"
)
_UNDER = (
    r"(?:at\s+under|under|below|within|less\s+than|<=?|быстрее|меньше|менее|до|не\s+дольше|не\s+более|"
    r"в\s+пределах|за)"
)
_UNIT = r"(ms|мс|s|sec|secs|seconds?|с|сек|секунд\w*)(?![\w])"
_TARGET = gated(re.compile(_UNDER + r"\s*" + _NUMBER + r"\s*" + _UNIT), r"\d\s*(?:ms|мс|s|с)")
MAX_TARGET_S = 3600.0


def take_latency(text: _Text, f: Fields) -> None:
    """`requests_per_second` and `ttft_target_s` from the words, before numbers are read as sizes."""
    rps = text.take(_RPS)
    if rps:
        value = float(rps.group(1))
        if 0 < value <= 1_000_000:
            f["requests_per_second"] = value
    if not rps and _FIRST_TOKEN.search(text.rest) is None:
        return
    target = text.take(_TARGET)
    if target:
        seconds = float(target.group(1)) / (1000 if target.group(2) in ("ms", "мс") else 1)
        if 0 < seconds <= MAX_TARGET_S:
            f["ttft_target_s"] = seconds


def settle(f: Fields) -> None:
    """A load is an inference question; a target alone (no load) is kept: the TTFT is then compared."""
    if f.get("task") not in (None, Task.INFERENCE):
        f.pop("requests_per_second", None)
        f.pop("ttft_target_s", None)
