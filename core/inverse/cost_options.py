"""The configurations a cost is given for (`_configs`: the recommendation, the fastest offer, twice the
cards) and one priced option of them (`_option`: hours, card-hours and cost as ranges, three
significant digits), shared by the training, serving and generation costs (`core.inverse.cost`)."""

from __future__ import annotations

from core.catalogue.catalog import Catalog
from core.contract import CostOption, Recommendation, Result

SECONDS_AN_HOUR = 3600


def _configs(result: Result, catalog: Catalog) -> list[tuple[Recommendation, str]]:
    """The recommendation, the fastest offer, and the recommended card with twice the cards where an
    offer has them: at most three."""
    rec = result.recommendation
    if rec is None:
        return []
    out = [(rec, "recommended")]
    out += [(a, a.reason) for a in result.alternatives if (a.gpu, a.count) != (rec.gpu, rec.count)][:1]
    more = next(
        (
            o
            for o in catalog.offers
            if o.gpu == rec.gpu and o.count == rec.count * 2 and o.availability == "available"
        ),
        None,
    )
    if more is not None and all((r.gpu, r.count) != (more.gpu, more.count) for r, _ in out):
        out.append(
            (
                rec.model_copy(
                    update={
                        "count": more.count,
                        "offer_id": more.id,
                        "url": more.url,
                        "price_per_hour": more.price_per_hour,
                        "currency": more.currency,
                        "price_is_from": more.price_is_from,
                        "prices": {k: (p.price_per_hour, p.price_per_month) for k, p in more.prices.items()},
                    }
                ),
                "more_cards",
            )
        )
    return out


def _costs(hours: tuple[float, float] | None, hourly: float) -> tuple[float | None, float | None]:
    return (_round(hours[0] * hourly), _round(hours[1] * hourly)) if hours else (None, None)


def _option(
    rec: Recommendation, reason: str, hours: tuple[float, float] | None, **extra: float | int
) -> CostOption:
    price = rec.price_per_hour if rec.in_offers else None
    return CostOption(
        gpu=rec.gpu,
        gpu_name=rec.gpu_name,
        count=rec.count,
        reason=reason,
        offer_id=rec.offer_id,
        url=rec.url,
        price_per_hour=price,
        currency=rec.currency if price is not None else None,
        price_is_from=rec.price_is_from,
        hours_low=_round(hours[0]) if hours else None,
        hours_high=_round(hours[1]) if hours else None,
        gpu_hours_low=_round(hours[0] * rec.count) if hours else None,
        gpu_hours_high=_round(hours[1] * rec.count) if hours else None,
        cost_low=_round(hours[0] * price) if hours and price is not None else None,
        cost_high=_round(hours[1] * price) if hours and price is not None else None,
        prices={
            code: (hourly, *_costs(hours, hourly))
            for code, (hourly, _) in rec.prices.items()
            if hourly is not None and price is not None
        },
        **extra,
    )


def _round(x: float) -> float:
    """Three significant digits: ranges, not false precision."""
    return float(f"{x:.3g}")


def _peak_flops(catalog: Catalog, gpu: str) -> float | None:
    spec = catalog.gpus.get(gpu)
    return spec.fp16_tflops * 1e12 if spec is not None and spec.fp16_tflops else None


def _active_params(result: Result) -> float:
    return (result.model.active_params_b or result.model.params_b) * 1e9
