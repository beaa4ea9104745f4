"""Per-user throttling: a token bucket per sender, so a flood from one user costs a bounded amount of
work and gets one polite notice, while everybody else is served as usual.

Each sender has a bucket for messages and one for button presses (`Limits`): at most ``burst`` tokens,
``rate`` back a second. A request that finds a token is handled in full; the first that finds none gets
the notice, the following are dropped without a word until one passes again. A throttled press is
still answered (its spinner stops), with the notice as its toast. The buckets live in this process's
memory: with N webhook replicas a user may get up to N × the burst (this bounds the work per replica; a
global limit would need a shared store on the update path), and a restart forgets them. Memory is
bounded: a refilled bucket (idle ``burst / rate`` s) is dropped, as a dropped bucket is a full one, and
at most `MAX_TRACKED` are kept, the least recently seen dropped first.
"""

from __future__ import annotations

import time
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal

MESSAGE_BURST = 8
"""Messages handled back to back: a question and a few quick follow-ups (`а в int4?`, `а на 3090?`).
A message is the expensive request (parsing, an estimate, a new message sent)."""
MESSAGE_RATE_PER_S = 1.0
"""Messages a second once the burst is spent: faster than anyone types, and Telegram's own limit of
about one message a second per chat (the bot could not send the answers faster anyway)."""
BUTTON_BURST = 20
"""Button presses handled back to back: walking the whole wizard back and forth (each step's button,
Back, the button again) without waiting. A press edits one message: cheap."""
BUTTON_RATE_PER_S = 3.0
"""Button presses a second once that burst is spent: a fast thumb."""
MAX_TRACKED = 100_000
"""Buckets kept at most (~0.3 KB each), however many senders the last seconds brought: the least
recently seen are forgotten first."""
THROTTLE_KEY = "throttle"
"""Handler data key under which a Dispatcher may pass its own `Throttle` (other limits, a test clock):
``dp[THROTTLE_KEY] = Throttle(...)``; otherwise the router's default one is used."""

Verdict = Literal["allow", "notice", "drop"]
Kind = Literal["message", "button"]


@dataclass(frozen=True)
class Limits:
    burst: int
    rate: float  # tokens back per second

    def __post_init__(self) -> None:
        if self.burst < 1 or not self.rate > 0:
            raise ValueError("a burst of at least 1 and a positive rate")


@dataclass(slots=True)
class _Bucket:
    tokens: float
    at: float  # when `tokens` was last brought up to date
    noticed: bool = False  # the notice was given since the last request that passed


class Throttle:
    """Token buckets by sender id and kind of request. ``clock``: monotonic seconds (injectable, so
    tests drive time instead of sleeping)."""

    def __init__(
        self,
        *,
        messages: Limits = Limits(MESSAGE_BURST, MESSAGE_RATE_PER_S),
        buttons: Limits = Limits(BUTTON_BURST, BUTTON_RATE_PER_S),
        max_tracked: int = MAX_TRACKED,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        if max_tracked < 1:
            raise ValueError("max_tracked must be at least 1")
        self.limits: dict[Kind, Limits] = {"message": messages, "button": buttons}
        self.max_tracked = max_tracked
        self.clock = clock
        self._buckets: OrderedDict[tuple[Kind, int], _Bucket] = OrderedDict()  # least recently seen first

    @property
    def messages(self) -> Limits:
        return self.limits["message"]

    @property
    def buttons(self) -> Limits:
        return self.limits["button"]

    def __len__(self) -> int:
        return len(self._buckets)

    def check(self, sender: int, kind: Kind = "message") -> Verdict:
        """Take a token for one request of ``sender``: "allow" (handle it), "notice" (the first one
        refused since a request last passed: tell the user), "drop" (refused again: say nothing)."""
        limits = self.limits[kind]
        now = self.clock()
        key = (kind, sender)
        self._forget_full(now)
        bucket = self._buckets.get(key)
        if bucket is None:
            if len(self._buckets) >= self.max_tracked:
                self._buckets.popitem(last=False)
            bucket = self._buckets[key] = _Bucket(tokens=float(limits.burst), at=now)
        else:
            self._buckets.move_to_end(key)  # the most recently seen, last
            elapsed = max(now - bucket.at, 0.0)  # a clock that goes back refills nothing
            bucket.tokens = min(float(limits.burst), bucket.tokens + elapsed * limits.rate)
            bucket.at = max(bucket.at, now)
        if bucket.tokens >= 1.0:
            bucket.tokens -= 1.0
            bucket.noticed = False
            return "allow"
        if bucket.noticed:
            return "drop"
        bucket.noticed = True
        return "notice"

    def _forget_full(self, now: float) -> None:
        """Drop the least recently seen buckets that have refilled since (a full bucket is what a
        missing one stands for); stops at the first that may not have, so each bucket is looked at
        about once."""
        buckets = self._buckets
        while buckets:
            key = next(iter(buckets))
            limits = self.limits[key[0]]
            if now - buckets[key].at < limits.burst / limits.rate:
                return
            buckets.popitem(last=False)
