"""A diffusion pipeline as Wan 2.1's own generate.py runs it (Wan-Video/Wan2.1@9737cba): fp32 DiT
weights under bf16 autocast (`mixed_precision`), and over several GPUs FSDP + sequence parallelism
(`sharding`), against the README's 'Computational Efficiency on Different GPUs' table (cases
c152-c156 of tests/core/fixtures/calibration.jsonl)."""

import pytest
from calibration_cases import calibration_catalog, outcomes_by_id

from core.formulas import diffusion as dif
from core.sizing.estimate import estimate

GiB = 2**30
WAN_14B = {"model": "wan2.1-t2v-14b", "task": "video_generation", "resolution": [1280, 720], "frames": 81}


def test_the_sharded_working_set_is_two_gathered_blocks_and_a_share_of_the_tokens() -> None:
    block = 14e9 / 40  # Wan 14B: 40 blocks
    assert dif.sharded_block_working_set(block, 2, 8 * GiB, 8) == pytest.approx(2 * block * 2 + 1 * GiB)
    assert dif.FSDP_UNITS_IN_FLIGHT == 2  # torch FSDP limit_all_gathers: two instances at once


def test_autocast_over_fp32_weights_keeps_16_bit_activations() -> None:
    catalog = calibration_catalog()
    fp32 = estimate(WAN_14B, catalog).breakdown  # the fixture's DiT ships fp32, as Wan-AI's checkpoint
    autocast = estimate(dict(WAN_14B, mixed_precision="bf16"), catalog).breakdown
    assert autocast["weights"] == fp32["weights"]
    assert fp32["weights"] > 52 * GiB  # 14B parameters in fp32
    assert autocast["activations"] == pytest.approx(fp32["activations"] / 2)


def test_fsdp_shards_dit_and_t5_and_the_tokens_but_not_the_vae_decode() -> None:
    catalog = calibration_catalog()
    one = estimate(dict(WAN_14B, mixed_precision="bf16", num_gpus=8), catalog).breakdown
    sharded = estimate(dict(WAN_14B, mixed_precision="bf16", num_gpus=8, sharding="fsdp"), catalog)
    b = sharded.breakdown
    vae_weights = 0.127e9 * 4
    assert b["weights"] == pytest.approx((one["weights"] - vae_weights) / 8 + vae_weights)
    assert b["text_encoders"] == pytest.approx(one["text_encoders"] / 8)
    # what is left per GPU is rank 0's whole VAE decode, larger than the 1/8 share of the tokens
    assert b.get("vae_decode", 0) > b.get("activations", 0)


@pytest.mark.parametrize(
    ("case_id", "within"),
    [("c154", 0.05), ("c155", 0.15), ("c156", 0.25), ("c152", 0.20)],
)
def test_wan_s_published_peaks(case_id: str, within: float) -> None:
    """c154 1× A100 --offload_model 69.1 GB; c155 2× and c156 8× A100 with --dit_fsdp --t5_fsdp
    --ulysses_size N, 52.5 and 28.6 GB; c152 1× 4090 --offload_model --t5_cpu (1.3B), 8.19 GB."""
    assert abs(outcomes_by_id()[case_id].error) <= within
