"""A Hugging Face config.json read into a `ModelSpec`: the architecture numbers, the shipped
quantization and the modules it leaves unquantized, sliding windows, the parameters when no
checkpoint header gives them; `fetch_model_spec` looks a model up through a `Hub` and reads it."""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any

from pydantic import ValidationError

from core.catalogue.models import ModelKind, ModelSpec, UnquantizedModules
from core.contract import Assumption, Precision
from core.errors import CoreError
from core.language.words import note
from core.model.checks import ConfigRefused as ConfigRefused
from core.model.checks import check_config, check_counts, check_sizes, shown
from core.model.config_hybrid import mtp_layers_from_config, recurrent_from_config
from core.model.config_vision import vision_tower
from core.model.safetensors import PACKED_DTYPES

if TYPE_CHECKING:
    from core.model.hub import Hub

_ENCODER_TYPES = frozenset({"bert", "roberta", "xlm-roberta", "deberta-v2", "distilbert", "electra"})
_PLAIN_MLP_TYPES = frozenset(
    {
        "bert",
        "roberta",
        "xlm-roberta",
        "distilbert",
        "electra",
        "opt",
        "falcon",
        "starcoder2",
        "gpt2",
        "gpt_bigcode",
        "gpt_neox",
    }
)


def spec_from_config(
    config: Mapping[str, Any], hf_id: str, counts: Mapping[str, int] | None = None
) -> tuple[ModelSpec, list[Assumption]]:
    """A ModelSpec from a transformers config.json (llama, mistral, qwen2/3, gemma2/3, mixtral,
    qwen3_moe, deepseek_v3, gpt_oss and look-alikes); `counts` from the safetensors headers.

    Raises `ConfigRefused` for a value no model has (`core.model.checks`), `CoreError` for a config
    this estimator does not read."""
    check_config(config, hf_id)
    counts = check_counts(counts, hf_id)
    top = dict(config)
    inner = top.get("text_config")
    cfg = dict(inner if isinstance(inner, Mapping) and inner else top)  # multimodal wrappers (gemma3)
    model_type = shown(cfg.get("model_type") or top.get("model_type") or "unknown")
    encoder_layers = None
    if "d_model" in cfg and "num_layers" in cfg:  # T5 family: other key names
        encoder_layers = int(cfg["num_layers"])
        cfg = {
            **cfg,
            "num_hidden_layers": cfg.get("num_decoder_layers") or cfg["num_layers"],
            "hidden_size": cfg["d_model"],
            "num_attention_heads": cfg["num_heads"],
            "head_dim": cfg.get("d_kv"),
            "intermediate_size": cfg.get("d_ff"),
        }
    try:
        layers = int(cfg["num_hidden_layers"])
        hidden = int(cfg["hidden_size"])
        heads = int(cfg["num_attention_heads"])
        vocab = int(cfg.get("vocab_size") or top["vocab_size"])
    except (KeyError, TypeError, ValueError) as e:
        raise CoreError(
            f"{hf_id}: config.json ({model_type}) lacks the decoder fields this estimator reads ({e})",
            field="model",
        ) from e
    kv_heads = int(cfg.get("num_key_value_heads") or heads)
    if cfg.get("kv_lora_rank"):  # MLA: queries and keys are qk_nope + qk_rope wide
        head_dim = int(cfg.get("qk_nope_head_dim", 128)) + int(cfg.get("qk_rope_head_dim", 64))
    else:
        head_dim = int(cfg.get("head_dim") or hidden // heads)
    intermediate = cfg.get("intermediate_size")
    experts = cfg.get("num_local_experts") or cfg.get("num_experts") or cfg.get("n_routed_experts")
    active = cfg.get("num_experts_per_tok") or cfg.get("experts_per_token")
    moe_intermediate = cfg.get("moe_intermediate_size") or (intermediate if experts else None)
    # transformers' PretrainedConfig defaults tie_word_embeddings to True (Gemma relies on it)
    tied = bool(cfg.get("tie_word_embeddings", top.get("tie_word_embeddings", True)))
    window, window_layers = _sliding_window(cfg, model_type, layers)
    quantization = top.get("quantization_config") or cfg.get("quantization_config")

    arch: dict[str, Any] = {
        "layers": layers,
        "encoder_layers": encoder_layers,
        "hidden_size": hidden,
        "attention_heads": heads,
        "kv_heads": kv_heads,
        "head_dim": head_dim,
        "intermediate_size": int(intermediate) if intermediate else None,
        "gated_ffn": _ffn_matrices(cfg) == 3,
        "vocab_size": vocab,
        "tied_embeddings": tied,
        "max_context": cfg.get("max_position_embeddings"),
        "sliding_window": window,
        "sliding_window_layers": window_layers,
        "kv_lora_rank": cfg.get("kv_lora_rank"),
        "qk_rope_head_dim": cfg.get("qk_rope_head_dim") if cfg.get("kv_lora_rank") else None,
        "native_precision": shipped_precision(quantization),
        "unquantized": unquantized_modules(quantization, layers, hf_id),
    }
    # hybrids: core.model.config_hybrid
    arch["recurrent"] = recurrent_from_config(cfg, model_type, layers, hidden)
    arch["mtp_layers"] = mtp_layers_from_config(cfg)
    if experts and active:
        arch |= {"experts": int(experts), "active_experts": int(active)}
        arch["moe_intermediate_size"] = int(moe_intermediate) if moe_intermediate else None

    assumptions = [note("huggingface_config", hf_id=hf_id, model_type=model_type)]
    estimated = _estimate_params(cfg, arch)
    packed = sorted(set(counts or {}) & PACKED_DTYPES)
    if counts and not packed:
        total = sum(counts.values())
        dtype = max(counts, key=lambda d: counts[d])
        assumptions.append(note("huggingface_safetensors", params=total, dtype=dtype))
    else:
        total = estimated
        packs = ", ".join(packed) if packed else "none"  # packed dtypes hide the parameter count
        assumptions.append(note("huggingface_params_from_config", params=total, packed=packs))
    check_sizes(arch, total, estimated, bool(counts) and not packed, hf_id)
    active_params = None
    if arch.get("experts") and int(arch["experts"]) > 1:
        active_params = _active_params(cfg, arch, total)

    try:
        spec = ModelSpec(
            id=_slug(hf_id),
            name=hf_id,
            family=model_type,
            kind=_kind(model_type, encoder_layers),
            hf_id=hf_id,
            source=f"https://huggingface.co/{hf_id}/blob/main/config.json",
            params_b=total / 1e9,
            active_params_b=active_params / 1e9 if active_params else None,
            **{k: v for k, v in arch.items() if v is not None},
        )
    except ValidationError as e:
        first = e.errors()[0]
        raise CoreError(f"{hf_id}: config.json is inconsistent: {first['msg']}", field="model") from e
    tower = vision_tower(top, hf_id) if spec.kind is ModelKind.LLM else None  # not only text_config
    if tower is not None:
        spec = spec.model_copy(update={"vision": tower})
    return spec, assumptions


def shipped_precision(quantization: Any) -> Precision | None:
    """The format a pre-quantized checkpoint ships in, from config.json's `quantization_config`
    (transformers' `quant_method` names); None when unknown or not quantized."""
    if not isinstance(quantization, Mapping):
        return None
    method = str(quantization.get("quant_method", "")).lower()
    bits = quantization.get("bits")
    if method == "bitsandbytes":
        if quantization.get("load_in_4bit"):
            return Precision.NF4
        return Precision.INT8 if quantization.get("load_in_8bit") else None
    by_method = {
        "fp8": Precision.FP8,
        "fbgemm_fp8": Precision.FP8,  # meta-llama/Llama-3.1-405B-Instruct-FP8
        "mxfp4": Precision.MXFP4,
        "awq": Precision.AWQ_INT4 if bits in (4, None) else None,
        "gptq": Precision.GPTQ_INT4 if bits in (4, None) else None,
    }
    return by_method.get(method)


_LAYER_MODULE = re.compile(r"layers\.(\d+|\*)\.(self_attn|attn|attention|mlp|block_sparse_moe|experts)\b")
_ATTENTION_MODULES = ("self_attn", "attn", "attention")
_ROUTER = re.compile(r"\.(router|gate)(\.weight)?\W*$")  # an MoE router, not `gate_proj`


def unquantized_modules(quantization: Any, layers: int, hf_id: str) -> UnquantizedModules | None:
    """The decoder layers a pre-quantized checkpoint keeps in 16 bits, from its
    `quantization_config`: `modules_to_not_convert` (transformers: fbgemm_fp8, fp8, mxfp4, awq) or
    `ignore` (compressed-tensors). Entries name modules (`model.layers.0.mlp.down_proj`), globs
    (`model.layers.*.self_attn`) or regexes (`re:.*self_attn.*`); one without a layer index means
    every layer. Embeddings, LM head and routers are left out: they are counted wide anyway or are
    a few MB. None when nothing in the decoder layers stays wide or the format is unknown."""
    precision = shipped_precision(quantization)
    if precision is None or not isinstance(quantization, Mapping):
        return None
    entries = quantization.get("modules_to_not_convert") or quantization.get("ignore") or []
    if not isinstance(entries, list):
        return None
    attention: set[int] = set()
    mlp: set[int] = set()
    every = range(layers)
    for entry in (str(e) for e in entries):
        if _ROUTER.search(entry):
            continue
        found = _LAYER_MODULE.search(entry)
        if found:
            index, part = found.groups()
            chosen: Iterable[int] = every if index == "*" else [int(index)] if int(index) < layers else []
        elif any(name in entry for name in _ATTENTION_MODULES):
            chosen, part = every, "self_attn"  # no layer index: a pattern matching every layer
        elif "mlp" in entry:
            chosen, part = every, "mlp"
        else:
            continue
        (attention if part in _ATTENTION_MODULES else mlp).update(chosen)
    if not attention and not mlp:
        return None
    return UnquantizedModules(
        precision=precision,
        attention_layers=len(attention),
        mlp_layers=len(mlp),
        source=f"https://huggingface.co/{hf_id}/blob/main/config.json (quantization_config)",
    )


def fetch_model_spec(hf_id: str, hub: Hub) -> tuple[ModelSpec, list[Assumption]]:
    """Read config.json and safetensors metadata of `hf_id` through `hub`."""
    try:
        config = hub.config(hf_id)
        counts = hub.parameter_counts(hf_id)
    except CoreError:
        raise
    except Exception as e:  # network, auth, gated repo: say so instead of crashing the request
        raise CoreError(f"could not read {hf_id} from Hugging Face: {e}", field="model") from e
    return spec_from_config(config, hf_id, counts)


def _sliding_window(cfg: Mapping[str, Any], model_type: str, layers: int) -> tuple[int | None, int | None]:
    """(window, layers using it). Conventions differ by architecture (transformers' modeling code)."""
    window = cfg.get("sliding_window")
    if not window:
        return None, None
    layer_types = cfg.get("layer_types")
    if isinstance(layer_types, list):  # newer configs list each layer explicitly
        return int(window), sum(1 for t in layer_types if t == "sliding_attention")
    if model_type.startswith(("qwen2", "qwen3")) and not cfg.get("use_sliding_window"):
        return None, None  # Qwen configs carry a window they do not use by default
    if model_type == "gemma2":
        return int(window), layers // 2  # local and global layers alternate
    if model_type.startswith("gemma3"):
        pattern = int(cfg.get("sliding_window_pattern") or 6)  # 5 local : 1 global
        return int(window), layers - layers // pattern
    return int(window), layers  # mistral/starcoder2: every layer


def _attention_params(cfg: Mapping[str, Any], arch: Mapping[str, Any]) -> int:
    """Attention weights of one layer: q, k, v, o projections, or MLA's low-rank ones (DeepSeek-V3
    modeling code: q_a/q_b, kv_a (kv_lora_rank + rope) / kv_b, o)."""
    hidden, heads = int(arch["hidden_size"]), int(arch["attention_heads"])
    if arch.get("kv_lora_rank"):
        rope = int(cfg.get("qk_rope_head_dim", 64))
        nope = int(cfg.get("qk_nope_head_dim", 128))
        v_dim = int(cfg.get("v_head_dim", 128))
        q_rank = int(cfg.get("q_lora_rank") or 0)
        kv_rank = int(arch["kv_lora_rank"])
        q = hidden * q_rank + q_rank * heads * (nope + rope) if q_rank else hidden * heads * (nope + rope)
        kv = hidden * (kv_rank + rope) + kv_rank * heads * (nope + v_dim)
        return q + kv + heads * v_dim * hidden
    q_dim = heads * int(arch["head_dim"])
    kv_dim = int(arch["kv_heads"]) * int(arch["head_dim"])
    return hidden * q_dim * 2 + hidden * kv_dim * 2


def _ffn_matrices(cfg: Mapping[str, Any]) -> int:
    """3 for gated FFNs (SwiGLU/GeGLU: gate, up, down), 2 for the plain MLP of BERT/OPT/Falcon/T5 v1.0."""
    if str(cfg.get("model_type")) in _PLAIN_MLP_TYPES:
        return 2
    if "feed_forward_proj" in cfg:
        return 3 if str(cfg["feed_forward_proj"]).startswith("gated") else 2
    return 3


def _kind(model_type: str, encoder_layers: int | None) -> ModelKind:
    if encoder_layers:
        return ModelKind.ENCODER_DECODER
    return ModelKind.ENCODER if model_type in _ENCODER_TYPES else ModelKind.LLM


def _estimate_params(cfg: Mapping[str, Any], arch: Mapping[str, Any]) -> int:
    """Parameter count of a gated-FFN decoder from its config (norms and biases ignored)."""
    hidden, layers = int(arch["hidden_size"]), int(arch["layers"])
    attention = _attention_params(cfg, arch)
    embeddings = int(arch["vocab_size"]) * hidden * (1 if arch["tied_embeddings"] else 2)
    dense_layer = attention + _ffn_matrices(cfg) * hidden * int(arch["intermediate_size"] or 4 * hidden)
    if arch.get("encoder_layers"):  # decoder layers add cross-attention
        return int(arch["encoder_layers"]) * dense_layer + layers * (dense_layer + attention) + embeddings
    if not arch.get("experts"):
        return layers * dense_layer + embeddings
    experts = int(arch["experts"])
    expert_ffn = 3 * hidden * int(arch.get("moe_intermediate_size") or arch["intermediate_size"])
    shared = int(cfg.get("n_shared_experts") or 0) * expert_ffn
    moe_layer = attention + experts * expert_ffn + shared + hidden * experts  # + router
    dense_layers = int(cfg.get("first_k_dense_replace") or 0)
    return dense_layers * dense_layer + (layers - dense_layers) * moe_layer + embeddings


def _active_params(cfg: Mapping[str, Any], arch: Mapping[str, Any], total: int) -> int:
    """Total minus the experts a token is not routed to."""
    hidden = int(arch["hidden_size"])
    expert_ffn = 3 * hidden * int(arch.get("moe_intermediate_size") or arch["intermediate_size"])
    moe_layers = int(arch["layers"]) - int(cfg.get("first_k_dense_replace") or 0)
    idle = (int(arch["experts"]) - int(arch["active_experts"])) * expert_ffn * moe_layers
    return max(total - idle, total * int(arch["active_experts"]) // int(arch["experts"]))


def _slug(hf_id: str) -> str:
    return "hf-" + re.sub(r"[^a-z0-9._-]+", "-", hf_id.lower()).strip("-")
