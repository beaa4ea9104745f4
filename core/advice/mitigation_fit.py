"""One mitigation sized and checked: `Found` holds the request's mitigations as the rules of
`core.advice.mitigations` find them. Each is a request variant sized in full through the same formulas
(`Sizer`), checked against the target GPUs at the requested card count and, where it does not fit
there, on the fewest cards (of `CARD_COUNTS`) on which it would. The smallest fitting card is the one
a scan from the smallest would find.
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Callable
from typing import Any

from core.catalogue.catalog import Catalog
from core.catalogue.gpus import GpuSpec
from core.catalogue.models import ModelKind, ModelSpec
from core.contract import Request
from core.formulas.vllm import budget_bytes

from .sizing import CARD_COUNTS, Sizer, fits_within


class Found:
    """The request's mitigations as the rules find them (`add`), each sized and checked against the
    target GPUs; what the rules read of the request, said once."""

    def __init__(
        self,
        req: Request,
        given: Request,
        spec: ModelSpec,
        catalog: Catalog,
        sizer: Sizer,
        total: int,
        targets: list[GpuSpec],
    ) -> None:
        self.req, self.given, self.spec, self.catalog = req, given, spec, catalog
        self.sizer, self.total, self.targets = sizer, total, targets
        self.count = req.num_gpus
        self.out: list[dict[str, Any]] = []  # the fields of each `Mitigation`, validated together
        self.diffusion = spec.kind in (ModelKind.IMAGE, ModelKind.VIDEO)
        # faster-whisper / transformers Whisper: int8 at the least; Bark, XTTS, F5-TTS: fp16 at the
        # least (core.sizing.defaults_tts)
        self.speech, self.tts = spec.kind is ModelKind.SPEECH, spec.kind is ModelKind.TTS
        self.audio = self.speech or self.tts
        # diffusion pipelines run on one GPU, and so does Whisper (faster-whisper's device_index list
        # runs whole replicas): more cards do not help; TTS runs on one card
        self.splits_model = not self.diffusion and not self.audio
        self._by_size = sorted(targets, key=lambda g: g.usable_bytes)  # stable: ties stay in `targets` order
        self._budgets: dict[float, list[tuple[int, GpuSpec]]] = {}  # per share of the card: asked ~10 times

    def smallest_fitting(self, needed: int, changes: dict[str, Any] | None = None) -> GpuSpec | None:
        """The smallest target card `needed` fits, against the share of the card the variant may use
        (vLLM: gpu_memory_utilization)."""
        share = self.sizer.fraction(changes)
        budgets = self._budgets.get(share)
        if budgets is None:
            budgets = self._budgets[share] = [(budget_bytes(g.usable_bytes, share), g) for g in self._by_size]
        bands = self.sizer.bands
        # the budgets grow down the list and a need that fits one fits every larger one: the first
        # that fits by bisection, as a scan would find it
        first = bisect_left(budgets, True, key=lambda b: fits_within(needed, b[0], bands))
        return budgets[first][1] if first < len(budgets) else None

    def fits(self, needed: int) -> bool:
        return self.smallest_fitting(needed) is not None

    def add(
        self, action: str, changes: dict[str, Any], n: int | None = None, **params: str | int | float
    ) -> None:
        """Size the variant; if it does not fit on `n` cards (default: the requested count), find the
        fewest cards (up to 8) on which it would: `fits` stays about the requested count,
        `fits_on`/`fits_count` say where."""
        sizer, total = self.sizer, self.total
        n = self.count if n is None else n
        variant_total = sizer.total(**changes)
        if variant_total >= total and action != "more_gpus":
            return
        gpu, fit_n = self.smallest_fitting(variant_total, changes), n
        if gpu is None and self.splits_model and action != "more_gpus":
            for m in CARD_COUNTS:
                if m > n and sizer.splits(m):
                    gpu = self.smallest_fitting(sizer.total(**{**sizer.count_changes(m), **changes}), changes)
                    if gpu is not None:
                        fit_n = m
                        break
        self.out.append(
            {
                "action": action,
                "saves_bytes": total - variant_total,
                "total_bytes": variant_total,
                "fits": gpu is not None and fit_n == n,
                "fits_on": f"{fit_n}x {gpu.id}" if gpu else None,
                "fits_gpu": gpu.id if gpu else None,
                "fits_gpu_name": gpu.name if gpu else None,
                "fits_count": fit_n if gpu else None,
                "params": params,
            }
        )

    def largest_fitting(self, values: list[int], make: Callable[[int], dict[str, Any]]) -> int | None:
        """The largest value (e.g. context length) whose variant fits a target; else the smallest tried."""
        for v in values:
            if self.fits(self.sizer.total(**make(v))):
                return v
        return values[-1] if values else None


def halvings(value: int, floor: int) -> list[int]:
    out = []
    v = value // 2
    while v >= floor:
        out.append(v)
        v //= 2
    return out
