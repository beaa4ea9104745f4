import pytest

from core.contract import KvPrecision, MixedPrecision, Precision
from core.formulas.precision import (
    bits_per_weight,
    compute_bytes,
    embedding_bits,
    is_gguf,
    is_quantized,
    kv_bytes_per_element,
)


def test_every_precision_has_bits() -> None:
    for precision in Precision:
        assert 2 < bits_per_weight(precision) <= 32


def test_nf4_with_double_quant_costs_0_127_bits_over_4() -> None:
    # QLoRA paper, sec. 3: double quantization brings the constants to 0.127 bits per parameter
    assert bits_per_weight(Precision.NF4) == pytest.approx(4.127, abs=1e-3)


def test_group_scales_are_counted() -> None:
    assert bits_per_weight(Precision.GPTQ_INT4) == pytest.approx(4 + 20 / 128)
    assert bits_per_weight(Precision.AWQ_INT4) > 4
    assert bits_per_weight(Precision.Q8_0) == 8.5
    assert bits_per_weight(Precision.Q4_0) == 4.5


def test_gguf_formats_order_by_size() -> None:
    order = [
        Precision.Q2_K,
        Precision.Q3_K_M,
        Precision.Q4_K_M,
        Precision.Q5_K_M,
        Precision.Q6_K,
        Precision.Q8_0,
    ]
    bits = [bits_per_weight(p) for p in order]
    assert bits == sorted(bits)
    assert all(is_gguf(p) for p in order)
    assert not is_gguf(Precision.NF4)


def test_bitsandbytes_and_gptq_keep_embeddings_16_bit_but_gguf_and_floats_do_not() -> None:
    assert embedding_bits(Precision.NF4) == 16
    assert embedding_bits(Precision.GPTQ_INT4) == 16
    assert embedding_bits(Precision.Q4_K_M) == bits_per_weight(Precision.Q4_K_M)
    assert embedding_bits(Precision.FP32) == 32


def test_quantized_means_below_16_bits() -> None:
    assert is_quantized(Precision.INT8)
    assert not is_quantized(Precision.BF16)


def test_kv_bytes() -> None:
    assert kv_bytes_per_element(KvPrecision.BF16) == 2
    assert kv_bytes_per_element(KvPrecision.FP8) == 1
    assert kv_bytes_per_element(KvPrecision.INT4) < 1


def test_compute_dtype() -> None:
    assert compute_bytes(Precision.FP32) == 4
    assert compute_bytes(Precision.FP32, MixedPrecision.BF16) == 2
    assert compute_bytes(Precision.NF4) == 2
