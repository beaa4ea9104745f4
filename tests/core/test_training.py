"""Training: the trainer defaults (gradient checkpointing), sharding and offload, trainer profiles
(torchtune, LoRA dropout) and the training mitigations — through `estimate()` and the formulas."""

from typing import Any

import pytest

from core.catalogue.catalog import default_catalog
from core.contract import Result
from core.formulas import activations as act
from core.formulas import training as tr
from core.formulas.params import arch_of
from core.language.answer import build_answer
from core.sizing.estimate import estimate

GiB = 2**30
CATALOG = default_catalog()
LORA_8B = dict(task="training", model="llama-3.1-8b", method="lora", seq_len=2048, batch_size=4)
FULL_70B_X8 = dict(task="training", model="llama-3.1-70b", method="full", num_gpus=8)


def run(**fields: Any) -> Result:
    return estimate(fields, CATALOG)


def codes(result: Result) -> set[str]:
    return {a.code for a in result.assumptions}


# --- gradient checkpointing: what the common trainer does ------------------------------------------


@pytest.mark.parametrize("method", ["full", "lora"])
def test_decoder_training_checkpoints_by_default_and_says_so(method: str) -> None:
    result = run(task="training", model="llama-3.1-8b", method=method)
    assert result.request.gradient_checkpointing is True
    assert "default_checkpointing_trainers" in codes(result)


def test_lora_8b_at_2k_by_4_fits_one_4090_with_the_default() -> None:
    result = run(**LORA_8B)
    assert result.total_bytes < 40 * GiB  # about 35 GB: one RTX 4090 48 GB
    assert result.recommendation is not None and result.recommendation.count == 1
    without = run(**LORA_8B, gradient_checkpointing=False)
    assert result.without_checkpointing_bytes == without.total_bytes > 2 * result.total_bytes


def test_the_answer_shows_the_figure_without_checkpointing() -> None:
    result = run(**LORA_8B)
    assert result.without_checkpointing_bytes is not None
    en = build_answer(result, "en")
    ru = build_answer(result, "ru")
    assert any(line.startswith("Without gradient checkpointing") for line in en.assumptions)
    assert any(line.startswith("Без gradient checkpointing") for line in ru.assumptions)


def test_no_figure_without_checkpointing_when_it_is_off_or_forced() -> None:
    assert run(**LORA_8B, gradient_checkpointing=False).without_checkpointing_bytes is None
    assert run(**LORA_8B, engine="unsloth").without_checkpointing_bytes is None  # Unsloth cannot


def test_encoders_keep_transformers_trainer_default_off() -> None:
    bert = run(task="training", model="bert-large", method="full", precision="fp32")
    assert bert.request.gradient_checkpointing is False
    assert not {c for c in codes(bert) if c.startswith("default_checkpointing")}
    qlora = run(task="training", model="bert-large", method="qlora")
    assert qlora.request.gradient_checkpointing is True  # peft's QLoRA recipe
    assert "default_checkpointing_qlora" in codes(qlora)


def test_video_training_checkpoints_as_the_vendor_scripts_do() -> None:
    """Issue 20, disagreement class: video training was sized with checkpointing off; CogVideo's
    finetune turns it on by default (finetune/schemas/args.py). Image training keeps diffusers'
    opt-in default."""
    video = run(task="training", model="cogvideox-5b", method="lora")
    assert video.request.gradient_checkpointing is True
    assert "default_checkpointing_video" in codes(video)
    off = run(task="training", model="cogvideox-5b", method="lora", gradient_checkpointing=False)
    assert video.total_bytes < off.total_bytes / 2
    image = run(task="training", model="flux.1-dev", method="lora")
    assert image.request.gradient_checkpointing is False


def test_an_explicit_choice_wins() -> None:
    result = run(task="training", model="llama-3.1-8b", method="lora", gradient_checkpointing=False)
    assert result.request.gradient_checkpointing is False
    assert "default_checkpointing_trainers" not in codes(result)


def test_torchtune_checkpoints_by_its_configs() -> None:
    result = run(task="training", model="llama-3.1-8b", method="lora", engine="torchtune")
    assert result.request.gradient_checkpointing is True
    assert {"default_checkpointing_torchtune", "torchtune_features"} <= codes(result)
    assert "lora_adapters_fp32" not in codes(result)


# --- mitigations -------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "request_fields",
    [
        dict(task="training", model="llama-3.1-70b", method="full"),
        dict(task="training", model="llama-3.1-8b", method="full", seq_len=8192),
        dict(task="training", model="bert-large", method="full", batch_size=64, seq_len=512),
    ],
)
def test_a_method_mitigation_is_sized_as_choosing_that_method(request_fields: dict[str, Any]) -> None:
    result = run(**request_fields)
    fixes = {m.action: m for m in result.mitigations}
    for action, method in (("use_qlora", "qlora"), ("use_lora", "lora")):
        if action in fixes:
            chosen = run(**{**request_fields, "method": method})
            # the same sizing; the estimate rounds each component, the mitigation their sum
            assert abs(fixes[action].total_bytes - chosen.total_bytes) <= len(chosen.breakdown), action


def test_mitigations_that_fit_come_before_those_that_do_not() -> None:
    result = run(task="training", model="llama-3.1-70b", method="full")

    def rank(action: str, fits: bool, count: int | None) -> int:
        if action == "cpu_offload":
            return 3  # the last resort
        return 1 if action == "more_gpus" else 0 if fits else 1 if count else 2

    ranks = [rank(m.action, m.fits, m.fits_count) for m in result.mitigations]
    assert ranks == sorted(ranks)
    assert ranks[0] == 0 and ranks[-1] > 0  # both kinds are there: the order is tested


def test_checkpointing_is_the_first_training_mitigation_when_off() -> None:
    result = run(**LORA_8B, gradient_checkpointing=False)
    assert result.mitigations[0].action == "gradient_checkpointing"
    on = run(**LORA_8B)
    assert abs(result.mitigations[0].total_bytes - on.total_bytes) <= len(on.breakdown)


# --- sharding and offload --------------------------------------------------------------------------


def test_zero_reduce_bucket_is_deepspeeds_default() -> None:
    assert tr.zero_reduce_bucket_bytes(2) == 5e8 * 2


def test_zero3_keeps_the_head_and_the_layers_reused_within_the_distance() -> None:
    # head 1.3e8: 7.4e8 elements of room; layers of 2e8 stay while 2·(j−1)·2e8 < 7.4e8: j = 1, 2
    assert tr.zero3_live_bytes(2e8, 1.3e8, 32, 2, 2) == (1.3e8 + 3 * 2e8) * 2
    # a head of 5e8 or more (Llama 3 8B: 5.3e8) fills the distance alone: head + the layer computed
    assert tr.zero3_live_bytes(2e8, 5.3e8, 32, 2, 2) == (5.3e8 + 2e8) * 2
    # never more layers than the model has
    assert tr.zero3_live_bytes(1e6, 0, 4, 2, 2) == (4 + 1) * 1e6 * 2


def test_fsdp_keeps_the_root_and_two_units() -> None:
    assert tr.fsdp_live_bytes(2e8, 1e9, 0.5, 2) == 1e9 * 2 + 2 * 2e8 * 0.5


def test_deepspeed_adds_its_bucket_where_fsdp_does_not() -> None:
    zero3 = run(**FULL_70B_X8, sharding="zero3").breakdown
    fsdp = run(**FULL_70B_X8, sharding="fsdp").breakdown
    assert zero3["optimizer_states"] == fsdp["optimizer_states"]
    assert zero3["gradients"] - fsdp["gradients"] == pytest.approx(tr.zero_reduce_bucket_bytes(2), rel=1e-6)


def test_optimizer_offload_moves_states_and_gradients_to_cpu() -> None:
    sharded = run(**FULL_70B_X8, sharding="zero3").breakdown
    offload = run(**FULL_70B_X8, sharding="zero3", cpu_offload="model").breakdown
    assert "optimizer_states" not in offload
    assert offload["weights"] == sharded["weights"]  # 16-bit weights stay on the GPU
    assert offload["gradients"] == pytest.approx(tr.zero_reduce_bucket_bytes(2), rel=1e-6)  # the bucket


def test_parameter_offload_leaves_the_gathered_parameters_only() -> None:
    sharded = run(**FULL_70B_X8, sharding="fsdp").breakdown
    offload = run(**FULL_70B_X8, sharding="fsdp", cpu_offload="sequential").breakdown
    shard = 70.6e9 * 2 / 8
    assert offload["weights"] == pytest.approx(sharded["weights"] - shard, rel=0.01)
    assert "gradients" not in offload  # FSDP CPUOffload(offload_params=True) moves them too
    assert "optimizer_states" not in offload


def test_sharded_qlora_is_gathered_at_its_stored_4_bit_size() -> None:
    qlora = run(task="training", model="llama-3.1-70b", method="qlora", num_gpus=8, sharding="fsdp")
    one = run(task="training", model="llama-3.1-70b", method="qlora", num_gpus=1, sharding="fsdp")
    arch = arch_of(CATALOG.models["llama-3.1-70b"])
    assert arch is not None
    layer = (arch.params - 2 * arch.V * arch.h) / arch.L
    root = 2 * arch.V * arch.h * 2  # embeddings and LM head, bf16
    gathered_1 = qlora.breakdown["weights"] - (one.breakdown["weights"] - root - 2 * layer * 0.53) / 8
    # the two units in flight at about half a byte per weight, not two
    assert root + 2 * layer * 0.5 < gathered_1 < root + 2 * layer * 0.6
    # TRL skips prepare_model_for_kbit_training for sharded QLoRA: no fp32 upcast
    assert "qlora_fp32_upcast" not in codes(qlora)
    assert "qlora_fp32_upcast" in codes(run(task="training", model="llama-3.1-70b", method="qlora"))


def test_zero3_at_world_size_one_holds_gathered_copies_on_top() -> None:
    plain = run(task="training", model="llama-3.1-8b", method="lora", gradient_checkpointing=True)
    zero3 = run(
        task="training", model="llama-3.1-8b", method="lora", gradient_checkpointing=True, sharding="zero3"
    )
    assert zero3.breakdown["weights"] > plain.breakdown["weights"]


# --- trainer profiles --------------------------------------------------------------------------------


def test_chunked_loss_never_holds_the_full_fp32_logits_twice() -> None:
    # per logit: 16-bit logits + saved fp32 log-probs + one chunk's fp32 upcast = 2 + 4 + 0.5
    assert act.chunked_loss_bytes(1, 1, 1, 2) == pytest.approx(6.5)
    assert act.chunked_loss_bytes(2048, 1, 128256, 2) < act.training_loss_bytes(2048, 1, 128256, 2) / 1.8


def test_torchtune_keeps_adapters_in_bf16() -> None:
    peft = run(task="training", model="llama-3.1-8b", method="lora").breakdown
    torchtune = run(task="training", model="llama-3.1-8b", method="lora", engine="torchtune").breakdown
    assert torchtune["optimizer_states"] == pytest.approx(peft["optimizer_states"] / 2, rel=1e-6)
    assert torchtune["activations"] < peft["activations"]  # the chunked loss


def test_lora_input_copies() -> None:
    arch = arch_of(CATALOG.models["llama-3.1-8b"])
    assert arch is not None
    # no cast, no dropout: lora_A reuses the base layer's saved input
    assert act.lora_input_bytes_per_layer(1, 1, arch, False, 2, cast=False, dropout=0.0) == 0
    # q and v read the hidden state: two copies of h
    assert act.lora_input_bytes_per_layer(1, 1, arch, True, 2, cast=True, dropout=0.0) == 2 * 4096 * 2
    # dropout adds the bool mask
    assert act.lora_input_bytes_per_layer(1, 1, arch, True, 2, cast=False, dropout=0.1) == 2 * 4096 * 3
    # all linears: q, k, v, gate, up (h each), o (a·d), down (i)
    all_linear = 5 * 4096 + 4096 + 14336
    assert act.lora_input_bytes_per_layer(1, 1, arch, False, 2, cast=True, dropout=0.0) == all_linear * 2


def test_lora_dropout_costs_memory_without_checkpointing() -> None:
    base = dict(task="training", model="llama-3.1-8b", method="lora", gradient_checkpointing=False)
    assert run(**base, lora_dropout=0.05).total_bytes > run(**base).total_bytes
    assert "lora_dropout_inputs" in codes(run(**base, lora_dropout=0.05))


def test_adapter_dtype_defaults_and_the_reference_qlora_script() -> None:
    assert run(task="training", model="llama-3.1-8b", method="lora").request.adapter_dtype == "fp32"
    tune = run(task="training", model="llama-3.1-8b", method="lora", engine="torchtune")
    assert tune.request.adapter_dtype == "bf16"
    assert run(task="training", model="llama-3.1-8b", method="full").request.adapter_dtype is None
    # artidoro/qlora: adapters, embeddings and LM head back in bf16 — no fp32 upcast of the head
    peft = run(task="training", model="llama-3.1-8b", method="qlora")
    reference = run(task="training", model="llama-3.1-8b", method="qlora", adapter_dtype="bf16")
    arch = arch_of(CATALOG.models["llama-3.1-8b"])
    assert arch is not None
    upcast = 2 * arch.V * arch.h * 2  # embeddings and LM head: 4 bytes instead of 2
    assert peft.breakdown["weights"] - reference.breakdown["weights"] > upcast
    assert "qlora_fp32_upcast" not in codes(reference) and "lora_adapters_bf16" in codes(reference)


def test_torchtune_lora_mitigation_keeps_torchtunes_adapters() -> None:
    full = dict(task="training", model="llama-3.1-70b", method="full", engine="torchtune")
    fixes = {m.action: m for m in run(**full).mitigations}
    chosen = run(**{**full, "method": "lora"})
    assert abs(fixes["use_lora"].total_bytes - chosen.total_bytes) <= len(chosen.breakdown)


def test_torch_compile_recomputes_pointwise_ops() -> None:
    arch = arch_of(CATALOG.models["llama-3.1-8b"])
    assert arch is not None
    h, kv, i = 4096, 1024, 14336
    assert act.stored_elements_per_layer(1, 1, arch) == 6 * h + 2 * kv + 4 * i
    assert act.stored_elements_per_layer(1, 1, arch, compiled=True) == 4 * h + 2 * kv + 2 * i
    # peft's cast copies are pointwise too; a dropout mask is random and stays
    assert act.lora_input_bytes_per_layer(1, 1, arch, True, 2, True, 0.0, compiled=True) == 0
    assert act.lora_input_bytes_per_layer(1, 1, arch, True, 2, True, 0.1, compiled=True) == 2 * h
    base = dict(task="training", model="llama-3.1-8b", method="lora", gradient_checkpointing=False)
    compiled = run(**base, torch_compile=True)
    assert compiled.total_bytes < run(**base).total_bytes
    assert "torch_compile_recomputes" in codes(compiled)
