"""Each component formula against numbers worked by hand or published."""

import pytest

from core.catalogue.models import ModelSpec
from core.contract import Engine, LoraTargets, Optimizer, Precision, Sharding
from core.formulas import activations as act
from core.formulas import diffusion as dif
from core.formulas import training as tr
from core.formulas.kv_cache import (
    kv_cache_bytes,
    mla_kv_cache_bytes,
    model_kv_cache_bytes,
    sliding_window_kv_cache_bytes,
)
from core.formulas.overhead import (
    ALLOCATOR_RESERVE_FRACTION,
    CUDA_CONTEXT_BYTES,
    ENGINE_RUNTIME_BYTES,
    NCCL_BUFFER_BYTES,
    overhead_bytes,
    quantize_on_load_residue_bytes,
)
from core.formulas.params import Arch, arch_of, embedding_params, linear_params
from core.formulas.peak_llm import training_peak
from core.formulas.weights import model_weight_bytes, weight_bytes

GiB = 2**30


def llama_8b(**changes: object) -> ModelSpec:
    fields: dict[str, object] = dict(
        id="llama-3.1-8b",
        name="Llama 3.1 8B",
        family="llama",
        kind="llm",
        source="config.json",
        params_b=8.030,
        layers=32,
        hidden_size=4096,
        attention_heads=32,
        kv_heads=8,
        head_dim=128,
        intermediate_size=14336,
        vocab_size=128256,
        max_context=131072,
    )
    return ModelSpec.model_validate(fields | changes)


def gpt(h: int = 1024, L: int = 24, a: int = 16, dropout: float = 0.1) -> Arch:
    """A GPT block as Korthikanti et al. count it: MHA, 4h GELU MLP, dropout."""
    return Arch(
        L=L,
        h=h,
        a=a,
        k=a,
        d=h // a,
        i=4 * h,
        V=50_000,
        experts=1,
        active_experts=1,
        tied=True,
        gated=False,
        params=1e9,
        dropout=dropout,
        attention_dropout=dropout,
    )


# --- parameters and weights ------------------------------------------------------------------


def test_arch_detects_gated_mlp_from_the_parameter_count() -> None:
    arch = arch_of(llama_8b())
    assert arch is not None and arch.gated and arch.k == 8 and arch.d == 128
    bert = ModelSpec(
        id="bert",
        name="BERT",
        family="bert",
        kind="encoder",
        source="x",
        params_b=0.335,
        layers=24,
        hidden_size=1024,
        attention_heads=16,
        intermediate_size=4096,
        vocab_size=30522,
        tied_embeddings=True,
    )
    bert_arch = arch_of(bert)
    assert bert_arch is not None and not bert_arch.gated


def test_embeddings_count_once_when_tied() -> None:
    assert embedding_params(128256, 4096, tied=False) == 2 * 128256 * 4096
    assert embedding_params(128256, 4096, tied=True) == 128256 * 4096


def test_weights_are_params_times_bits() -> None:
    assert weight_bytes(8.03e9, 16) == 16.06e9
    arch = arch_of(llama_8b())
    assert model_weight_bytes(8.03e9, Precision.BF16, arch) == 16.06e9


def test_nf4_keeps_embeddings_and_head_in_16_bits() -> None:
    arch = arch_of(llama_8b())
    assert arch is not None
    emb = 2 * 128256 * 4096
    expected = (8.03e9 - emb) * 4.127 / 8 + emb * 2
    assert model_weight_bytes(8.03e9, Precision.NF4, arch) == pytest.approx(expected, rel=1e-3)
    assert linear_params(arch) == pytest.approx(8.03e9 - emb)


# --- KV cache --------------------------------------------------------------------------------------


def test_llama_3_8b_kv_cache_is_half_a_gib_at_4k() -> None:
    # 2 × 32 layers × 8 KV heads × 128 × 4096 tokens × 2 bytes = 0.5 GiB (the widely quoted 128 KiB/token)
    assert kv_cache_bytes(32, 8, 128, 4096, 1, 2) == 0.5 * GiB
    assert model_kv_cache_bytes(llama_8b(), 4096, 1, 2) == 0.5 * GiB


def test_gqa_shrinks_the_cache_by_the_group_size() -> None:
    mha = model_kv_cache_bytes(llama_8b(kv_heads=32), 4096, 1, 2)
    gqa = model_kv_cache_bytes(llama_8b(), 4096, 1, 2)
    assert mha == 4 * gqa


def test_sliding_window_layers_keep_only_the_window() -> None:
    full = kv_cache_bytes(10, 8, 128, 32768, 1, 2)
    mixed = sliding_window_kv_cache_bytes(10, 5, 4096, 8, 128, 32768, 1, 2)
    assert mixed == kv_cache_bytes(5, 8, 128, 32768, 1, 2) + kv_cache_bytes(5, 8, 128, 4096, 1, 2)
    assert mixed < full
    spec = llama_8b(sliding_window=4096, sliding_window_layers=16)
    assert model_kv_cache_bytes(spec, 2048, 1, 2) == model_kv_cache_bytes(llama_8b(), 2048, 1, 2)


def test_mla_caches_the_compressed_latent() -> None:
    # DeepSeek-V3: 61 layers × (512 + 64) × 2 bytes = 70,272 bytes per token
    assert mla_kv_cache_bytes(61, 512, 64, 1, 1, 2) == 70_272
    spec = llama_8b(kv_lora_rank=512, qk_rope_head_dim=64)
    assert model_kv_cache_bytes(spec, 1000, 2, 2) == 32 * 576 * 1000 * 2 * 2


def test_encoders_keep_no_cache() -> None:
    bert = ModelSpec(
        id="bert",
        name="BERT",
        family="bert",
        kind="encoder",
        source="x",
        params_b=0.335,
        layers=24,
        hidden_size=1024,
        attention_heads=16,
        vocab_size=30522,
    )
    assert model_kv_cache_bytes(bert, 512, 1, 2) == 0


# --- activations -----------------------------------------------------------------------------


def test_training_layer_matches_korthikanti_34sbh() -> None:
    s, b, h = 2048, 1, 1024
    assert act.training_layer_bytes(s, b, 2, gpt(h), eager=False) == 34 * s * b * h


def test_eager_attention_stores_the_scores() -> None:
    s, b, arch = 2048, 2, gpt()
    extra = act.training_layer_bytes(s, b, 2, arch, eager=True) - act.training_layer_bytes(
        s, b, 2, arch, eager=False
    )
    # fp32 softmax (4) + dropout mask (1) and output (4) + 16-bit copy for P·V (2) per a·s²·b element
    assert extra == arch.a * s * s * b * 11
    assert act.eager_score_bytes_per_element(4, 0.0) == 4
    assert act.eager_score_bytes_per_element(2, 0.0) == 6


def test_checkpointing_keeps_layer_inputs_and_one_layer() -> None:
    s, b, arch = 1024, 4, gpt()
    layer = act.training_layer_bytes(s, b, 2, arch, eager=False)
    assert act.training_activation_bytes(s, b, 2, arch, False, checkpointing=False) == arch.L * layer
    assert (
        act.training_activation_bytes(s, b, 2, arch, False, checkpointing=True)
        == arch.L * s * b * arch.h * 2 + layer
    )
    offloaded = act.training_activation_bytes(
        s, b, 2, arch, False, checkpointing=True, offload_checkpoints=True
    )
    assert offloaded == s * b * arch.h * 2 + layer


def test_gqa_and_gated_mlp_change_stored_elements() -> None:
    arch = arch_of(llama_8b())
    assert arch is not None
    assert act.stored_elements_per_layer(1, 1, arch) == 6 * 4096 + 2 * 1024 + 4 * 14336


def test_loss_buffers_peak_at_the_start_of_backward() -> None:
    # forward: bf16 logits 2 + fp32 upcast 4 + saved log-softmax 4 = 10 bytes per logit;
    # start of backward: log-softmax 4 + nll_loss grad 4 + log_softmax grad 4 = 12: the larger
    assert act.training_loss_bytes(2048, 1, 128256, 2) == 2048 * 128256 * 12
    assert act.training_loss_bytes(2048, 1, 128256, 4) == 2048 * 128256 * 12
    assert act.logits_gradient_bytes(2048, 2, 1000, 2) == 2048 * 2 * 1000 * 2


def test_prefill_is_one_layer_working_set() -> None:
    arch = arch_of(llama_8b())
    assert arch is not None
    assert act.prefill_activation_bytes(8192, 1, arch, 2) == 8192 * (2 * 4096 + 3 * 14336) * 2
    assert act.prefill_activation_bytes(4096, 1, arch, 2, eager=True) > act.prefill_activation_bytes(
        4096, 1, arch, 2
    )


# --- training state --------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("optimizer", "per_param"),
    [(Optimizer.ADAMW, 8), (Optimizer.PAGED_ADAMW, 8), (Optimizer.LION, 4), (Optimizer.SGD, 0)],
)
def test_optimizer_states_per_fp32_param(optimizer: Optimizer, per_param: int) -> None:
    assert tr.optimizer_state_bytes(1e9, optimizer, 4, 4096) == per_param * 1e9


def test_8bit_adam_is_two_bytes_plus_block_constants() -> None:
    assert tr.optimizer_state_bytes(1e9, Optimizer.ADAMW_8BIT, 4, 4096) == pytest.approx(2.004e9, rel=1e-3)


def test_adafactor_factors_the_second_moment() -> None:
    assert tr.optimizer_state_bytes(1e9, Optimizer.ADAFACTOR, 4, 4096) == pytest.approx(4e9 * 2 / 4096)


def test_lora_parameter_counts_match_published_ones() -> None:
    llama3 = arch_of(llama_8b())
    assert llama3 is not None
    # peft print_trainable_parameters for Llama-3-8B, r=16, all linear layers: 41,943,040
    assert tr.lora_params(llama3, 16, LoraTargets.ALL_LINEAR) == 41_943_040
    llama2 = arch_of(llama_8b(params_b=6.738, kv_heads=32, intermediate_size=11008, vocab_size=32000))
    assert llama2 is not None
    # Llama-2-7B, r=8 on q_proj and v_proj: 4,194,304
    assert tr.lora_params(llama2, 8, LoraTargets.ATTENTION) == 4_194_304


def test_zero_stages_shard_what_they_promise() -> None:
    assert tr.shards(Sharding.ZERO2) == (True, True, False)
    assert tr.shards(Sharding.ZERO3) == tr.shards(Sharding.FSDP) == (True, True, True)
    assert tr.shards(Sharding.NONE) == (False, False, False)
    assert tr.zero_shard(8e9, 8) == 1e9


def test_optimizer_step_scratch() -> None:
    big = 128256 * 4096
    assert tr.optimizer_step_temporary_bytes(Optimizer.ADAMW, big, 4) == 0  # fused, in place
    assert tr.optimizer_step_temporary_bytes(Optimizer.SGD, big, 4) == 0
    assert tr.optimizer_step_temporary_bytes(Optimizer.ADAFACTOR, big, 4) == 2 * big * 4
    assert tr.optimizer_step_temporary_bytes(Optimizer.ADAFACTOR, big, 2) == 4 * big * 4
    assert tr.optimizer_step_temporary_bytes(Optimizer.LION, big, 2) == 2 * big * 2
    arch = arch_of(llama_8b())
    assert arch is not None
    assert tr.largest_tensor_params(arch) == big
    assert tr.lm_head_gradient_bytes(arch, 4) == big * 4


def test_training_peak_takes_the_larger_phase() -> None:
    pieces = dict(weights=10.0, autocast_copy=5.0, states=20.0, grads=10.0, buckets=0.0, temporaries=1.0)
    # big activations: start of backward, with the loss buffers or the first gradients, whichever is larger
    backward = training_peak(**pieces, activations=50.0, loss=8.0, first_grads=(2.0, 3.0), accumulation=1)
    assert backward == {"weights": 15.0, "gradients": 0.0, "optimizer_states": 20.0, "activations": 58.0}
    head = training_peak(**pieces, activations=50.0, loss=4.0, first_grads=(2.0, 3.0), accumulation=1)
    assert head["gradients"] == 3.0 and head["activations"] == 52.0
    # accumulated gradients are alive at the start of every backward
    accumulated = training_peak(**pieces, activations=50.0, loss=8.0, first_grads=(2.0, 3.0), accumulation=4)
    assert accumulated["gradients"] == 10.0
    # small activations: the optimizer step, without them or the autocast copies
    step = training_peak(**pieces, activations=1.0, loss=0.0, first_grads=(0.0, 0.0), accumulation=1)
    assert step == {"weights": 10.0, "gradients": 10.0, "optimizer_states": 21.0, "activations": 0.0}


def test_mixed_precision_pieces() -> None:
    assert tr.master_weight_bytes(1e9) == 4e9
    assert tr.autocast_weight_copy_bytes(1e9, 2) == 2e9
    assert tr.ddp_bucket_bytes(3e9) == 3e9


# --- diffusion -------------------------------------------------------------------------------


def test_flux_latent_tokens_at_1024() -> None:
    assert dif.latent_tokens(1024, 1024, 8) == 4096  # (1024 / 8 / 2)²


def test_video_latent_frames_are_causal() -> None:
    assert dif.latent_frame_count(81, 4) == 21
    assert dif.latent_tokens(1280, 720, 8, 21) == 21 * 80 * 45


def test_vae_tiling_bounds_the_decode() -> None:
    full = dif.vae_decode_bytes(2048, 2048, 1, tiled=False, tile=512)
    tiled = dif.vae_decode_bytes(2048, 2048, 1, tiled=True, tile=512)
    assert full == 2048 * 2048 * dif.VAE_DECODE_ELEMENTS_PER_PIXEL * 4
    assert tiled == full / 16
    assert dif.vae_decode_bytes(1024, 1024, 4, False, 512) == 4 * dif.vae_decode_bytes(
        1024, 1024, 1, False, 512
    )


def test_denoiser_and_offload() -> None:
    assert dif.denoiser_activation_bytes(4096, 1, 3072, 2) == 4096 * 20 * 3072 * 2
    assert abs(dif.denoiser_width(14e9) - 5120) < 400  # Wan 2.1 14B is 40 blocks of 5120
    assert dif.sequential_offload_resident(50e9, 50) == 1e9


# --- overhead ----------------------------------------------------------------------------------


def test_overhead_has_context_reserve_runtime_and_nccl() -> None:
    assert overhead_bytes(0, Engine.TRANSFORMERS, 1) == CUDA_CONTEXT_BYTES
    assert (
        overhead_bytes(10e9, Engine.TRANSFORMERS, 1) == CUDA_CONTEXT_BYTES + ALLOCATOR_RESERVE_FRACTION * 10e9
    )
    assert (
        overhead_bytes(0, Engine.VLLM, 2)
        == CUDA_CONTEXT_BYTES + ENGINE_RUNTIME_BYTES[Engine.VLLM] + NCCL_BUFFER_BYTES
    )
    assert overhead_bytes(
        0, Engine.TRANSFORMERS, 1, 7e9
    ) == CUDA_CONTEXT_BYTES + quantize_on_load_residue_bytes(7e9)
    assert quantize_on_load_residue_bytes(7e9) > 0
