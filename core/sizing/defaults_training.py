"""Training defaults that depend on the trainer: what the common trainer does when the request says
nothing. One place, used by `core.sizing.defaults.fill_defaults` and by the mitigations (a mitigation
that switches the method gets the defaults choosing that method would get).

Gradient checkpointing is on for decoder language models (the trainers they are fine-tuned with turn
it on), for QLoRA, torchtune, Unsloth and video models; off for encoders, encoder-decoders and
diffusion training (transformers' and diffusers' defaults). Each trainer's source is cited at
`default_checkpointing`.
"""

from __future__ import annotations

from core.catalogue.models import ModelKind
from core.contract import AdapterDtype, Engine, Method, Task


def default_adapter_dtype(engine: Engine | None) -> AdapterDtype:
    """peft upcasts LoRA adapters to fp32 (`autocast_adapter_dtype=True`); torchtune builds the whole
    model, adapters included, in its dtype (`training.set_default_dtype(self._dtype)`, bf16 in its
    configs: recipes/lora_finetune_single_device.py)."""
    return AdapterDtype.BF16 if engine is Engine.TORCHTUNE else AdapterDtype.FP32


# Gradient checkpointing, by trainer (their own sources):
# - TRL `SFTConfig` (trl/trainer/sft_config.py): "gradient_checkpointing: Defaults to True instead of
#   False" (transformers' TrainingArguments default).
# - LLaMA-Factory (src/llamafactory/hparams/model_args.py): `disable_gradient_checkpointing = False`,
#   i.e. on unless disabled.
# - Axolotl: its example recipes set `gradient_checkpointing: true` (examples/llama-3/lora-8b.yml,
#   fft-8b.yaml, qlora.yml).
# - Unsloth: `FastLanguageModel.get_peft_model(use_gradient_checkpointing="unsloth")` by default.
# - torchtune: its recipe configs set `enable_activation_checkpointing: True`
#   (recipes/configs/llama3_1/8B_lora_single_device.yaml and the others).
# - peft's `prepare_model_for_kbit_training(use_gradient_checkpointing=True)`: the QLoRA recipe.
# These are the trainers decoder language models are fine-tuned with. Encoders and encoder-decoders
# (BERT, T5) are fine-tuned with transformers' Trainer / Seq2SeqTrainer, whose TrainingArguments
# default is off; so are the diffusers training scripts (`--gradient_checkpointing` is opt-in).
# Video models are trained with their vendors' scripts, which turn it on: CogVideo's finetune
# (zai-org/CogVideo finetune/schemas/args.py: `gradient_checkpointing: bool = True`, the argument's
# default `True` as well); a video clip's activations are frames × tokens per frame, tens of GiB.
def default_checkpointing(
    task: Task, method: Method, kind: ModelKind, engine: Engine | None
) -> tuple[bool, str | None]:
    """(gradient checkpointing on?, the assumption code that says why) when the request gives none."""
    if task is not Task.TRAINING:
        return False, None
    if engine is Engine.UNSLOTH:
        return True, None  # always on; the `unsloth_features` notice says so
    if engine is Engine.TORCHTUNE:
        return True, "default_checkpointing_torchtune"
    if method is Method.QLORA:
        return True, "default_checkpointing_qlora"
    if kind is ModelKind.LLM:
        return True, "default_checkpointing_trainers"
    if kind is ModelKind.VIDEO:
        return True, "default_checkpointing_video"
    return False, None
