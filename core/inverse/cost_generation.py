"""The cost of generating images or clips (`Result.cost` of kind generation): seconds per image or clip
only where a published figure exists for that model, card and resolution (`core/data/throughput.toml`,
each row with its source, extended to cards of the same compute); each card of a server renders on its
own. No figure: no time, said so — never a guess."""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field

from core.catalogue.catalog import Catalog, default_catalog
from core.catalogue.load import DATA_DIR, load_rows
from core.contract import Assumption, Cost, Recommendation, Result, Task
from core.inverse.cost_options import SECONDS_AN_HOUR, _configs, _option
from core.language.words import note


class Figure(BaseModel):
    """A published generation time (one row of throughput.toml)."""

    model_config = ConfigDict(extra="forbid")

    id: str
    model: str
    gpus: list[str] = Field(min_length=1)
    resolution: tuple[int, int]
    frames: int | None = Field(default=None, gt=0, description="video: the clip length measured")
    steps: int = Field(gt=0)
    borrowed: dict[str, str] = Field(
        default_factory=dict,
        description="set by `figures`: card → the card measured (gpus.toml same_compute_as)",
    )
    seconds_low: float = Field(gt=0)
    seconds_high: float = Field(gt=0)
    source: str = Field(min_length=1)


def figures(catalog: Catalog | None = None) -> tuple[Figure, ...]:
    """The published figures, each extended to the cards whose catalogue row says `same_compute_as`
    a card measured; `borrowed` says, for the answer's note, which card was measured (the row keeps
    its own source)."""
    same = {
        g.id: g.same_compute_as for g in (catalog or default_catalog()).gpus.values() if g.same_compute_as
    }
    extended = []
    for row in _published():
        more = {
            card: measured for card, measured in same.items() if measured in row.gpus and card not in row.gpus
        }
        extended.append(
            row.model_copy(update={"gpus": [*row.gpus, *more], "borrowed": more}) if more else row
        )
    return tuple(extended)


@lru_cache(maxsize=1)
def _published(path: Path = DATA_DIR / "throughput.toml") -> tuple[Figure, ...]:
    return tuple(load_rows(path, "figure", Figure))


def figure_for(
    model: str | None,
    gpu: str,
    resolution: tuple[int, int] | None,
    frames: int | None = None,
    catalog: Catalog | None = None,
) -> Figure | None:
    """The figure for that model on that card at that resolution (and, for a clip, that length)."""
    return next(
        (
            f
            for f in figures(catalog)
            if f.model == model
            and gpu in f.gpus
            and (resolution is None or tuple(resolution) == f.resolution)
            and (f.frames is None or frames is None or frames == f.frames)
        ),
        None,
    )


def _generation(result: Result, catalog: Catalog) -> tuple[Cost, list[Assumption]]:
    req = result.request
    assert req.outputs is not None
    model = result.model.id
    options = []
    sources: list[str] = []
    configs = _configs(result, catalog)
    priced = {(r.gpu, r.count) for r, _ in configs}
    for offer in catalog.offers:  # cards with a published figure that fit, when ours have none
        fits = any(
            v.gpu == offer.gpu and v.count <= offer.count and v.verdict != "does_not_fit"
            for v in result.verdicts
        )
        published = figure_for(model, offer.gpu, req.resolution, req.frames, catalog)
        if fits and (offer.gpu, offer.count) not in priced and published:
            gpu = catalog.gpus[offer.gpu]
            rec = Recommendation(
                gpu=gpu.id,
                gpu_name=gpu.name,
                count=offer.count,
                offer_id=offer.id,
                url=offer.url,
                price_per_hour=offer.price_per_hour,
                currency=offer.currency,
                price_is_from=offer.price_is_from,
                prices={k: (p.price_per_hour, p.price_per_month) for k, p in offer.prices.items()},
                bytes_per_gpu=result.total_bytes,
                verdict="fits",
            )
            configs.append((rec, "published_figure"))
            priced.add((offer.gpu, offer.count))
            break
    borrowed: list[Assumption] = []
    video = req.task is Task.VIDEO_GENERATION
    for rec, reason in configs:
        fig = figure_for(model, rec.gpu, req.resolution, req.frames, catalog)
        if fig is None:
            options.append(_option(rec, reason, None))
            continue
        if fig.source not in sources:
            sources.append(fig.source)
        measured = fig.borrowed.get(rec.gpu)
        if measured is not None and not borrowed:
            borrowed.append(
                note(
                    "cost_figure_same_compute",
                    card=rec.gpu_name,
                    measured=catalog.gpus[measured].name,
                )
            )
        hours = tuple(
            req.outputs * s / rec.count / SECONDS_AN_HOUR for s in (fig.seconds_low, fig.seconds_high)
        )
        options.append(
            _option(
                rec,
                reason,
                (hours[0], hours[1]),
                seconds_per_output_low=fig.seconds_low,
                seconds_per_output_high=fig.seconds_high,
            )
        )
    notes = (
        [note("cost_generation_figures_video" if video else "cost_generation_figures"), *borrowed]
        if sources
        else [note("cost_no_figure", model=result.model.name)]
    )
    cost = Cost(kind="generation", outputs=req.outputs, source="; ".join(sources) or None, options=options)
    return cost, notes
