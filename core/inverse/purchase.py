"""Rent or buy: the rent of an offer for a workload against buying that server, from the operator's
purchase file (`PURCHASE_FILE`, TOML, example `core/data/purchase.example.toml`): per server
configuration its purchase price, power draw, electricity price and hosting, in one currency.

Nothing is converted or guessed: a comparison needs the offer priced (per hour or per month) in the
purchase row's currency (`RentalOffer.price_in`); otherwise there is none, and the caller says so.
Buying costs the price once and, each month, the power the server draws for the hours it runs
plus the hosting; renting costs the hours at the hourly price (the monthly price where it is lower,
or the only one). Break-even: the month from which the rent paid exceeds the price plus the running
costs: price / (rent per month − running cost per month); never, when renting costs less a month
than running one's own server.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field

from core.catalogue.catalog import Catalog
from core.catalogue.load import load_rows, read_toml
from core.catalogue.offers import CURRENCY_CODE, MAX_OFFER_CARDS, RentalOffer
from core.errors import CatalogError

HOURS_PER_MONTH = 730.0  # 24 × 365 / 12: a server that runs around the clock
MAX_PURCHASE_PRICE = 10_000_000_000  # in any currency: ten billion buys any GPU server there is
MAX_POWER_KW = 200.0  # one server: a B200 rack unit draws about 14 kW
MAX_ENERGY_PRICE = 100_000.0  # per kWh, any currency
MAX_HOSTING_PER_MONTH = 1_000_000_000.0


class PurchaseOption(BaseModel):
    """One `[[server]]` row of the purchase file."""

    model_config = ConfigDict(extra="forbid")

    id: str = Field(pattern=r"^[A-Za-z0-9][A-Za-z0-9._-]*$", max_length=40)
    gpu: str = Field(description="GpuSpec.id")
    count: int = Field(gt=0, le=MAX_OFFER_CARDS)
    purchase_price: float = Field(gt=0, le=MAX_PURCHASE_PRICE, allow_inf_nan=False)
    power_kw: float = Field(gt=0, le=MAX_POWER_KW, allow_inf_nan=False, description="draw under load")
    electricity_per_kwh: float = Field(ge=0, le=MAX_ENERGY_PRICE, allow_inf_nan=False)
    hosting_per_month: float = Field(ge=0, le=MAX_HOSTING_PER_MONTH, allow_inf_nan=False)
    currency: str = Field(pattern=CURRENCY_CODE)


@dataclass(frozen=True)
class RentBuy:
    """A comparison for `hours_per_month` of use, every amount in `currency`."""

    offer_id: str
    gpu: str
    count: int
    currency: str
    hours_per_month: float
    rent_per_month: float
    purchase_price: float
    running_per_month: float  # power for those hours + hosting
    break_even_months: float | None  # None: renting never costs more than owning


@dataclass(frozen=True)
class Purchases:
    options: tuple[PurchaseOption, ...]

    def for_offer(self, offer: RentalOffer) -> list[PurchaseOption]:
        return [o for o in self.options if (o.gpu, o.count) == (offer.gpu, offer.count)]


def load_purchases(path: str | Path, catalog: Catalog) -> Purchases:
    """The purchase file, validated: a bad row is refused naming its row and field; each row's gpu
    must be a catalogue GPU."""
    path = Path(path)
    rows = load_rows(path, "server", PurchaseOption, read_toml(path))
    for index, row in enumerate(rows, start=1):
        if row.gpu not in catalog.gpus:
            raise CatalogError(
                f"{path}: [[server]] row {index} (id={row.id!r}): gpu: unknown gpu {row.gpu!r}", field="gpu"
            )
    return Purchases(tuple(rows))


def rent_or_buy(
    offer: RentalOffer,
    purchases: Purchases,
    hours_per_month: float = HOURS_PER_MONTH,
    currency: str | None = None,
) -> RentBuy | None:
    """Renting `offer` for `hours_per_month` against buying the same server, or None when the file
    has no such server priced in a currency the offer is priced in too. A row in `currency` (the
    user's) is compared first."""
    if not 0 < hours_per_month <= HOURS_PER_MONTH:
        raise ValueError(f"hours per month must be in (0, {HOURS_PER_MONTH:g}], got {hours_per_month}")
    options = sorted(purchases.for_offer(offer), key=lambda o: o.currency != currency)
    for option in options:
        hourly, monthly, currency = offer.price_in(option.currency)
        if currency != option.currency or (hourly is None and monthly is None):
            continue
        rents = [r for r in (hourly * hours_per_month if hourly else None, monthly) if r is not None]
        rent = min(rents)
        running = option.power_kw * hours_per_month * option.electricity_per_kwh + option.hosting_per_month
        saved = rent - running
        months = option.purchase_price / saved if saved > 0 else None
        return RentBuy(
            offer_id=offer.id,
            gpu=offer.gpu,
            count=offer.count,
            currency=option.currency,
            hours_per_month=hours_per_month,
            rent_per_month=rent,
            purchase_price=option.purchase_price,
            running_per_month=running,
            break_even_months=months if months is not None and math.isfinite(months) else None,
        )
    return None
