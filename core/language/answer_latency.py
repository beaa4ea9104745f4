"""The words of `Result.latency` (core.advice.latency): the time to first token, and the servers a load takes.

`load_lines` lead an answer to "10 RPS under 2 s" (the count first, then how it was reached);
`ttft_line` sits next to the decode speed in the details. Codes and numbers in, words out (Fluent).
"""

from __future__ import annotations

from core.contract import Latency, Result
from core.language.cards import config_text
from core.language.words import t


def _config(latency: Latency, lang: str) -> str:

    return config_text(latency.count, latency.gpu_name, lang)


def ttft_line(result: Result, lang: str) -> str | None:
    """'First token: ~0.34 s for an 8192-token prompt on 1× H100 (prefill 0.33 s at 40% of 989 TFLOPS)'."""
    latency = result.latency
    if latency is None:
        return None
    line = t(
        "latency-ttft",
        lang,
        ttft=latency.ttft_s,
        tokens=latency.prompt_tokens,
        config=_config(latency, lang),
        prefill=latency.prefill_s,
        mfu=round(latency.mfu * 100),
        tflops=round(latency.peak_tflops),
    )
    if latency.burst_wait_s is None:
        return line
    users = result.request.concurrency
    return line + t("latency-ttft-users", lang, users=users, wait=latency.burst_wait_s)


def load_lines(result: Result, lang: str) -> tuple[str, ...]:
    """The answer to a load ('10 requests a second under 2 s'): servers and cards, then the mean
    first token, what set the count, and the model used; empty when no load was asked."""
    latency = result.latency
    if latency is None or latency.requests_per_second is None or latency.servers is None:
        return ()
    config = _config(latency, lang)
    target = latency.ttft_target_s
    if latency.met is False and target is not None and latency.ttft_s > target:
        unmet = t(
            "latency-load-unmet",
            lang,
            target=target,
            tokens=latency.prompt_tokens,
            ttft=latency.ttft_s,
            config=config,
        )
        return (unmet,)
    lines = [
        t(
            "latency-load",
            lang,
            rps=latency.requests_per_second,
            target=target if target is not None else "none",
            servers=latency.servers,
            config=config,
            cards=latency.cards or 0,
        ),
        t(
            "latency-load-detail",
            lang,
            ttft=latency.ttft_under_load_s or 0.0,
            prefill=latency.prefill_s,
            tokens=latency.prompt_tokens,
            wait=latency.wait_s or 0.0,
            busy=round((latency.utilization or 0) * 100),
            inflight=latency.in_flight or 0.0,
        ),
    ]
    if latency.limit == "memory" and latency.max_in_flight is not None:
        lines.append(t("latency-load-memory", lang, max=latency.max_in_flight))
    lines.append(
        t("latency-load-model", lang, mfu=round(latency.mfu * 100), output=latency.output_tokens or 0)
    )
    return tuple(lines)
