"""Byte units. Everything inside the core is bytes; GB (10^9) and GiB (2^30) appear only in text.

Vendors print "80 GB" on the box while drivers and PyTorch report GiB (2^30): the two differ by
7.4%, which is exactly the kind of gap that decides whether a model fits, so text shows both.
"""

from __future__ import annotations

KB = 10**3
MB = 10**6
GB = 10**9
KiB = 2**10
MiB = 2**20
GiB = 2**30


def to_gb(n_bytes: float) -> float:
    return n_bytes / GB


def to_gib(n_bytes: float) -> float:
    return n_bytes / GiB


def format_bytes(n_bytes: float, digits: int = 1) -> str:
    """`17.2 GB (16.0 GiB)`: decimal first, binary in brackets, never a bare "GB"."""
    if abs(n_bytes) < GB:
        return f"{n_bytes / MB:.0f} MB ({n_bytes / MiB:.0f} MiB)"
    return f"{n_bytes / GB:.{digits}f} GB ({n_bytes / GiB:.{digits}f} GiB)"
