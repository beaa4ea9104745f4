"""A small catalogue built in code, so estimator tests do not depend on the shipped data rows."""

from __future__ import annotations

from core.catalogue.catalog import Catalog
from core.catalogue.gpus import GpuSpec
from core.catalogue.models import ModelSpec
from core.catalogue.offers import RentalOffer

GiB = 2**30


def llm(
    id: str, params_b: float, layers: int, hidden: int, heads: int, kv: int, inter: int, **extra: object
) -> ModelSpec:
    fields: dict[str, object] = dict(
        id=id,
        name=id.title(),
        family=id.split("-")[0],
        kind="llm",
        source="test",
        params_b=params_b,
        layers=layers,
        hidden_size=hidden,
        attention_heads=heads,
        kv_heads=kv,
        head_dim=128,
        intermediate_size=inter,
        vocab_size=128256,
        max_context=131072,
    )
    return ModelSpec.model_validate(fields | extra)


MODELS = [
    llm("llama-8b", 8.03, 32, 4096, 32, 8, 14336),
    llm("llama-70b", 70.55, 80, 8192, 64, 8, 28672),
    llm(
        "mixtral-8x7b",
        46.7,
        32,
        4096,
        32,
        8,
        14336,
        vocab_size=32000,
        experts=8,
        active_experts=2,
        active_params_b=12.9,
        family="mixtral",
    ),
    ModelSpec(
        id="bert",
        name="BERT",
        family="bert",
        kind="encoder",
        source="test",
        params_b=0.335,
        layers=24,
        hidden_size=1024,
        attention_heads=16,
        intermediate_size=4096,
        vocab_size=30522,
        max_context=512,
        tied_embeddings=True,
    ),
    ModelSpec.model_validate(
        dict(
            id="flux",
            name="FLUX",
            family="flux",
            kind="image",
            source="test",
            params_b=16.87,
            hidden_size=3072,
            layers=57,
            default_resolution=[1024, 1024],
            vae_spatial_factor=8,
            components=[
                dict(name="transformer", role="denoiser", params_b=11.9, precision="bf16"),
                dict(name="t5", role="text_encoder", params_b=4.762, precision="bf16"),
                dict(name="clip", role="text_encoder", params_b=0.123, precision="bf16"),
                dict(name="vae", role="vae", params_b=0.084, precision="bf16"),
            ],
        )
    ),
    ModelSpec.model_validate(
        dict(
            id="wan",
            name="Wan",
            family="wan",
            kind="video",
            source="test",
            params_b=19.8,
            hidden_size=5120,
            layers=40,
            default_resolution=[1280, 720],
            default_frames=81,
            vae_spatial_factor=8,
            vae_temporal_factor=4,
            components=[
                dict(name="transformer", role="denoiser", params_b=14.0, precision="bf16"),
                dict(name="umt5", role="text_encoder", params_b=5.68, precision="bf16"),
                dict(name="vae", role="vae", params_b=0.127, precision="fp32"),
            ],
        )
    ),
]


def gpu(id: str, gib: float, bandwidth: float, tflops: float) -> GpuSpec:
    return GpuSpec(
        id=id,
        name=id.upper(),
        marketing_memory_gb=gib,
        usable_bytes=int(gib * GiB),
        bandwidth_gb_s=bandwidth,
        bf16=True,
        fp8=False,
        fp16_tflops=tflops,
        source="test",
    )


GPUS = [gpu("card24", 24, 1000, 160), gpu("card48", 48, 1000, 160), gpu("card80", 80, 3350, 990)]
OFFERS = [
    RentalOffer(
        id="c48x1", gpu="card48", count=1, price_per_hour=149, currency="RUB", url="https://x.test/1"
    ),
    RentalOffer(
        id="c48x2", gpu="card48", count=2, price_per_hour=298, currency="RUB", url="https://x.test/2"
    ),
    RentalOffer(id="c80x1", gpu="card80", count=1, url="https://x.test/3"),
    RentalOffer(id="c80x8", gpu="card80", count=8, url="https://x.test/4"),
]


def tiny_catalog(offers: list[RentalOffer] | None = None) -> Catalog:
    return Catalog(gpus=GPUS, models=MODELS, offers=OFFERS if offers is None else offers)
