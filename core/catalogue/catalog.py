"""Load and query the catalogues in `core/data/`: GPUs, models, rental offers.

Every row is validated by pydantic at load; a bad row raises `CatalogError` naming the file,
the row index and its id, and the field. Cross-checks: unique ids, every offer names a known GPU,
no model name/alias (after normalisation) points at two different models. The offers file also
holds the recommender's ranking policy, an optional `[ranking]` table (`core.catalogue.specs.RankingPolicy`).

Name matching lives here, for the resolver and the free-text parser alike: exact lookup
(`find_model`, `find_gpu`), models named by all of a text's name words (`models_named`), ranked
fuzzy search (`search`, `suggest`), and the one reader of model sizes ("7b", "8x7b", "405 млрд").
"""

from __future__ import annotations

import difflib
import re
import tomllib
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from functools import cached_property, lru_cache
from pathlib import Path
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError

from core.catalogue.specs import GpuSpec, ModelKind, ModelSpec, RankingPolicy, RentalOffer, VisionTower
from core.errors import CatalogError, UnknownModelError

DATA_DIR = Path(__file__).parents[1] / "data"

Row = TypeVar("Row", bound=BaseModel)

# Tokens that name a variant of a checkpoint, not a different architecture: chat/instruct
# fine-tunes, the `-hf` conversions of Llama 2, and quantised re-uploads (the precision is a
# separate request field).
VARIANT_TOKENS = frozenset(
    {
        "instruct",
        "chat",
        "hf",
        "it",
        "base",
        "bnb",
        "4bit",
        "8bit",
        "awq",
        "gptq",
        "gguf",
        "fp8",
        "fp16",
        "bf16",
        "int4",
        "int8",
        "mlx",
        "exl2",
    }
)
# A release tag such as Qwen3's "-2507" or Mistral's "-2407" (YYMM) re-trains, not re-shapes.
_RELEASE_DATE = re.compile(r"^2[3-9](0[1-9]|1[0-2])$")
# Fuzzy search: a query token matches a name token this similar (difflib ratio), e.g. "lama"/"llama".
_FUZZY_TOKEN_RATIO = 0.85
TYPO_RATIO = 0.75  # difflib ratio of a word one letter off in five from a name word ("lamma", "llama")
_FUZZY_TOKEN_WEIGHT = 0.8
# Bounded work on long text (a Telegram message holds up to 4,096 characters): `search` reads the first
# this many words of its query (a name has a handful; more is prose, where no name can reach half the
# words anyway), and one word's fuzzy matches are worked out once per catalogue (`Catalog._close`).
MAX_SEARCH_WORDS = 16
_CLOSE_CACHE_SIZE = 4096  # words whose fuzzy matches a catalogue remembers
# A size ("70b", "8x7b") outweighs a version number: "llama 3 70b" prefers Llama 3.3 70B to Llama 3 8B.
_SIZE_TOKEN_WEIGHT = 2.0


# --- model sizes: "7b", "1.5B", "350m", "8x7b" ---------------------------------------------------
# The one reader of a model's size, wherever it is written: a word of a catalogue name, free text
# (the parser's, normalised first: "70б", "70 млрд" are "70b" there) and a whole `model` field
# (`core.model.resolve.parse_size`: "405 млрд", "1.8T", "8х22b").

_HUGE = 10**30  # a number longer than 30 digits is absurd: read as this, so it is reported, not computed
_SIZE_NUMBER = r"\d+(?:\.\d+)?"
_PARAMS = r"(?:\s*(?:params|parameters|параметр\w*))?"
# in text: a mixture of experts, "8x7b" (experts × parameters of each)...
SIZE_MOE = re.compile(r"(?<![\w.])(?P<experts>\d{1,3})\s*x\s*(?P<each>\d{1,6}(?:\.\d+)?)\s?b(?!\w)")
# ...or a dense size, "70b", "350m" ("1m" alone is rather a context, so millions need two digits)
SIZE = re.compile(r"(?<![\w.])(?:(?P<b>" + _SIZE_NUMBER + r")\s?b|(?P<m>\d{2,})\s?m)" + _PARAMS + r"(?!\w)")
# a word of a name: "70b", "8x7b", "350m"
_SIZE_WORD = re.compile(r"^(\d+x)?" + _SIZE_NUMBER + "[bm]$")
# a whole field, as people type it: units in words, either language, a decimal comma
_SIZE_FIELD = re.compile(
    r"""^\s*(?:(?P<experts>\d+)\s*[x×х]\s*)?
    (?P<number>\d+(?:[.,]\d+)?)\s*
    (?P<unit>b|bn|billion|б|млрд|миллиард\w*|m|mn|million|м|млн|миллион\w*|t|trillion|трлн)\.?"""
    + _PARAMS
    + r"\s*$",
    re.IGNORECASE | re.VERBOSE,
)
_UNIT_TO_BILLIONS = {"b": 1.0, "m": 1e-3, "t": 1e3}


@dataclass(frozen=True)
class Size:
    """A model size: billions of parameters (of each expert, for a mixture of experts)."""

    billions: float
    experts: int | None = None

    @property
    def total_b(self) -> float:
        """All parameters, in billions (nominal for a mixture: "8x7b" is 56)."""
        return self.billions if self.experts is None else float(self.experts) * self.billions

    @property
    def word(self) -> str:
        """The size as a model field: "70B", "1.5B", "8x7B"."""
        return f"{self.experts}x{self.billions:g}B" if self.experts is not None else f"{self.total_b:g}B"


def _size_number(digits: str) -> float:
    return float(_HUGE) if len(digits) > 30 else float(digits)


def size_of(match: re.Match[str]) -> Size:
    """The size a match of `SIZE_MOE` or `SIZE` reads."""
    if match.re is SIZE_MOE:
        return Size(_size_number(match["each"]), int(_size_number(match["experts"])))
    if match["m"]:
        return Size(_size_number(match["m"]) / 1000)
    return Size(_size_number(match["b"]))


def find_size(text: str) -> Size | None:
    """The first size in normalised text, a mixture of experts first: "mixtral 8x7b" → 8 × 7B."""
    match = SIZE_MOE.search(text) or SIZE.search(text)
    return size_of(match) if match else None


def read_size(field: str) -> Size | None:
    """A whole field that is a size: "13B", "1,5B", "405 млрд", "350m", "1.8T", "8х22b"; else None."""
    match = _SIZE_FIELD.match(field)
    if not match:
        return None
    unit = match["unit"].lower()
    if unit in ("m", "mn", "million", "м", "млн") or unit.startswith("миллион"):
        unit = "m"
    elif unit in ("t", "trillion", "трлн"):
        unit = "t"
    else:
        unit = "b"
    billions = float(match["number"].replace(",", ".")) * _UNIT_TO_BILLIONS[unit]
    return Size(billions, int(match["experts"]) if match["experts"] else None)


def is_size_word(word: str) -> bool:
    """Whether a word of a name is a size: "70b", "8x7b", "350m"."""
    return _SIZE_WORD.match(word) is not None


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


def _load_rows(path: Path, table: str, row_type: type[Row], raw: dict[str, Any] | None = None) -> list[Row]:
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


def normalize_name(name: str) -> str:
    """`Llama-3.1-8B`, `llama 3.1 8b` and `meta-llama/Llama-3.1-8B` compare on the last part."""
    tail = name.strip().lower().rsplit("/", 1)[-1]
    return "".join(ch for ch in tail if ch.isalnum() or ch == ".")


def strip_variant(name: str) -> tuple[str, list[str]]:
    """Drop variant tokens: `Llama-2-7b-chat-hf` -> (`Llama-2-7b`, [`chat`, `hf`]); also YYMM tags."""
    tail = name.strip().rsplit("/", 1)[-1]
    parts = re.split(r"([-_ ]+)", tail)
    kept: list[str] = []
    dropped: list[str] = []
    for part in parts:
        if part.lower() in VARIANT_TOKENS or (kept and _RELEASE_DATE.match(part)):
            dropped.append(part.lower())
        else:
            kept.append(part)
    return re.sub(r"[-_ ]+$", "", "".join(kept)), dropped


def has_variant_part(word: str) -> bool:
    """Whether `strip_variant` could drop a part of `word`: a variant token or a YYMM tag in it."""
    return any(
        part.lower() in VARIANT_TOKENS or _RELEASE_DATE.match(part) for part in re.split(r"[-_ ]+", word)
    )


def name_tokens(text: str) -> list[str]:
    """Words for fuzzy search: `Qwen2.5-7B-Instruct` -> [qwen, 2.5, 7b]; sizes such as 7b stay whole."""
    text = re.sub(r"[^\w.]+", " ", text.lower().replace("_", " "))
    text = re.sub(r"(?<=[^\W\d])(?<!\dx)(?=\d)", " ", text)  # llama3 -> llama 3, not 8x7b
    return [t.strip(".") for t in text.split() if t.strip(".") and t not in VARIANT_TOKENS]


def name_words(name: str) -> set[str]:
    """A name's words and their letter/digit runs: 'FLUX.1 [dev]' → {flux.1, flux, 1, dev}."""
    out: set[str] = set()
    for word in name_tokens(name):
        out.add(word)
        out.update(re.findall(r"[^\W\d_]+|\d+(?:\.\d+)?[a-z]?", word))
    return out


def _check_same_compute(gpu: GpuSpec, gpus: dict[str, GpuSpec], where: str) -> None:
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


class Catalog:
    """All three catalogues, cross-checked."""

    def __init__(
        self,
        gpus: Sequence[GpuSpec],
        models: Sequence[ModelSpec],
        offers: Sequence[RentalOffer],
        files: dict[str, str] | None = None,
        ranking: RankingPolicy | None = None,
    ) -> None:
        files = {"gpu": "gpus", "model": "models", "offer": "offers", **(files or {})}
        self.gpus: dict[str, GpuSpec] = {g.id: g for g in gpus}
        self.models: dict[str, ModelSpec] = {m.id: m for m in models}
        self.offers: list[RentalOffer] = list(offers)
        self.ranking: RankingPolicy = ranking or RankingPolicy()
        for index, offer in enumerate(self.offers, start=1):
            if offer.gpu not in self.gpus:
                raise CatalogError(
                    f"{files['offer']}: [[offer]] row {index} (id={offer.id!r}): gpu: "
                    f"unknown gpu {offer.gpu!r}; known: {', '.join(self.gpus)}",
                    field="gpu",
                )
        _check_one_main_currency(self.offers, files["offer"])
        for index, gpu in enumerate(gpus, start=1):
            _check_same_compute(gpu, self.gpus, f"{files['gpu']}: [[gpu]] row {index} (id={gpu.id!r})")
        self._model_keys = _index_names(
            ((m.id, [m.id, m.name, *m.aliases, *([m.hf_id] if m.hf_id else [])]) for m in models),
            files["model"],
            "model",
        )
        self._gpu_keys = _index_names(((g.id, [g.id, g.name, *g.aliases]) for g in gpus), files["gpu"], "gpu")
        _check_ranks(models, files["model"])
        self._model_tokens: dict[str, list[list[str]]] = {
            m.id: [name_tokens(n) for n in [m.name, m.id, *m.aliases, *([m.hf_id] if m.hf_id else [])]]
            for m in models
        }
        self._tokens_by_length: dict[int, list[str]] = {}
        for token in sorted({t for names in self._model_tokens.values() for ts in names for t in ts}):
            self._tokens_by_length.setdefault(len(token), []).append(token)
        self._close_cache: dict[str, dict[str, float]] = {}
        self.fuzzy_comparisons = 0  # difflib comparisons made so far (a hook to check work is bounded)

    # --- GPUs -------------------------------------------------------------------------------------
    def find_gpu(self, name: str) -> GpuSpec | None:
        """A GPU by id, name or alias (case- and separator-insensitive)."""
        gpu_id = self._gpu_keys.get(normalize_name(name))
        return self.gpus[gpu_id] if gpu_id else None

    def is_name_key(self, key: str) -> bool:
        """Whether `key`, a name as `normalize_name` writes it, is a model's or a GPU's id, name or
        alias: the cheap test a run of words must pass before `find_model` / `find_gpu` can name it."""
        return key in self._model_keys or key in self._gpu_keys

    def is_name_prefix(self, key: str) -> bool:
        """Whether some name key (`is_name_key`) starts with `key`: a run of words whose key is no such
        prefix names nothing however many words follow."""
        return key in self._name_prefixes

    @cached_property
    def _name_prefixes(self) -> frozenset[str]:
        return frozenset(k[:n] for k in (*self._model_keys, *self._gpu_keys) for n in range(len(k) + 1))

    def gpu(self, gpu_id: str) -> GpuSpec:
        found = self.find_gpu(gpu_id)
        if found is None:
            raise CatalogError(f"unknown gpu {gpu_id!r}; known: {', '.join(self.gpus)}", field="gpus")
        return found

    # --- Models -----------------------------------------------------------------------------------
    def find_model(self, name: str) -> tuple[ModelSpec, list[str]] | None:
        """Exact lookup by id / name / alias / HF id; variant tokens (`-Instruct`, `-chat-hf`,
        `-AWQ`...) are tolerated and returned, so a caller can say which variant it assumed."""
        model_id = self._model_keys.get(normalize_name(name))
        if model_id:
            return self.models[model_id], []
        base, dropped = strip_variant(name)
        model_id = self._model_keys.get(normalize_name(base)) if dropped else None
        return (self.models[model_id], dropped) if model_id else None

    def resolve_model(self, name: str) -> ModelSpec:
        """Catalogue id, alias or Hugging Face id (case- and separator-insensitive)."""
        found = self.find_model(name)
        if found is None:
            raise UnknownModelError(name, self.suggest(name))
        return found[0]

    def search(self, text: str, limit: int = 5) -> list[ModelSpec]:
        """Models whose names best match `text`, best first: `llama 70b` -> the 70B Llamas.

        Ranked by the share of query words found in a name (typos tolerated; sizes count double),
        then by how few other words the name has, then by name. Reads the first `MAX_SEARCH_WORDS`
        words of `text`; names sharing no token with what those words can match are not scored.
        """
        query = name_tokens(text)[:MAX_SEARCH_WORDS]
        exact = self.find_model(text)
        reach = self._reach(query)
        scored: list[tuple[float, int, str, ModelSpec]] = []
        for model in self.models.values():
            if exact and model.id == exact[0].id:
                scored.append((-2.0, 0, "", model))
                continue
            best: tuple[float, int] | None = None
            for tokens in self._model_tokens[model.id]:
                if reach.isdisjoint(tokens):
                    continue
                score = _match(query, tokens, self._close)
                if score and (best is None or score < best):
                    best = score
            if best and best[0] <= -0.5:
                scored.append((best[0], best[1], model.name, model))
        scored.sort(key=lambda s: (s[0], s[1], s[2]))
        return [s[3] for s in scored[:limit]]

    def _ratios(self, word: str) -> dict[str, float]:
        """The catalogue's name tokens at least `_FUZZY_TOKEN_RATIO` similar to `word` (difflib
        ratio), worked out once per word and only for tokens of a length that can reach the ratio
        (the others fail difflib's own `real_quick_ratio` bound)."""
        ratios = self._close_cache.get(word)
        if ratios is not None:
            return ratios
        ratios = {}
        matcher = difflib.SequenceMatcher()
        matcher.set_seq2(word)
        cutoff = _FUZZY_TOKEN_RATIO
        for length, candidates in self._tokens_by_length.items():
            if 2.0 * min(length, len(word)) / (length + len(word)) < cutoff:
                continue
            for token in candidates:
                matcher.set_seq1(token)
                self.fuzzy_comparisons += 1
                if matcher.real_quick_ratio() >= cutoff and matcher.quick_ratio() >= cutoff:
                    ratio = matcher.ratio()
                    if ratio >= cutoff:
                        ratios[token] = ratio
        if len(self._close_cache) >= _CLOSE_CACHE_SIZE:
            self._close_cache.clear()
        self._close_cache[word] = ratios
        return ratios

    def near_words(self, word: str, limit: int = 3) -> list[str]:
        """The catalogue's name words a typo of `word` may mean ("lamma" → "llama"), closest first:
        one letter off in five (`TYPO_RATIO`), looser than the search's own fuzzy match."""
        return difflib.get_close_matches(word, sorted(self._all_name_words), limit, TYPO_RATIO)

    def _close(self, word: str, tokens: list[str]) -> str | None:
        """The token of `tokens` most similar to `word`, as `difflib.get_close_matches(word, tokens, 1)`
        finds it."""
        ratios = self._ratios(word)
        if not ratios:
            return None
        close = [t for t in tokens if t in ratios]
        return max(close, key=lambda t: (ratios[t], t)) if close else None

    def _reach(self, query: list[str]) -> set[str]:
        """Every name token some word of `query` matches in `_match`: itself, its size ("7" ~ 7b),
        a token close to it; a name with none of these cannot match."""
        reach: set[str] = set()
        for word in query:
            reach.update((word, word + "b"))
            if len(word) >= 4 and not is_size_word(word):
                reach.update(self._ratios(word))
        return reach

    def model_words(self, model_id: str) -> frozenset[str]:
        """Every word naming the model: of its id, name, family, aliases and HF id (`name_words`)."""
        return self._name_words[model_id]

    def name_query(self, words: Iterable[str]) -> set[str]:
        """The catalogue's name words among `words`: each word, else its letter/digit runs."""
        known = self._all_name_words
        query: set[str] = set()
        for word in words:
            query.update([word] if word in known else (w for w in name_words(word) if w in known))
        return query

    def models_named(self, words: set[str]) -> list[str]:
        """Ids of the models named by all of `words` (none for no words), in catalogue order."""
        return [i for i, names in self._name_words.items() if words and words <= names]

    @cached_property
    def _name_words(self) -> dict[str, frozenset[str]]:
        return {
            m.id: frozenset().union(
                *(
                    name_words(n)
                    for n in [m.id, m.name, m.family, *m.aliases, *([m.hf_id] if m.hf_id else [])]
                )
            )
            for m in self.models.values()
        }

    @cached_property
    def _all_name_words(self) -> frozenset[str]:
        return frozenset().union(*self._name_words.values())

    def suggest(self, name: str, limit: int = 3) -> list[str]:
        """Close catalogue names for an error message."""
        found = [m.name for m in self.search(name, limit)]
        if found:
            return found
        close = difflib.get_close_matches(normalize_name(name), list(self._model_keys), n=limit, cutoff=0.6)
        return list(dict.fromkeys(self.models[self._model_keys[k]].name for k in close))

    def family_models(self, family: str, kind: ModelKind) -> list[ModelSpec]:
        """The models of `family` and `kind`, in catalogue order (indexed once: asked per estimate)."""
        return self._families.get((family, kind), [])

    @cached_property
    def _families(self) -> dict[tuple[str, ModelKind], list[ModelSpec]]:
        out: dict[tuple[str, ModelKind], list[ModelSpec]] = {}
        for m in self.models.values():
            out.setdefault((m.family, m.kind), []).append(m)
        return out

    def popular(self, kind: ModelKind) -> list[ModelSpec]:
        """Models offered as buttons, the most asked first (`popularity`)."""
        shown = [m for m in self.models.values() if m.popular and m.kind == kind]
        return sorted(shown, key=lambda m: (m.popularity is None, m.popularity or 0, m.name))


def _check_ranks(models: Sequence[ModelSpec], file: str) -> None:
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


def _index_names(rows: Iterable[tuple[str, list[str]]], file: str, table: str) -> dict[str, str]:
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


def _closest(word: str, tokens: list[str]) -> str | None:
    close = difflib.get_close_matches(word, tokens, n=1, cutoff=_FUZZY_TOKEN_RATIO)
    return close[0] if close else None


def _match(
    query: list[str], tokens: list[str], closest: Callable[[str, list[str]], str | None] = _closest
) -> tuple[float, int] | None:
    """(-weighted share of query words found, extra words in the name), or None if none match."""
    if not query or not tokens:
        return None
    words, sizes, named, total = _query_facts(tuple(query))
    matched = 0.0
    used: set[str] = set()
    for word, weight, as_size, fuzzy in words:
        if word in tokens:
            matched += weight
            used.add(word)
            continue
        if as_size is not None and as_size in tokens:  # "qwen 2.5 7" ~ 7b
            matched += _SIZE_TOKEN_WEIGHT * _FUZZY_TOKEN_WEIGHT
            used.add(as_size)
            continue
        if fuzzy:
            close = closest(word, tokens)
            if close is not None:
                matched += weight * _FUZZY_TOKEN_WEIGHT
                used.add(close)
    if not matched or (named and not used - sizes):
        return None  # a size alone does not make "qwen 7b" match Falcon 7B
    return -matched / total, len([t for t in tokens if t not in used])


@lru_cache(maxsize=64)
def _query_facts(
    query: tuple[str, ...],
) -> tuple[tuple[tuple[str, float, str | None, bool], ...], frozenset[str], bool, float]:
    """What `_match` needs of a query, worked out once per query rather than once per name scored:
    each word with its weight, its size token ("7" ~ "7b") and whether it is matched fuzzily; the
    words that are sizes; whether any word is not a size; the weights' sum."""
    sizes = frozenset(w for w in query if is_size_word(w))
    words = tuple(
        (
            w,
            _word_weight(w),
            w + "b" if w.replace(".", "", 1).isdigit() else None,
            len(w) >= 4 and w not in sizes,
        )
        for w in query
    )
    return words, sizes, any(w not in sizes for w in query), sum(word[1] for word in words)


def _word_weight(word: str) -> float:
    return _SIZE_TOKEN_WEIGHT if is_size_word(word) else 1.0


OFFERS_TABLES = ("offer", "ranking")


def _load_ranking(path: Path, raw: dict[str, Any]) -> RankingPolicy:
    """The `[ranking]` table of an offers file (``raw``: its TOML, whose `[[offer]]` rows are read
    first); the documented defaults when the table is absent."""
    unknown = [k for k in raw if k not in OFFERS_TABLES]
    if unknown:
        raise CatalogError(
            f"{path}: unknown key {unknown[0]!r}; an offers file holds [[offer]] rows and an optional "
            "[ranking] table",
            field=unknown[0],
        )
    table = raw.get("ranking", {})
    if not isinstance(table, dict):
        raise CatalogError(f"{path}: [ranking] must be a table, not an array of tables", field="ranking")
    try:
        return RankingPolicy.model_validate(table)
    except ValidationError as e:
        first = e.errors()[0]
        where = ".".join(str(p) for p in first["loc"]) or "(table)"
        got = f" (got {first['input']!r})" if first["loc"] else ""
        raise CatalogError(f"{path}: [ranking]: {where}: {first['msg']}{got}", field=where) from e


EMBEDDERS_FILE = "embedders.toml"


VISION_FILE = "vision.toml"  # the vision towers of vision-language models, by model id


def join_vision(models: list[ModelSpec], towers: Sequence[VisionTower], file: str) -> list[ModelSpec]:
    """Each model with its vision tower (`ModelSpec.vision`); a tower naming no model, a model named
    twice, or a diffusion or speech model is refused, naming the row."""
    by_id = {m.id: m for m in models}
    seen: set[str] = set()
    for index, tower in enumerate(towers, start=1):
        found = by_id.get(tower.model)
        where = f"{file}: [[vision]] row {index} (model={tower.model!r}): model"
        if found is None or found.kind is not ModelKind.LLM:
            raise CatalogError(f"{where}: no language model of that id in models.toml", field="model")
        if tower.model in seen:
            raise CatalogError(f"{where}: given twice", field="model")
        seen.add(tower.model)
        by_id[tower.model] = found.model_copy(update={"vision": tower})
    return list(by_id.values())


def load_catalog(offers_file: str | Path | None = None, data_dir: str | Path = DATA_DIR) -> Catalog:
    """Load the catalogues; `offers_file` replaces the shipped rental offers and their ranking
    policy (operator config)."""
    data_dir = Path(data_dir)
    gpus_path, models_path = data_dir / "gpus.toml", data_dir / "models.toml"
    embedders_path = data_dir / EMBEDDERS_FILE  # the RAG stack's models: the same rows, their own file
    offers_path = Path(offers_file) if offers_file else data_dir / "offers.toml"
    embedders = _load_rows(embedders_path, "model", ModelSpec) if embedders_path.exists() else []
    gpus = _load_rows(gpus_path, "gpu", GpuSpec)
    models = [*_load_rows(models_path, "model", ModelSpec), *embedders]
    vision_path = data_dir / VISION_FILE
    if vision_path.exists():
        models = join_vision(models, _load_rows(vision_path, "vision", VisionTower), str(vision_path))
    offers_raw = read_toml(offers_path)  # once: its offers and its ranking policy
    return Catalog(
        gpus=gpus,
        models=models,
        offers=_load_rows(offers_path, "offer", RentalOffer, offers_raw),
        files={"gpu": str(gpus_path), "model": str(models_path), "offer": str(offers_path)},
        ranking=_load_ranking(offers_path, offers_raw),
    )


@lru_cache(maxsize=1)
def default_catalog() -> Catalog:
    return load_catalog()


def _check_one_main_currency(offers: Sequence[RentalOffer], file: str) -> None:
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
