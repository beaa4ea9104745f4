"""torchtune's chunked loss under `compile: True` (pytorch/torchtune@bd2a0fc: recipes call
`training.compile_loss`, which compiles `LinearCrossEntropyLoss.compute_cross_entropy`), against
the torchtune README's 'Memory and training speed' table, measured with compile on (cases
c144-c150 of tests/core/fixtures/calibration.jsonl)."""

import pytest
from calibration_cases import outcomes_by_id

from core.formulas import activations as act

LLAMA3_VOCAB = 128_256


def test_compiled_loss_keeps_the_16_bit_logits_and_one_chunk_s_transients() -> None:
    s, b, V = 2048, 2, LLAMA3_VOCAB
    logits = s * b * V
    assert act.compiled_chunked_loss_bytes(s, b, V, 2) == pytest.approx(logits * (2 + 6 / 8))
    # eager keeps the fp32 log-probabilities of every chunk as well
    assert act.chunked_loss_bytes(s, b, V, 2) - act.compiled_chunked_loss_bytes(s, b, V, 2) == pytest.approx(
        logits * 3.75
    )


@pytest.mark.parametrize("case_id", ["c144", "c145", "c146", "c149", "c150"])
def test_torchtune_readme_runs_within_12_percent(case_id: str) -> None:
    """Llama 3.1 8B LoRA on an A6000 (30.3 GiB) and a 4090 (16.2), QLoRA on a 4090 (7.4), 70B LoRA
    and 405B QLoRA on 8 A100s (27.6, 44.8): batch 2 (405B: 1) x 2048 packed tokens, compile on."""
    assert abs(outcomes_by_id()[case_id].error) <= 0.12
