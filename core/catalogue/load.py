"""Reading a data file of `core/data/`: its TOML, its rows validated one by one (a bad row raises
`CatalogError` naming the file, the row index and its id, and the field), and the cross-checks a
catalogue makes at load (unique names, ranks, one main currency, one compute per GPU name)."""

from __future__ import annotations

import tomllib
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError

from core.catalogue.gpus import GpuSpec
from core.catalogue.models import ModelKind, ModelSpec
from core.catalogue.names import normalize_name
from core.catalogue.offers import RentalOffer
from core.errors import CatalogError

DATA_DIR = Path(__file__).parents[1] / "data"
Row = TypeVar("Row", bound=BaseModel)


def read_toml(path: Path) -> dict[str, Any]:
    """A data file's TOML, or a CatalogError naming the file (missing, or not valid TOML)."""
    try:
        with path.open("rb") as f:
            return tomllib.load(f)
    except FileNotFoundError as e:
        raise CatalogError(f"{path}: file not found") from e
    except UnicodeDecodeError as e:  # TOML is UTF-8 text; a file saved as cp1251 or Latin-1 is not
        bad = f"byte {e.start + 1} is {e.object[e.start]:#04x}"
        raise CatalogError(f"{path}: not UTF-8 text ({bad}); save it as UTF-8") from e
    except tomllib.TOMLDecodeError as e:
        raise CatalogError(f"{path}: not valid TOML: {e}") from e


def _read_table(path: Path, table: str, raw: dict[str, Any] | None = None) -> list[Any]:
    rows = (read_toml(path) if raw is None else raw).get(table, [])
    if not isinstance(rows, list) or not rows:
        raise CatalogError(f"{path}: expected a non-empty [[{table}]] array")
    return rows


_SHOWN_CHARS = 60  # of a bad value, in an error message


def _shown(value: Any) -> str:
    """A value as an error message quotes it: its repr, cut to a readable length."""
    text = repr(value)
    return text if len(text) <= _SHOWN_CHARS else text[: _SHOWN_CHARS - 1] + "…"


def load_rows(path: Path, table: str, row_type: type[Row], raw: dict[str, Any] | None = None) -> list[Row]:
    """The rows of a data file's ``[[table]]``, validated; ``raw``: the file's TOML, read already."""
    out: list[Row] = []
    for index, row in enumerate(_read_table(path, table, raw), start=1):
        row_id = row.get("id", "?") if isinstance(row, dict) else "?"
        try:
            out.append(row_type.model_validate(row))
        except ValidationError as e:
            first = e.errors()[0]
            where = ".".join(str(p) for p in first["loc"]) or "(row)"
            got = f" (got {_shown(first['input'])})" if first["loc"] else ""
            raise CatalogError(
                f"{path}: [[{table}]] row {index} (id={_shown(row_id)}): {where}: {first['msg']}{got}",
                field=where,
            ) from e
    seen: dict[str, int] = {}
    for index, item in enumerate(out, start=1):
        item_id = str(getattr(item, "id", ""))
        if item_id in seen:
            raise CatalogError(
                f"{path}: [[{table}]] row {index} (id={item_id!r}): id: duplicate of row {seen[item_id]}",
                field="id",
            )
        seen[item_id] = index
    return out


def check_same_compute(gpu: GpuSpec, gpus: dict[str, GpuSpec], where: str) -> None:
    """`same_compute_as` names a catalogue card whose compute and bandwidth are this card's."""
    if gpu.same_compute_as is None:
        return
    other = gpus.get(gpu.same_compute_as)
    if other is None:
        raise CatalogError(
            f"{where}: same_compute_as: unknown gpu {gpu.same_compute_as!r}", field="same_compute_as"
        )
    mine = (gpu.fp16_tflops, gpu.fp8_tflops, gpu.bandwidth_gb_s)
    theirs = (other.fp16_tflops, other.fp8_tflops, other.bandwidth_gb_s)
    if mine != theirs:
        raise CatalogError(
            f"{where}: same_compute_as: {other.id!r} has other fp16/fp8 TFLOPS or bandwidth "
            f"({theirs} vs {mine})",
            field="same_compute_as",
        )


def check_ranks(models: Sequence[ModelSpec], file: str) -> None:
    """Two popular models of one kind with the same `popularity` would make the buttons' order a
    matter of chance: a catalogue error naming the second row."""
    seen: dict[tuple[ModelKind, int], str] = {}
    for position, m in enumerate(models, start=1):
        if m.popularity is None:
            continue
        owner = seen.setdefault((m.kind, m.popularity), m.id)
        if owner != m.id:
            raise CatalogError(
                f"{file}: [[model]] row {position} (id={m.id!r}): popularity: {m.popularity} is "
                f"already the rank of {owner!r} among the {m.kind} models"
            )


def index_names(rows: Iterable[tuple[str, list[str]]], file: str, table: str) -> dict[str, str]:
    """normalised name -> row id; a name shared by two rows is a catalogue error."""
    index: dict[str, str] = {}
    for position, (row_id, names) in enumerate(rows, start=1):
        for name in names:
            key = normalize_name(name)
            owner = index.setdefault(key, row_id)
            if owner != row_id:
                raise CatalogError(
                    f"{file}: [[{table}]] row {position} (id={row_id!r}): aliases: "
                    f"{name!r} already names {owner!r}",
                    field="aliases",
                )
    return index


def check_one_main_currency(offers: Sequence[RentalOffer], file: str) -> None:
    """Every priced offer has the same main `currency`: "cheapest" (the ranking, the price list's
    rent button, the card comparison) compares prices as numbers, which means nothing across
    currencies, and no exchange rate is invented. Other currencies go in an offer's `prices`."""
    main: str | None = None
    for index, offer in enumerate(offers, start=1):
        if offer.currency is None:
            continue
        if main is None:
            main = offer.currency
        elif offer.currency != main:
            raise CatalogError(
                f"{file}: [[offer]] row {index} (id={offer.id!r}): currency: {offer.currency!r}, but "
                f"earlier offers are priced in {main!r}; give every offer the same main currency "
                "and other currencies under [offer.prices.<CODE>]",
                field="currency",
            )
