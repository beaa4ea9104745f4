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
from core.catalogue.catalog import default_catalog
from core.catalogue.models import ModelKind
from core.sizing.estimate import estimate

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
    # offload to RAM (issue 22): the sales cases on 1-4 RTX 4090 48 GB, experts and layers
    for model, count in (("qwen3-235b-a22b", 1), ("gpt-oss-120b", 1), ("glm-4.5-air", 1), ("glm-4.5", 2)):
        out.append(
            {
                "task": "inference",
                "model": model,
                "gpus": ["rtx4090-48gb"],
                "num_gpus": count,
                "offload": "auto",
            }
        )
    out.append(
        {
            "task": "inference",
            "model": "llama-3.1-70b",
            "precision": "q4_k_m",
            "gpus": ["rtx4090"],
            "offload": "layers",
        }
    )
    return out + FEATURE_REQUESTS + MULTIMODAL


# issue 22: speculative decoding and hybrid models, as the phrases users type size them
FEATURE_REQUESTS: list[dict[str, Any]] = [
    {
        "task": "inference",
        "model": "llama-3.1-70b",
        "draft_model": "llama-3.2-1b",
        "gpus": ["h100"],
        "num_gpus": 2,
    },
    {"task": "inference", "model": "llama-3.1-8b", "speculative": "eagle3"},
    {"task": "inference", "model": "deepseek-v3", "speculative": "mtp", "gpus": ["h200"], "num_gpus": 8},
    {"task": "inference", "model": "qwen3-next-80b-a3b", "context_length": 131072, "gpus": ["h100"]},
    {"task": "inference", "model": "jamba-1.5-mini", "context_length": 262144},
    {"task": "inference", "model": "qwen3-next-80b-a3b", "speculative": "mtp", "concurrency": 8},
]


# Vision-language and speech answers (issue 22 items 3, 4)
MULTIMODAL: list[dict[str, Any]] = [
    {"task": "inference", "model": "qwen2.5-vl-7b", "images_per_prompt": 4, "gpus": ["rtx4090"]},
    {"task": "inference", "model": "llama-4-scout", "images_per_prompt": 1, "gpus": ["h100-sxm"]},
    {"task": "inference", "model": "gemma-3-27b", "engine": "vllm"},
    {"task": "inference", "model": "whisper-large-v3"},
    {"task": "inference", "model": "whisper-large-v3", "precision": "int8", "gpus": ["t4"]},
    {"task": "inference", "model": "whisper-large-v3-turbo", "batch_size": 8},
]


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
        features = [entry for entry in sizes if entry[2] in FEATURE_REQUESTS]
        print(f"  speculative decoding and hybrid models (limit {LIMIT}):")
        for n, lines, request in features:
            print(f"    {n} units, {lines} lines: {request}")
        loads = []
        for request in load_requests():
            text = visible(render_result(estimate(request), tr, lang))
            loads.append((utf16_length(text), len(text.splitlines()), request))
        report(f"{lang} load answers (10 RPS under 2 s)", loads)
        report(f"{lang} launch commands", launch_messages(lang))
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
