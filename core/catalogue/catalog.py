"""The catalogues of `core/data/` (GPUs, models, rental offers) as one `Catalog`, loaded and queried.

Every row is validated by pydantic at load (`core.catalogue.load`); a bad row raises `CatalogError`
naming the file, the row index and its id, and the field. Cross-checks: unique ids, every offer
names a known GPU, no model name/alias (after normalisation) points at two different models. The
offers file also holds the recommender's ranking policy, an optional `[ranking]` table
(`core.catalogue.offers.RankingPolicy`).

Name matching lives here, for the resolver and the free-text parser alike: exact lookup
(`find_model`, `find_gpu`), models named by all of a text's name words (`models_named`), ranked
fuzzy search (`search`, `suggest`); the words of names in `core.catalogue.names`, sizes
("7b", "8x7b", "405 млрд") in `core.catalogue.sizes`.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable, Sequence
from functools import cached_property, lru_cache
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from core.catalogue.gpus import GpuSpec
from core.catalogue.load import (
    DATA_DIR,
    check_one_main_currency,
    check_ranks,
    check_same_compute,
    index_names,
    load_rows,
    read_toml,
)
from core.catalogue.models import ModelKind, ModelSpec, VisionTower
from core.catalogue.names import (
    FUZZY_TOKEN_RATIO,
    MAX_SEARCH_WORDS,
    TYPO_RATIO,
    match_tokens,
    name_tokens,
    name_words,
    normalize_name,
    strip_variant,
)
from core.catalogue.offers import RankingPolicy, RentalOffer
from core.catalogue.sizes import is_size_word
from core.errors import CatalogError, UnknownModelError

_CLOSE_CACHE_SIZE = 4096  # words whose fuzzy matches a catalogue remembers


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
        check_one_main_currency(self.offers, files["offer"])
        for index, gpu in enumerate(gpus, start=1):
            check_same_compute(gpu, self.gpus, f"{files['gpu']}: [[gpu]] row {index} (id={gpu.id!r})")
        self._model_keys = index_names(
            ((m.id, [m.id, m.name, *m.aliases, *([m.hf_id] if m.hf_id else [])]) for m in models),
            files["model"],
            "model",
        )
        self._gpu_keys = index_names(((g.id, [g.id, g.name, *g.aliases]) for g in gpus), files["gpu"], "gpu")
        check_ranks(models, files["model"])
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
                score = match_tokens(query, tokens, self._close)
                if score and (best is None or score < best):
                    best = score
            if best and best[0] <= -0.5:
                scored.append((best[0], best[1], model.name, model))
        scored.sort(key=lambda s: (s[0], s[1], s[2]))
        return [s[3] for s in scored[:limit]]

    def _ratios(self, word: str) -> dict[str, float]:
        """The catalogue's name tokens at least `FUZZY_TOKEN_RATIO` similar to `word` (difflib
        ratio), worked out once per word and only for tokens of a length that can reach the ratio
        (the others fail difflib's own `real_quick_ratio` bound)."""
        ratios = self._close_cache.get(word)
        if ratios is not None:
            return ratios
        ratios = {}
        matcher = difflib.SequenceMatcher()
        matcher.set_seq2(word)
        cutoff = FUZZY_TOKEN_RATIO
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
        """Every name token some word of `query` matches in `match_tokens`: itself, its size ("7" ~ 7b),
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
    embedders = load_rows(embedders_path, "model", ModelSpec) if embedders_path.exists() else []
    gpus = load_rows(gpus_path, "gpu", GpuSpec)
    models = [*load_rows(models_path, "model", ModelSpec), *embedders]
    vision_path = data_dir / VISION_FILE
    if vision_path.exists():
        models = join_vision(models, load_rows(vision_path, "vision", VisionTower), str(vision_path))
    offers_raw = read_toml(offers_path)  # once: its offers and its ranking policy
    return Catalog(
        gpus=gpus,
        models=models,
        offers=load_rows(offers_path, "offer", RentalOffer, offers_raw),
        files={"gpu": str(gpus_path), "model": str(models_path), "offer": str(offers_path)},
        ranking=_load_ranking(offers_path, offers_raw),
    )


@lru_cache(maxsize=1)
def default_catalog() -> Catalog:
    return load_catalog()
