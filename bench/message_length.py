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


def load_requests() -> list[dict[str, Any]]:
    """Load questions ("10 RPS under 2 s") over the popular LLMs: the answer leads with the servers."""
    catalog = default_catalog()
    return [
        {"task": "inference", "model": spec.id, "requests_per_second": 10, "ttft_target_s": 2}
        for spec in catalog.popular(ModelKind.LLM)
    ]


def launch_messages(lang: str) -> list[tuple[int, int, dict[str, Any]]]:
    """The "⌨️ Launch command" message of every LLM request (`bot.launch_view.render_launch`)."""
    from bot.launch_view import render_launch

    out = []
    for request in [r for r in requests() if r["task"] in ("inference", "training")]:
        html = render_launch(estimate(request), lang)
        if html is not None:
            text = visible(html)
            out.append((utf16_length(text), len(text.splitlines()), request))
    return out


def report(name: str, sizes: list[tuple[int, int, dict[str, Any]]]) -> None:
    lengths = sorted(n for n, _, _ in sizes)
    over = [s for s in sizes if s[0] > LIMIT]
    print(
        f"{name}: {len(sizes)} messages, length median {statistics.median(lengths):.0f}, "
        f"p90 {lengths[int(0.9 * (len(lengths) - 1))]}, max {lengths[-1]} UTF-16 units; "
        f"over {LIMIT}: {len(over)}"
    )
    for n, lines, request in sorted(over, key=lambda s: -s[0])[:3]:
        print(f"  {n} units, {lines} lines: {request}")


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
        loads = []
        for request in load_requests():
            text = visible(render_result(estimate(request), tr, lang))
            loads.append((utf16_length(text), len(text.splitlines()), request))
        report(f"{lang} load answers (10 RPS under 2 s)", loads)
        report(f"{lang} launch commands", launch_messages(lang))


if __name__ == "__main__":
    main()
