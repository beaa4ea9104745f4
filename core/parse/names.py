"""Catalogue names in the text: models and GPUs, with the card count and memory a GPU is named with.

A GPU is looked up by the catalogue's own names and aliases (`Catalog.find_gpu`), then its memory
may follow in any of the ways people type it — "4090 48", "4090 48гб", "4090 48 GB", "4090 на 48":
the card is then the catalogue's variant with that memory ("4090 48gb"), if it has one. A count may
come before it ("2× 4090", "2x4090", "две 4090", "x4 h100") or after it ("h100 x4").
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from core.catalogue.catalog import Catalog
from core.catalogue.gpus import GpuSpec
from core.catalogue.models import ModelSpec
from core.catalogue.names import has_variant_part, normalize_name
from core.parse.grammar import _CONTEXT, _SEQ_LEN
from core.parse.text import Fields, _Text
from core.parse.vocabulary import Vocabulary, vocabulary

MAX_WINDOW = 6  # longest model/GPU name, in words, looked for in the text
MAX_CARDS = 64  # a count written next to a card name ("16x h100"); larger is something else

_TOKEN = re.compile(r"[^\s,;!?()\"':]+")
_TIMES = r"[x×*х]"
# "2x4090": a count glued to a card name (NFKC and the normaliser turn "2×4090" into this)
_GLUED_COUNT = re.compile(r"(?<![\w.])(\d{1,2})" + _TIMES + r"(?=[a-zа-я0-9])")
_COUNT_BEFORE = re.compile(
    r"(?:(?<![\w.])(?P<n>\d{1,2})\s*" + _TIMES + r"?|(?<![\w.])" + _TIMES + r"\s*(?P<m>\d{1,2}))\s*$"
)
# "bs 2 h100": the number belongs to the keyword before it, not to the card
_KEYWORD_BEFORE = re.compile(
    r"(?<![\w.])(?:bs|mbs|batch\w*|батч\w*|rank|ранг\w*|r|seq\w*|ctx|контекст\w*|context|concurrency|"
    r"users|пользовател\w*|frames?|кадр\w*|images?|steps?|шаг\w*)\s*[=:]?\s*$"
)
_COUNT_AFTER = re.compile(r"\s*" + _TIMES + r"\s*(\d{1,2})(?![\w.])")
# the memory after a card name: "48", "48gb", "48 гб", "48g", "на 48", "по 48" (each)
_MEMORY_AFTER = re.compile(
    r"\s*(?:на\s+|по\s+|with\s+|с\s+)?(?P<gb>\d{2,3})\s*"
    r"(?P<unit>gb|gib|g|гб|гиб|г|гиг(?:абайт)?\w*|gigabytes?)?(?![\w.])"
)
_BARE_DIGITS = re.compile(r"\d+")
_NEAR = 64  # a count or keyword before a card name is this close to it (spaces aside)


@dataclass
class Names:
    """Catalogue models and GPUs named word for word in the text, each GPU with its own count."""

    models: list[str] = field(default_factory=list)
    gpus: list[str] = field(default_factory=list)
    configs: list[tuple[str, int | None]] = field(default_factory=list)  # each card as named, its count
    bare: list[str] = field(default_factory=list)  # cards named without their memory ("4090", not "4090 48")


def take_names(text: _Text, catalog: Catalog, f: Fields) -> Names:
    """The longest runs of words that name a model or GPU exactly, taken out of the text."""
    found = Names()
    _unglue_counts(text, catalog)
    _singular_cards(text, catalog)
    tokens = [(m.start(), m.end()) for m in _TOKEN.finditer(text.rest)]
    may_name = _Windows(text.rest, tokens, catalog)
    looked_up: dict[str, tuple[ModelSpec, list[str]] | None] = {}  # a long text repeats its names
    i = 0
    while i < len(tokens):
        for j in may_name.ends(i, min(len(tokens), i + MAX_WINDOW)):
            start, end = tokens[i][0], tokens[j - 1][1]
            words = text.rest[start:end]
            if words not in looked_up:
                looked_up[words] = catalog.find_model(words)
            model = looked_up[words]
            gpu = catalog.find_gpu(words) if model is None and _not_a_count(text.rest, words, start) else None
            if model is not None and not model[1]:  # exact: "...-awq" leaves its precision to be read
                found.models.extend([model[0].id] if model[0].id not in found.models else [])
            elif gpu is not None:
                named_end = end
                gpu, end = _with_memory(text.rest, catalog, gpu, words, end)
                if end == named_end and not _says_memory(words) and gpu.id not in found.bare:
                    found.bare.append(gpu.id)
                start, end = _take_card(text.rest, found, gpu, start, end)
            else:
                continue
            text.blank(start, end)
            while j < len(tokens) and tokens[j][0] < end:  # the memory and count read with the card
                j += 1
            i = j - 1
            break
        i += 1
    if found.gpus:
        f["gpus"] = found.gpus
        counted = [count for _, count in found.configs if count is not None]
        if counted:
            f.setdefault("num_gpus", counted[0])
    return found


_PLURAL = re.compile(r"(?<![\w.])([a-z]*\d+)s(?![\w.])")  # "two 4090s", "8 h100s"


def _singular_cards(text: _Text, catalog: Catalog) -> None:
    """ "4090s" → "4090" where the word without its English plural's "s" names a card."""
    for match in reversed(list(_PLURAL.finditer(text.rest))):
        if catalog.find_gpu(match.group(1)) is not None:
            text.rest = text.rest[: match.end(1)] + text.rest[match.end() :]


class _Windows:
    """Which runs of words `tokens[i:j]` may name a model or GPU, tested without building their text.

    A run of words normalises (`normalize_name`) to its words' keys joined, from the last word holding
    a "/" on (the name after an org's), so it names something only if that key is a catalogue key
    (`Catalog.is_name_key`) or a word of it holds a part `strip_variant` drops; runs failing both are
    skipped, the rest looked up in full. This keeps the word-by-word scan linear: a 4,096-character
    message is ~600 words, up to `MAX_WINDOW` runs each, built up one word at a time.
    """

    def __init__(self, rest: str, tokens: list[tuple[int, int]], catalog: Catalog) -> None:
        words = [rest[start:end] for start, end in tokens]
        facts = {w: _word_facts(w) for w in set(words)}  # a long text repeats its words
        self.keys = [facts[w][0] for w in words]  # of a word with "/", its part after the last
        self.slash = [facts[w][1] for w in words]
        self.variant = [facts[w][2] for w in words]
        # the index of the next word from each on that holds a "/" or a variant (len(words): none)
        self.marked = [len(words)] * (len(words) + 1)
        for k in range(len(words) - 1, -1, -1):
            self.marked[k] = k if self.slash[k] or self.variant[k] else self.marked[k + 1]
        self.catalog = catalog

    def ends(self, i: int, stop: int) -> list[int]:
        """The ends `j` (longest first, at most `stop`) of the runs from word `i` that may name."""
        out: list[int] = []
        key = ""
        variant = False
        for j in range(i, stop):
            if self.slash[j]:  # normalize_name keeps what follows the last "/"
                key, variant = "", False
            key += self.keys[j]
            variant = variant or self.variant[j]
            if variant or self.catalog.is_name_key(key):
                out.append(j + 1)
            elif self.marked[j + 1] >= stop and not self.catalog.is_name_prefix(key):
                break  # longer runs only lengthen a key no name starts with
        out.reverse()
        return out


def _word_facts(word: str) -> tuple[str, bool, bool]:
    """A word's name key, whether it holds a "/", whether its part after the last "/" holds a variant."""
    return normalize_name(word), "/" in word, has_variant_part(word.rsplit("/", 1)[-1])


def _unglue_counts(text: _Text, catalog: Catalog) -> None:
    """ "2x4090" → "2x 4090" when what follows the count names a card (not "64x2048", a resolution)."""
    for match in reversed(list(_GLUED_COUNT.finditer(text.rest))):
        rest = _TOKEN.match(text.rest, match.end())
        if rest and catalog.find_gpu(rest.group(0)) is not None:
            text.rest = text.rest[: match.end()] + " " + text.rest[match.end() :]


def _with_memory(rest: str, catalog: Catalog, gpu: GpuSpec, words: str, end: int) -> tuple[GpuSpec, int]:
    """The card with the memory typed after its name: "4090 48 гб" is the catalogue's "4090 48gb"."""
    match = _MEMORY_AFTER.match(rest, end)
    if not match:
        return gpu, end
    gb = int(match.group("gb"))
    if not match.group("unit") and _counted_at(rest, match.start("gb")):  # "4090 48 users"
        return gpu, end
    variant = catalog.find_gpu(f"{words} {gb}gb")
    if variant is not None:
        return variant, match.end()
    if gb == round(gpu.marketing_memory_gb):  # "h100 80gb": the card's own memory, said again
        return gpu, match.end()
    return gpu, end


_MEMORY_WORD = re.compile(r"\d{2,3}(?:gb|gib|g|гб|гиб|г)?")


def _says_memory(words: str) -> bool:
    """Whether a card's name as typed holds its memory ("rtx 4090 24gb"), not only its model ("4090")."""
    return any(_MEMORY_WORD.fullmatch(word) for word in words.lower().split())


def _take_card(rest: str, found: Names, gpu: GpuSpec, start: int, end: int) -> tuple[int, int]:
    """Record the card and a count written next to it; the span it all covers."""
    if gpu.id not in found.gpus:
        found.gpus.append(gpu.id)
    before = _ends_with(_COUNT_BEFORE, rest, start)
    after = _COUNT_AFTER.match(rest, end)
    count = None
    if before and _ends_with(_KEYWORD_BEFORE, rest, before.start()):
        before = None
    if before:
        count, start = int(before.group("n") or before.group("m")), before.start()
    elif after:
        count, end = int(after.group(1)), after.end()
    found.configs.append((gpu.id, count if count is not None and 0 < count <= MAX_CARDS else None))
    return start, end


def _ends_with(pattern: re.Pattern[str], rest: str, end: int) -> re.Match[str] | None:
    """`pattern` (ending in `\\s*$`) searched in `rest[:end]`, looking only at the `_NEAR` characters
    before its trailing spaces: a long text naming many cards is not scanned once per card."""
    stripped = len(rest[:end].rstrip())
    return pattern.search(rest, max(0, stripped - _NEAR), stripped)


def _not_a_count(rest: str, words: str, start: int) -> bool:
    """A name ending in a bare number ("4090 48") is no card when the number counts something."""
    last = words.split()[-1]
    if not _BARE_DIGITS.fullmatch(last):
        return True
    return not _counted_at(rest, start + len(words) - len(last))


def _counted_at(rest: str, position: int) -> bool:
    """Whether the number at `position` is a count or a context: "48 users", "48 кадров", "48 tokens"."""
    return any(p.match(rest, position) for p in _counting_patterns(vocabulary()))


_COUNTING: dict[int, tuple[Vocabulary, tuple[re.Pattern[str], ...]]] = {}


def _counting_patterns(words: Vocabulary) -> tuple[re.Pattern[str], ...]:
    """The patterns of counted things and contexts, gathered once per vocabulary."""
    cached = _COUNTING.get(id(words))
    if cached is None or cached[0] is not words:
        cached = (words, (*(p for _, group in words.counted for p in group), *_CONTEXT, *_SEQ_LEN))
        _COUNTING.clear()
        _COUNTING[id(words)] = cached
    return cached[1]
