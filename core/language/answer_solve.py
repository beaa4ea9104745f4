"""The compact blocks of an inverse answer (`Result.solved`) and of time & cost (`Result.cost`), in
the user's language: plain-text lines that `core.language.answer.build_answer` puts on the `Answer`, laid out
by the CLI (`core.layouts.plain`) and the bot (`bot.presenter`) like every other line. Decisions only here:
what is said first (the value found), then the margin, then what would not fit and why."""

from __future__ import annotations

from core.catalogue.offers import Bands
from core.contract import Cost, CostOption, Result, Solved, SolveFor, Task
from core.language.cards import config_text
from core.language.phrases import format_bytes
from core.language.words import label, t


def _gpu_config(solved: Solved, lang: str) -> str:

    if solved.gpu is None:  # a bare memory size
        return t("solve-memory-config", lang, count=solved.count, gb=solved.usable_bytes / 2**30)
    return config_text(solved.count, solved.gpu_name, lang)


def _value(field: SolveFor, value: int | str, result: Result, lang: str) -> str:
    if field in (SolveFor.CONTEXT_LENGTH, SolveFor.SEQ_LEN):
        return t("solve-tokens", lang, tokens=int(value))
    if field is SolveFor.PRECISION:
        return label("precision", str(value), lang)
    if field is SolveFor.MODEL:
        from core.catalogue.catalog import default_catalog

        spec = default_catalog().models.get(str(value))
        return spec.name if spec else str(value)
    return str(value)


def _budget(result: Result, solved: Solved) -> int:
    """The bytes per card the answer compares with: the budget its verdict uses (vLLM: its share of
    the card), so one message names one capacity."""
    target = result.target
    if target is not None and solved.gpu is not None and target.gpu == solved.gpu:
        return target.usable_bytes
    return solved.usable_bytes


def _bands() -> Bands:
    """The fit bands of the ranking policy (the offers file's `[ranking]`)."""
    from core.catalogue.catalog import default_catalog

    return default_catalog().ranking.bands


def _next_reason(need: int, usable: int) -> str:
    """Why the next value does not fit, as a message suffix: '' (more than the budget), `-no_margin`
    (within it, beyond the tight band) or `-budget` (within the band of this budget: the next value
    runs under another engine, whose share of the card is smaller, e.g. vLLM's 90 %)."""
    if need > usable:
        return ""
    if need > usable * (1 - _bands().tight):
        return "-no_margin"
    return "-budget"


def _family(solved: Solved) -> str:
    return solved.family.title() if solved.family else "-"


def solved_lines(result: Result, lang: str) -> tuple[str, ...]:
    """'📏 Longest context on 1× RTX 4090 48 GB: 131,072 tokens', the margin, the next value."""
    solved = result.solved
    if solved is None:
        return ()
    field, config = solved.solve_for, _gpu_config(solved, lang)
    what = str(field)
    usable = _budget(result, solved)
    if solved.value is None:
        assert solved.next_value is not None
        return (
            t(
                f"solve-none-{what}",
                lang,
                config=config,
                value=_value(field, solved.next_value, result, lang),
                need=format_bytes(solved.next_bytes_per_gpu or 0, lang),
                usable=format_bytes(usable, lang),
            ),
        )
    found = _value(field, solved.value, result, lang)
    if solved.precision:  # the largest-model search says the format it fits in
        precision = label("precision", solved.precision, lang)
        found = t("solve-in-precision", lang, value=found, precision=precision)
    lines = [
        t(
            f"solve-found-{what}" if what != "model" or solved.family else "solve-found-any-model",
            lang,
            config=config,
            value=found,
            count=int(solved.value) if isinstance(solved.value, int) else 0,
            context=result.request.context_length or 0,
            family=_family(solved),
        )
    ]
    lines.append(
        t(
            "solve-margin",
            lang,
            need=format_bytes(solved.bytes_per_gpu or 0, lang),
            usable=format_bytes(usable, lang),
            margin=format_bytes(usable - (solved.bytes_per_gpu or 0), lang),
        )
    )
    comfortable = solved.comfortable_value
    if comfortable is not None and comfortable != solved.value:
        value = _value(field, comfortable, result, lang)
        lines.append(t("solve-comfortable", lang, value=value, percent=round(_bands().comfortable * 100)))
    if solved.tight_value is not None:  # a larger value fits, but without the headroom
        tight = _value(field, solved.tight_value, result, lang)
        if solved.tight_precision:
            precision = label("precision", solved.tight_precision, lang)
            tight = t("solve-in-precision", lang, value=tight, precision=precision)
        lines.append(
            t(
                "solve-tight",
                lang,
                value=tight,
                percent=round(_bands().comfortable * 100),
                need=format_bytes(solved.tight_bytes_per_gpu or 0, lang),
                usable=format_bytes(usable, lang),
            )
        )
    if field is SolveFor.CONCURRENCY and solved.aggregate_tokens_per_s:
        lines.append(
            t(
                "solve-speed",
                lang,
                total=round(solved.aggregate_tokens_per_s),
                per_user=round(solved.tokens_per_s or 0),
            )
        )
    if solved.next_value is None:
        key = "solve-all-fit-model" if solved.limit == "model_max" else f"solve-all-fit-{solved.limit}"
        lines.append(t(key, lang, value=_value(field, solved.max_value or solved.value, result, lang)))
    else:
        grows = label("component", solved.grows, lang) if solved.grows else None
        counted = field not in (SolveFor.PRECISION, SolveFor.MODEL) and grows is not None
        need = solved.next_bytes_per_gpu or 0
        key = "solve-next" if counted else "solve-next-step"
        lines.append(
            t(
                key + _next_reason(need, usable),
                lang,
                value=_value(field, solved.next_value, result, lang),
                need=format_bytes(need, lang),
                usable=format_bytes(usable, lang),
                grows=grows or "-",
            )
        )
    return tuple(lines)


# --- time & cost ---------------------------------------------------------------------------------


def cost_lines(result: Result, lang: str, currency: str | None = None) -> tuple[str, ...]:
    """Time and cost; prices in `currency` where the operator priced the offer in it."""
    cost = result.cost
    if cost is None:
        return ()
    req = result.request
    video = req.task is Task.VIDEO_GENERATION
    if cost.kind == "training":
        head = t(
            "cost-training",
            lang,
            tokens=cost.tokens or 0,
            epochs=req.epochs,
            flops=_flops(cost.flops or 0, lang),
            factor=cost.flops_factor or 0,
            mfu_low=round((cost.mfu_low or 0) * 100),
            mfu_high=round((cost.mfu_high or 0) * 100),
        )
    elif cost.kind == "serving":
        head = t(
            "cost-serving",
            lang,
            requests=cost.requests_per_day or 0,
            prompt=cost.prompt_tokens or 0,
            tokens=cost.tokens_per_request or 0,
        )
    else:
        head = t("cost-generation-video" if video else "cost-generation", lang, outputs=cost.outputs or 0)
    # an option without a published time is said once, for the recommended configuration only
    shown = [o for o in cost.options if o.hours_low is not None or o.reason == "recommended"]
    lines = [head, *(_option_line(_in_currency(o, currency), cost, lang, video=video) for o in shown)]
    if not cost.options:
        lines.append(t("cost-no-options", lang))
    return tuple(lines)


_SUPERSCRIPT = str.maketrans("0123456789-", "⁰¹²³⁴⁵⁶⁷⁸⁹⁻")


def _flops(flops: float, lang: str) -> str:
    """'9,6·10¹⁷': two significant digits, the mantissa in the language's decimal mark."""
    mantissa, exponent = f"{flops:.1e}".split("e")
    return t(
        "cost-flops", lang, mantissa=float(mantissa), exponent=str(int(exponent)).translate(_SUPERSCRIPT)
    )


def _money(low: float, high: float, currency: str, lang: str, *, is_from: bool = False) -> str:
    """'1 230–2 460 ₽'; 'от …' / 'from …' on an offer whose hourly price is a starting price (the
    answer's lead line says the same of that offer: `core.language.cards.hourly_price`)."""
    key = "cost-money-from" if is_from else "cost-money"
    return t(key, lang, low=low, high=high, currency=label("currency", currency, lang))


def _in_currency(o: CostOption, currency: str | None) -> CostOption:
    """The option as priced in `currency`, where the offer has that price (else as it is)."""
    if currency is None or currency not in o.prices:
        return o
    hourly, low, high = o.prices[currency]
    shown = {"price_per_hour": hourly, "currency": currency, "cost_low": low, "cost_high": high}
    return o.model_copy(update=shown)


def _option_line(o: CostOption, cost: Cost, lang: str, *, video: bool = False) -> str:

    config = config_text(o.count, o.gpu_name, lang)
    if o.hours_low is None or o.hours_high is None:
        return t("cost-option-no-time", lang, config=config)
    if o.cost_low is not None and o.cost_high is not None and o.currency:
        price = _money(o.cost_low, o.cost_high, o.currency, lang, is_from=o.price_is_from)
        if cost.kind == "serving":
            price = t("cost-per-day", lang, price=price)
    else:
        price = t("price-on-request", lang)
    if cost.kind == "serving":
        extra = ""
        if o.price_per_hour is not None and o.currency and o.servers:
            extra = t(
                "cost-serving-day-from" if o.price_is_from else "cost-serving-day",
                lang,
                servers=o.servers,
                price=round(24 * o.servers * o.price_per_hour),
                currency=label("currency", o.currency, lang),
            )
        return t(
            "cost-option-serving",
            lang,
            config=config,
            low=o.hours_low,
            high=o.hours_high,
            price=price,
            servers=o.servers or 1,
            day=extra,
        )
    if cost.kind == "generation":
        key = "cost-option-generation-video" if video else "cost-option-generation"
        if o.seconds_per_output_low == o.seconds_per_output_high:  # one published measurement
            seconds = o.seconds_per_output_low or 0
            return t(f"{key}-one", lang, config=config, seconds=seconds, low=o.hours_low, price=price)
        return t(
            key,
            lang,
            config=config,
            seconds_low=o.seconds_per_output_low or 0,
            seconds_high=o.seconds_per_output_high or 0,
            low=o.hours_low,
            high=o.hours_high,
            price=price,
        )
    return t(
        "cost-option-training",
        lang,
        config=config,
        low=o.hours_low,
        high=o.hours_high,
        gpu_low=o.gpu_hours_low or 0,
        gpu_high=o.gpu_hours_high or 0,
        price=price,
    )
