"""What an answer says of a hybrid model: how many layers keep a KV cache, and the recurrent state the
others keep per sequence (`core.formulas.recurrent`), as the note `hybrid_state`."""

from __future__ import annotations

from core.catalogue.models import ModelSpec
from core.contract import Assumption, Request
from core.formulas.recurrent import recurrent_state_bytes, state_bytes
from core.language.words import note

MiB = 2**20
FP32_BYTES = 4


def hybrid_notes(req: Request, spec: ModelSpec) -> list[Assumption]:
    """The note `hybrid_state` for a model with recurrent layers (none otherwise)."""
    r = spec.recurrent
    if r is None or req.precision is None:
        return []
    conv_e, ssm_e = state_bytes(req.engine, req.precision, r)
    per_sequence = recurrent_state_bytes(spec, 1, conv_e, ssm_e=ssm_e)
    return [
        note(
            "hybrid_state",
            attention=spec.attention_layers,
            layers=spec.layers or 0,
            recurrent=r.layers,
            kind=r.kind,
            per_sequence_mb=round(per_sequence / MiB, 1),
            per_sequence_bytes=round(per_sequence),
            fp32="yes" if ssm_e == FP32_BYTES else "no",
        )
    ]
