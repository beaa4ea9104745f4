"""The rules for training, the same model: checkpointing, a smaller micro-batch with gradient
accumulation (the same batch per optimizer step), an 8-bit optimizer, shorter sequences; then the
optimizer offloaded over ZeRO-3, another method (LoRA, QLoRA) with the defaults it would change, and
sharding. Each adds what applies to `Found`; `core.advice.mitigations` runs them in its order.
"""

from __future__ import annotations

from typing import Any

from core.catalogue.models import ModelSpec
from core.contract import CpuOffload, Method, MixedPrecision, Optimizer, Precision, Request, Sharding, Task
from core.sizing.defaults_training import default_adapter_dtype, default_checkpointing

from .mitigation_fit import Found, halvings
from .ranking import accumulation_for, largest_micro_batch

MIN_SEQ_LEN = 512


def training_steps(f: Found) -> None:
    """Training, the same model and method: checkpointing first where it is off (the same data and
    batch, about a third slower, nothing else changes); then a smaller micro-batch with gradient
    accumulation (the same batch per optimizer step: the same training, on the same cards); an 8-bit
    optimizer; shorter sequences."""
    req = f.req
    if req.task is not Task.TRAINING:
        return
    if not req.gradient_checkpointing:
        f.add("gradient_checkpointing", dict(gradient_checkpointing=True), gradient_checkpointing=1)
    if req.batch_size > 1:
        micro = largest_micro_batch(req, lambda changes: f.fits(f.sizer.total(**changes)))
        micro = micro or 1
        steps = accumulation_for(req, micro)
        f.add(
            "gradient_accumulation",
            dict(batch_size=micro, gradient_accumulation_steps=steps),
            batch_size=micro,
            steps=steps,
        )
    if req.optimizer in (Optimizer.ADAMW, Optimizer.PAGED_ADAMW):
        f.add("optimizer_8bit", dict(optimizer=Optimizer.ADAMW_8BIT), optimizer="adamw_8bit")
    if not f.diffusion and req.seq_len:
        best = f.largest_fitting(halvings(req.seq_len, MIN_SEQ_LEN), lambda v: {"seq_len": v})
        if best:
            f.add("shorter_sequence", dict(seq_len=best), seq_len=best)


def training_method(f: Found) -> None:
    """Training: the optimizer offloaded over ZeRO-3, then another method (LoRA, QLoRA), sharding."""
    req, given, spec = f.req, f.given, f.spec
    if req.task is not Task.TRAINING:
        return
    if req.method is Method.FULL and req.num_gpus > 1 and req.cpu_offload is CpuOffload.NONE:
        # what a full fine-tune too large for its cards runs as, before changing the method: ZeRO-3
        # with the optimizer states, fp32 master weights and their update in CPU RAM (DeepSpeed
        # offload_optimizer), sized sharded over the cards asked for; slower, the same training
        f.add(
            "shard_offload_optimizer",
            dict(sharding=Sharding.ZERO3, cpu_offload=CpuOffload.MODEL),
            sharding="zero3",
            cpu_offload="model",
        )
    if req.method is Method.FULL:
        lora: dict[str, Any] = {
            "method": Method.LORA,
            "mixed_precision": MixedPrecision.NONE,
            "precision": Precision.BF16 if req.precision is Precision.FP32 else req.precision,
        }
        f.add("use_lora", lora | _method_defaults(req, given, spec, Method.LORA), method="lora")
    if req.method is not Method.QLORA:
        qlora = dict(method=Method.QLORA, precision=Precision.NF4, mixed_precision=MixedPrecision.NONE)
        f.add("use_qlora", qlora | _method_defaults(req, given, spec, Method.QLORA), method="qlora")
    if req.num_gpus > 1 and req.sharding is not Sharding.ZERO3 and req.sharding is not Sharding.FSDP:
        f.add("shard", dict(sharding=Sharding.ZERO3), sharding="zero3")


def _method_defaults(req: Request, given: Request, spec: ModelSpec, method: Method) -> dict[str, Any]:
    """What choosing `method` would default differently, where the request did not say: gradient
    checkpointing (QLoRA turns it on where plain LoRA on an encoder leaves it off) and, from full
    training, the adapters' dtype."""
    changes: dict[str, Any] = {}
    if given.gradient_checkpointing is None:
        changes["gradient_checkpointing"] = default_checkpointing(req.task, method, spec.kind, req.engine)[0]
    if given.adapter_dtype is None:
        changes["adapter_dtype"] = default_adapter_dtype(req.engine)
    return changes
