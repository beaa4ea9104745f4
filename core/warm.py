"""What a server's first answers would build, built at its start: every language's texts, the
parser's patterns, one estimate and its answer in each language (each is cached for the process).
The bot calls `warm_up` before it takes updates, so its first user after a deploy is answered as fast
as the next one (the first question took ~0.4 s, the next ~25 ms)."""

from __future__ import annotations

from core.catalogue.catalog import Catalog
from core.inverse.solve import run
from core.language.answer import build_answer
from core.language.words import load_bundles
from core.parse import understand

# A common question per language, as users type them: it goes through the parser, the sizing and
# the answer's texts. A question that stops parsing would raise here, at start, where it is seen.
WARM_QUESTIONS = (("ru", "llama 3.1 8b int4 на 4090"), ("en", "llama 3.1 8b int4 on a 4090"))


def warm_up(catalog: Catalog | None = None) -> None:
    load_bundles()
    for lang, question in WARM_QUESTIONS:
        understood = understand(question, catalog)
        build_answer(run(understood.request, catalog), lang, understood.notes)
