"""Rental offers as the operator writes them (the offers file, `OFFERS_FILE`): a configuration of cards,
its price in one or more currencies, its availability, and the policy that ranks the offers that fit.
Every value is bounded, so an absurd one is refused at load naming its row and field."""

from __future__ import annotations

import re
from typing import Annotated, Literal, NamedTuple
from urllib.parse import urlsplit

from pydantic import BaseModel, ConfigDict, Field, StringConstraints, field_validator, model_validator

MAX_SERVER_RAM_GB = 65_536  # 64 TB: past any server
MAX_RAM_BANDWIDTH_GB_S = 10_000  # 2 sockets × 12 channels of DDR5-8800 is 1.7 TB/s
DEFAULT_OFFER_PRIORITY = 100  # an offer without `priority`: after every offer that sets a smaller one
# Bounds of an offers file's values (the operator's OFFERS_FILE, re-read by `/offers reload`), so that an
# absurd value is refused at load, naming its row and field, instead of breaking every answer: a price
# goes through Fluent's NUMBER (Python's decimal, which gives up on 1e300) and into costs (× hours × servers).
MAX_OFFER_CARDS = 64  # cards in one rented configuration
MAX_PRICE_PER_HOUR = 10_000_000  # in any currency: ten million an hour is no server anyone rents
MAX_PRICE_PER_MONTH = MAX_PRICE_PER_HOUR * 24 * 31
MAX_OFFER_ID = 40  # characters: `/offers` lists up to 40 offers in one Telegram message (4,096 characters)
MAX_OFFER_URL = 2048  # characters: what browsers and Telegram's URL buttons take
MAX_OFFER_NOTE = 500  # characters
MAX_OFFER_PRIORITY = 1_000_000
OFFER_URL_SCHEMES = ("http", "https")
_URL_FORBIDDEN = re.compile(r"[\s\x00-\x1f\x7f]")  # whitespace and control characters: no URL holds them
RankKey = Literal["price", "priority", "cards", "memory"]
Availability = Literal["available", "on_request", "sold_out"]
"""An offer's availability: free to rent; rented only on request (ranked and shown as "price on
request"); taken (`sold_out`: never recommended, marked in the price list)."""


AVAILABILITIES: tuple[Availability, ...] = ("available", "on_request", "sold_out")
DEFAULT_RANK_ORDER: tuple[RankKey, ...] = ("price", "priority", "cards", "memory")
DEFAULT_COMFORTABLE_HEADROOM = 0.10
DEFAULT_CHEAPEST_PRICED_LEADS = True
# Below 3% of a card free a run does not fit reliably: the caching allocator's fragmentation and
# the spikes of a longer prompt or a larger batch commonly take that much (PyTorch CUDA memory
# management notes), so such a run is "does not fit", never "tight".
DEFAULT_TIGHT_HEADROOM = 0.03


class Bands(NamedTuple):
    """The fit bands every verdict uses, as shares of the card left free: at least `comfortable`
    fits; at least `tight` fits tightly; less does not fit reliably."""

    comfortable: float = DEFAULT_COMFORTABLE_HEADROOM
    tight: float = DEFAULT_TIGHT_HEADROOM


DEFAULT_BANDS = Bands()


class RankingPolicy(BaseModel):
    """How the recommender orders the rental offers that fit: the `[ranking]` table of the offers
    file, so an operator's policy travels with their offers (`OFFERS_FILE`). Without the table,
    the defaults below apply.

    The fit bands (`bands`): a configuration with at least `comfortable_headroom` of each card's
    memory free fits; with at least `tight_headroom`, it fits tightly; with less it does not fit
    reliably. Every verdict, offer and mitigation reads these. Only configurations that fit
    comfortably are considered; tight ones only when none does. Among those, `order` compares, key by key:

    - `price`: offers with a price first, by that price per hour (the whole server's);
      "on request" ones after them, equal among themselves;
    - `priority`: the offer's `priority`, lower first (the operator's own preference);
    - `cards`: fewer cards first (one larger card beats two smaller: no inter-card traffic);
    - `memory`: the least memory rented (cards × memory per card) first.

    Keys left out of `order` still break ties, after the listed ones and in the order above; the
    last tie-break is the offer's position in the file.

    `cheapest_priced_leads`: when every comfortable configuration is "on request" and an offer with a
    price fits only tightly (less than `comfortable_headroom` free), the cheapest such still leads — a
    price the user can act on beats "on request" — and the best comfortable configuration is named
    second (`Result.alternatives`, reason "most_headroom"), with what keeps the tight one safe.
    """

    model_config = ConfigDict(extra="forbid")

    comfortable_headroom: float = Field(
        default=DEFAULT_COMFORTABLE_HEADROOM,
        ge=0,
        lt=1,
        description="share of each card's memory left free for a configuration to count as comfortable",
    )
    tight_headroom: float = Field(
        default=DEFAULT_TIGHT_HEADROOM,
        ge=0,
        lt=1,
        description="the least share of each card's memory left free for a configuration to fit at all "
        "(tightly); below it, it does not fit reliably",
    )
    order: list[RankKey] = Field(default_factory=lambda: list(DEFAULT_RANK_ORDER), min_length=1)
    cheapest_priced_leads: bool = Field(
        default=DEFAULT_CHEAPEST_PRICED_LEADS,
        description="a tight priced offer leads before comfortable ones on request; those second",
    )

    @field_validator("order")
    @classmethod
    def _no_repeats(cls, order: list[RankKey]) -> list[RankKey]:
        repeated = next((k for i, k in enumerate(order) if k in order[:i]), None)
        if repeated is not None:
            raise ValueError(f"{repeated!r} is listed twice")
        return order

    @model_validator(mode="after")
    def _tight_below_comfortable(self) -> RankingPolicy:
        if self.tight_headroom > self.comfortable_headroom:
            raise ValueError(
                f"tight_headroom ({self.tight_headroom}) is more than comfortable_headroom "
                f"({self.comfortable_headroom})"
            )
        return self

    @property
    def bands(self) -> Bands:
        return Bands(self.comfortable_headroom, self.tight_headroom)

    @property
    def keys(self) -> list[RankKey]:
        """`order` followed by the keys it leaves out, in the default order."""
        return [*self.order, *(k for k in DEFAULT_RANK_ORDER if k not in self.order)]


CURRENCY_CODE = r"^[A-Z]{3}$"  # ISO 4217: RUB, KZT, USD


class OfferPrice(BaseModel):
    """The offer's price in another currency, as the operator sets it (`[offer.prices.KZT]`): never
    converted from the main one. Bounded as the main price is."""

    model_config = ConfigDict(extra="forbid")

    price_per_hour: float | None = Field(default=None, gt=0, le=MAX_PRICE_PER_HOUR, allow_inf_nan=False)
    price_per_month: float | None = Field(default=None, gt=0, le=MAX_PRICE_PER_MONTH, allow_inf_nan=False)

    @model_validator(mode="after")
    def _some_price(self) -> OfferPrice:
        if self.price_per_hour is None and self.price_per_month is None:
            raise ValueError("a price in another currency needs price_per_hour or price_per_month")
        return self


class RentalOffer(BaseModel):
    model_config = ConfigDict(extra="forbid")

    id: str = Field(pattern=r"^[A-Za-z0-9][A-Za-z0-9._-]*$", max_length=MAX_OFFER_ID)
    gpu: str = Field(description="GpuSpec.id")
    count: int = Field(gt=0, le=MAX_OFFER_CARDS)
    price_per_hour: float | None = Field(
        default=None, gt=0, le=MAX_PRICE_PER_HOUR, allow_inf_nan=False, description="empty: on request"
    )
    currency: str | None = Field(default=None, pattern=CURRENCY_CODE, description="the main currency")
    prices: dict[Annotated[str, StringConstraints(pattern=CURRENCY_CODE)], OfferPrice] = Field(
        default_factory=dict, description="the same offer priced by the operator in other currencies"
    )
    url: str = Field(max_length=MAX_OFFER_URL)
    note: str | None = Field(default=None, max_length=MAX_OFFER_NOTE)
    price_is_from: bool = Field(
        default=False, description="price_per_hour is a starting price: shown as 'from 149 ₽/h'"
    )
    price_per_month: float | None = Field(
        default=None,
        gt=0,
        le=MAX_PRICE_PER_MONTH,
        allow_inf_nan=False,
        description="a monthly price where the operator has one",
    )
    priority: int = Field(
        default=DEFAULT_OFFER_PRIORITY,
        ge=0,
        le=MAX_OFFER_PRIORITY,
        description="the operator's preference, lower first (the `priority` key of `[ranking].order`)",
    )
    availability: Availability = Field(
        default="available", description="free, on request or taken (admins change it: /offers off|on)"
    )
    # issue 22: what llama.cpp offload to RAM runs at; unknown ones are assumed (core/data/offload.toml)
    ram_gb: float | None = Field(
        default=None, gt=0, le=MAX_SERVER_RAM_GB, allow_inf_nan=False, description="the server's RAM, GB"
    )
    ram_bandwidth_gb_s: float | None = Field(
        default=None,
        gt=0,
        le=MAX_RAM_BANDWIDTH_GB_S,
        allow_inf_nan=False,
        description="the server's RAM bandwidth, GB/s (channels × MT/s × 8 bytes)",
    )

    @field_validator("url")
    @classmethod
    def _url_is_well_formed(cls, url: str) -> str:
        """An http(s) URL naming a host, with nothing a link cannot hold (it goes on buttons and in texts)."""
        if _URL_FORBIDDEN.search(url):
            raise ValueError("must not contain spaces or control characters")
        try:
            parts = urlsplit(url)
            host, _ = parts.hostname, parts.port  # the port raises when not a number in 0..65535
        except ValueError as e:
            raise ValueError(f"is not a well-formed URL ({e})") from None
        if parts.scheme not in OFFER_URL_SCHEMES:
            raise ValueError("must start with http:// or https://")
        if not host:
            raise ValueError("must name a host after the scheme")
        return url

    @model_validator(mode="after")
    def _price_has_currency(self) -> RentalOffer:
        if (self.price_per_hour is not None or self.price_per_month is not None) and self.currency is None:
            raise ValueError("a price needs a currency")
        if self.price_is_from and self.price_per_hour is None:
            raise ValueError("price_is_from needs a price_per_hour")
        if self.prices and (self.currency is None or self.currency in self.prices):
            raise ValueError("prices in other currencies need a main price and currency, not repeated")
        return self

    def price_in(self, currency: str | None) -> tuple[float | None, float | None, str | None]:
        """(per hour, per month, currency): in `currency` where the operator gave that price, else
        in the main currency."""
        other = self.prices.get(currency) if currency else None
        if other is not None and currency is not None:
            return other.price_per_hour, other.price_per_month, currency
        return self.price_per_hour, self.price_per_month, self.currency
