"""Length of the bot's result message over the catalogue's popular models (issue: under 1,500
characters for a typical request, the decision in the first two lines).

    python bench/message_length.py

For each popular model of each kind, a few typical requests (the model as it ships; int4 with 32K
context and 4 users; LoRA / QLoRA fine-tuning; a named card) are sized and laid out exactly as the
bot sends them (`bot.presenter.render_result`, Russian and English); prints the length distribution
in Telegram's UTF-16 units of the visible text (after HTML parsing) and the worst cases.
"""

from __future__ import annotations

import re
import statistics
import sys
from html import unescape
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from fluent.runtime import FluentBundle, FluentResource

from bot.presenter import render_result, utf16_length
from core.catalog import default_catalog
from core.estimate import estimate
from core.specs import ModelKind

LIMIT = 1500
LOCALES = Path(__file__).resolve().parents[1] / "bot" / "locales"


def translator(lang: str) -> Any:
    bundle = FluentBundle([lang], use_isolating=False)
    for path in sorted((LOCALES / lang).glob("*.ftl")):
        bundle.add_resource(FluentResource(path.read_text(encoding="utf-8")))

    def tr(key: str, **args: Any) -> str:
        text, _ = bundle.format_pattern(bundle.get_message(key).value, args)
        return str(text)

    return tr


def requests() -> list[dict[str, Any]]:
    catalog = default_catalog()
    out: list[dict[str, Any]] = []
    for spec in catalog.popular(ModelKind.LLM):
        out += [
            {"task": "inference", "model": spec.id},
            {
                "task": "inference",
                "model": spec.id,
                "precision": "int4",
                "context_length": 32768,
                "concurrency": 4,
            },
            {"task": "inference", "model": spec.id, "gpus": ["rtx3090"]},
            {"task": "training", "model": spec.id, "method": "lora"},
            {"task": "training", "model": spec.id, "method": "qlora"},
        ]
    for kind in (ModelKind.IMAGE, ModelKind.VIDEO):
        task = "image_generation" if kind is ModelKind.IMAGE else "video_generation"
        out += [{"task": task, "model": spec.id} for spec in catalog.popular(kind)]
    return out


def visible(html: str) -> str:
    return unescape(re.sub(r"<[^>]+>", "", html))


def main() -> None:
    for lang in ("ru", "en"):
        tr = translator(lang)
        sizes = []
        for request in requests():
            text = visible(render_result(estimate(request), tr, lang))
            sizes.append((utf16_length(text), len(text.splitlines()), request))
        lengths = sorted(n for n, _, _ in sizes)
        over = [s for s in sizes if s[0] > LIMIT]
        print(
            f"{lang}: {len(sizes)} answers, length median {statistics.median(lengths):.0f}, "
            f"p90 {lengths[int(0.9 * (len(lengths) - 1))]}, max {lengths[-1]} UTF-16 units; "
            f"lines median {statistics.median(n for _, n, _ in sizes):.0f}; over {LIMIT}: {len(over)}"
        )
        for n, lines, request in sorted(over, key=lambda s: -s[0])[:3]:
            print(f"  {n} units, {lines} lines: {request}")
        log_lengths(lang, tr)


def log_lengths(lang: str, tr: Any) -> None:
    """The answers to the pasted logs of the tests (core.logs, real excerpts), as the bot sends them
    (the answer, then the store offer; bot.handlers.pasted_logs)."""
    from core.logs.words import answer_log
    from tests.core.log_excerpts import ALL

    catalog = default_catalog()
    sizes = []
    for name, excerpt in ALL.items():
        body = answer_log(excerpt.text, catalog, lang).text + "\n\n" + visible(tr("log-store-offer"))
        sizes.append((utf16_length(body), name))
    lengths = sorted(n for n, _ in sizes)
    worst = max(sizes)
    over = sum(n > LIMIT for n, _ in sizes)
    print(
        f"{lang}: {len(sizes)} log answers, length median {statistics.median(lengths):.0f}, "
        f"max {worst[0]} ({worst[1]}) UTF-16 units; over {LIMIT}: {over}"
    )


if __name__ == "__main__":
    main()
