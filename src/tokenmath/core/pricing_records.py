"""Frozen records for what API price sheets and memory tiers hold, and the assumptions used to read them.

- `PriceSheet`: one provider's prices on one date (`catalog/prices/<provider>/<date>.yaml`), a map of
  `Offer`s. Prices are per million tokens in the offer's currency; a cache storage fee is per million
  tokens per hour. Long-context bands and service tiers (fast, priority, flex, off-peak, turbo) sit
  inside the offer they modify.
- `MemoryTier`: a place a KV cache can live (`catalog/tiers/NAME.yaml`): capacity, read bandwidth, and
  dated purchase prices per GB (2025–26 memory prices moved 3–10×, so every price carries its date).
  An HBM tier names its chip and takes capacity, bandwidth and rental price from the hardware catalog.
- `InferenceAssumptions`: the input ranges a backward reading of a price sheet needs (active
  parameters of a closed model, the chips and matmul precisions it may run on) and the lecture's own
  figures that the readings are checked against (`catalog/assumptions/NAME.yaml`).

Every figure keeps its source in `sources` (dotted path, e.g. `offers.gpt-5.input_per_mtok`); a figure
without its own source takes its offer's `source`, then the sheet's.
"""

from __future__ import annotations

import re
from typing import Literal

from pydantic import field_validator, model_validator

from .errors import InputError
from .records import Part, Record

__all__ = ["PriceSheet", "Offer", "LongContextBand", "ServiceTier", "MemoryTier", "TierPrice",
           "InferenceAssumptions", "date_key", "MEDIUM_OF_CLASS"]

_DATE = re.compile(r"^(\d{4})(?:-(?:(\d{2})|Q([1-4])|H([12]))(?:-(\d{2}))?)?$")


def date_key(text: str) -> tuple[int, int, int]:
    """'2026' < '2026-H1' = '2026-Q1' = '2026-01' < '2026-03-13': sortable (year, month, day)."""
    m = _DATE.match(str(text))
    if not m:
        raise InputError(f"date {text!r} is not YYYY, YYYY-MM, YYYY-MM-DD, YYYY-Qn or YYYY-Hn")
    year, month, quarter, half, day = m.groups()
    if (month and not 1 <= int(month) <= 12) or (day and not 1 <= int(day) <= 31) or (day and not month):
        raise InputError(f"date {text!r} has no such month or day")
    mon = int(month) if month else (3 * int(quarter) - 2 if quarter else (6 * int(half) - 5 if half else 0))
    return int(year), mon, int(day or 0)


def _str_keys(v):
    """YAML reads an unquoted 2026-03-13 as a date: dates are text here."""
    return {str(k): x for k, x in v.items()} if isinstance(v, dict) else v


_PRICE = "[0, 1e6]"  # per million tokens (or per GB): free to a million


class _Part(Part):
    pass


class LongContextBand(_Part):
    """Prices that apply when the prompt exceeds `above_tokens` (to the whole request if `whole_request`)."""

    above_tokens: int
    input_per_mtok: float | None = None
    output_per_mtok: float | None = None
    cache_read_per_mtok: float | None = None
    cache_write_per_mtok: float | None = None
    cache_write_5m_per_mtok: float | None = None
    cache_write_1h_per_mtok: float | None = None
    whole_request: bool = True
    note: str = ""

    RANGES = {"above_tokens": "[0, 1e10]", **{k: _PRICE for k in (
        "input_per_mtok", "output_per_mtok", "cache_read_per_mtok", "cache_write_per_mtok",
        "cache_write_5m_per_mtok", "cache_write_1h_per_mtok")}}


class ServiceTier(_Part):
    """A faster or slower service at another price: fast, priority, flex, off-peak, turbo.

    Either absolute prices or a `price_multiple` on the standard prices (with `price_multiple_low`
    when the provider quotes a range); `speed_multiple` is output tokens/s against the standard tier,
    `speed_is_upper_bound` when the provider says "up to".
    """

    kind: Literal["fast", "priority", "flex", "off-peak", "turbo"]
    price_multiple: float | None = None
    price_multiple_low: float | None = None
    input_per_mtok: float | None = None
    output_per_mtok: float | None = None
    cache_read_per_mtok: float | None = None
    speed_multiple: float | None = None
    speed_is_upper_bound: bool = False
    note: str = ""

    RANGES = {"price_multiple": "(0, 1e6]", "price_multiple_low": "(0, 1e6]", "speed_multiple": "(0, 1e6]",
              "input_per_mtok": _PRICE, "output_per_mtok": _PRICE, "cache_read_per_mtok": _PRICE}

    @model_validator(mode="after")
    def _priced(self):
        if self.price_multiple is None and self.input_per_mtok is None and self.output_per_mtok is None:
            raise ValueError("a service tier needs price_multiple or input/output prices")
        return self


class Offer(_Part):
    """One model as a provider sells it, on one date."""

    display_name: str
    source: str  # where these prices are published; a figure's own source overrides it
    currency: Literal["USD", "CNY"] = "USD"
    catalog_model: str | None = None  # the catalog model this offer serves, when its architecture is public
    context_window_tokens: int | None = None
    input_per_mtok: float
    output_per_mtok: float | None = None
    cache_read_per_mtok: float | None = None
    cache_write_per_mtok: float | None = None  # explicit cache creation with no stated lifetime
    cache_write_5m_per_mtok: float | None = None
    cache_write_1h_per_mtok: float | None = None
    cache_storage_per_mtok_hour: float | None = None
    cache_lifetimes_s: tuple[float, ...] = ()
    cache_note: str = ""
    batch_discount: float | None = None  # fraction off for asynchronous batch jobs
    long_context: dict[str, LongContextBand] = {}
    service_tiers: dict[str, ServiceTier] = {}
    as_of: str = ""  # the span the reference says these prices held
    confidence: str = ""
    notes: str = ""

    RANGES = {"context_window_tokens": "[1, 1e10]", "cache_lifetimes_s": "(0, 1e9]", "batch_discount": "[0, 1)",
              **{k: _PRICE for k in ("input_per_mtok", "output_per_mtok", "cache_read_per_mtok",
                                     "cache_write_per_mtok", "cache_write_5m_per_mtok", "cache_write_1h_per_mtok",
                                     "cache_storage_per_mtok_hour")}}

    @property
    def bands(self) -> list[LongContextBand]:
        """Long-context bands, lowest threshold first."""
        return sorted(self.long_context.values(), key=lambda b: b.above_tokens)

    def band_for(self, prompt_tokens: float) -> LongContextBand | None:
        """The band a prompt of this many tokens is billed in (None: the base prices)."""
        hit = [b for b in self.bands if prompt_tokens > b.above_tokens]
        return hit[-1] if hit else None


class PriceSheet(Record):
    """One provider's offers as published on `date`; the file is `prices/<provider>/<date>.yaml`."""

    kind: Literal["price_sheet"] = "price_sheet"
    provider: str
    date: str
    offers: dict[str, Offer]

    @model_validator(mode="before")
    @classmethod
    def _name(cls, data):
        if isinstance(data, dict):
            data = dict(data)
            if "date" in data:
                data["date"] = str(data["date"])
            if data.get("provider") and data.get("date") and "/" not in str(data.get("name", "")):
                data["name"] = f"{data['provider']}/{data['date']}"
        return data

    @field_validator("date")
    @classmethod
    def _date(cls, v: str) -> str:
        date_key(v)
        return v

    @field_validator("offers")
    @classmethod
    def _some(cls, v):
        if not v:
            raise ValueError("a price sheet needs at least one offer")
        return v

    def figure_source(self, offer_id: str, field_path: str) -> str:
        """Where a price comes from: the figure's own source, else its offer's, else the sheet's."""
        own = self.sources.get(f"offers.{offer_id}.{field_path}")
        return own or self.offers[offer_id].source or self.source


MEDIUM_OF_CLASS = {"hbm": "HBM", "lpddr": "DRAM", "ddr": "DRAM", "mrdimm": "DRAM", "cxl": "DRAM",
                   "nvme-tlc": "flash", "nvme-qlc": "flash", "hdd": "HDD"}


class TierPrice(_Part):
    """Purchase price per GB (decimal) on one date, with the range the sources give."""

    usd_per_gb: float
    usd_per_gb_low: float | None = None
    usd_per_gb_high: float | None = None
    note: str = ""

    RANGES = {"usd_per_gb": "(0, 1e6]", "usd_per_gb_low": "(0, 1e6]", "usd_per_gb_high": "(0, 1e6]"}

    @model_validator(mode="after")
    def _ordered(self):
        lo, hi = self.usd_per_gb_low, self.usd_per_gb_high
        if (lo is not None and lo > self.usd_per_gb) or (hi is not None and hi < self.usd_per_gb):
            raise ValueError("usd_per_gb must lie between usd_per_gb_low and usd_per_gb_high")
        return self


class MemoryTier(Record):
    """A memory or storage device a KV cache can be held in."""

    kind: Literal["tier"] = "tier"
    tier_class: Literal["hbm", "lpddr", "ddr", "mrdimm", "cxl", "nvme-tlc", "nvme-qlc", "hdd"]
    device: str = ""
    chip: str | None = None  # HBM: capacity, bandwidth and rental come from this hardware entry
    capacity_bytes: float | None = None
    read_bandwidth_bytes_per_s: float | None = None
    prices: dict[str, TierPrice] = {}  # date -> purchase price
    service_life_s: float | None = None  # purchase price is spread over this life
    lecture_drain_claim_s: float | None = None  # what the lecture said this medium drains in (low end)
    lecture_drain_claim_high_s: float | None = None  # high end, when the lecture gave a range
    confidence: str = ""

    RANGES = {"capacity_bytes": "[1, 1e18]", "read_bandwidth_bytes_per_s": "[1, 1e16]",
              "service_life_s": "(0, 1e10]", "lecture_drain_claim_s": "(0, 1e10]",
              "lecture_drain_claim_high_s": "(0, 1e10]"}

    @field_validator("prices", mode="before")
    @classmethod
    def _text_dates(cls, v):
        return _str_keys(v)

    @field_validator("prices")
    @classmethod
    def _dates(cls, v):
        for d in v:
            date_key(d)
        return v

    @model_validator(mode="after")
    def _sized(self):
        if self.chip is None and (self.capacity_bytes is None or self.read_bandwidth_bytes_per_s is None):
            raise ValueError("a tier needs capacity_bytes and read_bandwidth_bytes_per_s (or a chip)")
        return self

    @property
    def medium(self) -> str:
        """HBM, DRAM, flash or HDD."""
        return MEDIUM_OF_CLASS[self.tier_class]

    def price_on(self, date: str | None = None) -> tuple[str, TierPrice] | None:
        """The latest price dated on or before `date` (default: the latest; the earliest if none precede)."""
        if not self.prices:
            return None
        dated = sorted(self.prices.items(), key=lambda kv: date_key(kv[0]))
        if date is None:
            return dated[-1]
        before = [kv for kv in dated if date_key(kv[0]) <= date_key(date)]
        return before[-1] if before else dated[0]


class InferenceAssumptions(Record):
    """Input ranges for reading a closed model's architecture out of its prices, and the lecture's figures."""

    kind: Literal["assumptions"] = "assumptions"
    active_params_low: float
    active_params: float
    active_params_high: float
    hardware: dict[str, list[str]]  # provider -> chips it may serve on; key 'default' for the rest
    precisions: list[str]  # matmul precisions the serving may use
    lecture_hardware_ratio: float
    lecture_active_params: float
    lecture_threshold_tokens: int
    lecture_kv_claim_bytes: float
    lecture_kv_layers: int
    lecture_kv_heads: int
    lecture_kv_head_dim: int
    lecture_cache_media: dict[str, str]  # lifetime (s, as text) -> the medium the lecture put it in

    RANGES = {"active_params_low": "[1, 1e16]", "active_params": "[1, 1e16]", "active_params_high": "[1, 1e16]",
              "lecture_hardware_ratio": "(0, 1e6]", "lecture_active_params": "[1, 1e16]",
              "lecture_threshold_tokens": "[1, 1e10]", "lecture_kv_claim_bytes": "(0, 1e9]",
              "lecture_kv_layers": "[1, 1e5]", "lecture_kv_heads": "[1, 1e5]", "lecture_kv_head_dim": "[1, 1e5]"}

    @field_validator("lecture_cache_media", mode="before")
    @classmethod
    def _text_keys(cls, v):
        return _str_keys(v)

    @model_validator(mode="after")
    def _ordered(self):
        if not 0 < self.active_params_low <= self.active_params <= self.active_params_high:
            raise ValueError("need 0 < active_params_low ≤ active_params ≤ active_params_high")
        if "default" not in self.hardware:
            raise ValueError("hardware needs a 'default' list of chips")
        return self

    def chips_for(self, provider: str) -> list[str]:
        return self.hardware.get(provider, self.hardware["default"])
