"""Command line: `python -m core estimate --json`, `ask`, `log`, `gpus`, `models`.

Imports are lazy so a cold start stays well under half a second (bench/bench_estimate.py).
Exit status: 0 ok, 2 invalid input (with a JSON `{"error", "field"}` in --json mode), 1 unavailable.

A Hugging Face id (or huggingface.co link) the catalogue lacks is looked up by default: config.json
and the parameter counts through `core.model.hub.HttpHub`, both within `LOOKUP_BUDGET_S` (3 s), no retries;
GPUFIT_HF_LOOKUP=0 turns it off, GPUFIT_HF_ENDPOINT (or HF_ENDPOINT) points at a mirror. Offline or
not found: one line saying so, in the language asked, and exit status 1 (unavailable) or 2.
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import TYPE_CHECKING, Any, TextIO

if TYPE_CHECKING:
    from core.model.hub import MemoryHub

EXIT_INVALID = 2
EXIT_UNAVAILABLE = 1
HF_LOOKUP_ENV = "GPUFIT_HF_LOOKUP"  # "0": no look-up (the catalogue only); anything else: look up
HF_ENDPOINT_ENVS = ("GPUFIT_HF_ENDPOINT", "HF_ENDPOINT")
# One request is a few hundred bytes; a megabyte is far past any real one and bounds the parse.
MAX_REQUEST_CHARS = 1_000_000


def main(argv: list[str] | None = None, stdin: TextIO | None = None, stdout: TextIO | None = None) -> int:
    stdin, stdout = stdin or sys.stdin, stdout or sys.stdout
    args = _parser().parse_args(argv)
    if args.command == "estimate":
        return _estimate(stdin.read(), stdout, as_json=args.json)
    if args.command == "ask":
        return _ask(" ".join(args.text), args.lang, stdout, command=args.command_line)
    if args.command == "log":
        from core.logs.cli import log_command

        return log_command(stdin.read(), args.lang, stdout, as_json=args.json)
    if args.command == "gpus":
        return _gpus(stdout, args.json)
    return _models(stdout, args.json)


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m core", description="GPU memory estimator")
    sub = parser.add_subparsers(dest="command", required=True)
    est = sub.add_parser("estimate", help="read one JSON request on stdin, write one result")
    est.add_argument("--json", action="store_true", help="JSON out (and JSON errors, exit status 2)")
    ask = sub.add_parser("ask", help="answer a free-text question")
    ask.add_argument("text", nargs="+")
    ask.add_argument("--lang", choices=("ru", "en"), default="ru")
    ask.add_argument(
        "--command", dest="command_line", action="store_true", help="also print the command that runs it"
    )
    log = sub.add_parser("log", help="read a pasted log on stdin (CUDA OOM, nvidia-smi, vLLM, llama.cpp)")
    log.add_argument("--lang", choices=("ru", "en"), default="ru")
    log.add_argument("--json", action="store_true", help="what was read and advised, as JSON")
    for name in ("gpus", "models"):
        listing = sub.add_parser(name, help=f"list the {name} catalogue")
        listing.add_argument("--json", action="store_true")
    return parser


def _error(out: TextIO, message: str, field: str | None) -> int:
    out.write(json.dumps({"error": message, "field": field}, ensure_ascii=False) + "\n")
    return EXIT_INVALID


def _reject_constant(name: str) -> float:
    raise ValueError(f"{name} is not JSON")


def _read_request(text: str) -> Any:
    """The JSON request; ValueError (with a message for the caller) when it cannot be one.

    Bounded: at most MAX_REQUEST_CHARS, no NaN/Infinity literals, no integer past Python's digit
    limit, no nesting deeper than the recursion limit. A number that overflows a float (`1e400`)
    reads as infinity, which the contract refuses naming the field (`allow_inf_nan=False`).
    """
    if len(text) > MAX_REQUEST_CHARS:
        raise ValueError(f"request is larger than {MAX_REQUEST_CHARS} characters")
    try:
        return json.loads(text, parse_constant=_reject_constant)
    except json.JSONDecodeError as e:
        raise ValueError(f"request is not valid JSON: {e}") from None
    except RecursionError:
        raise ValueError("request is nested too deeply") from None
    except ValueError as e:  # _reject_constant, the integer digit limit
        raise ValueError(f"request has a number out of range: {e}") from None


def _estimate(text: str, out: TextIO, as_json: bool) -> int:
    from core.errors import CoreError
    from core.inverse.solve import (
        run as estimate,  # a plain estimate, or solve_for / time & cost (core.inverse.solve)
    )

    try:
        request = _read_request(text)
    except ValueError as e:
        return _error(out, str(e), None)
    looked_up = _look_up(_models_of(request), "en")
    if isinstance(looked_up, _Failed):
        _error(out, looked_up.message, "model")
        return looked_up.status
    try:
        result = estimate(request, hub=looked_up)
    except CoreError as e:
        return _error(out, e.message, e.field)
    except RecursionError:
        return _error(out, "request is nested too deeply", None)
    except OverflowError as e:  # a bound the contract missed: still an answer, never a traceback
        return _error(out, f"a number in the request is out of range: {e}", None)
    if as_json:
        out.write(result.model_dump_json() + "\n")
    else:
        from core.units import format_bytes

        out.write(f"{result.model.name}: {format_bytes(result.total_bytes)} per GPU\n")
        for component, size in result.breakdown.items():
            out.write(f"  {component:17} {format_bytes(size)}\n")
    return 0


def _ask(text: str, lang: str, out: TextIO, *, command: bool = False) -> int:
    try:
        from core.layouts.plain import render_answer
        from core.parse import understand
    except ImportError as e:  # built by another module; fail cleanly until then
        sys.stderr.write(f"`ask` is not available: {e}\n")
        return EXIT_UNAVAILABLE
    from core.errors import CoreError, ParseError
    from core.inverse.solve import run as estimate  # inverse questions and time & cost too
    from core.logs import looks_like_log, read_log
    from core.parse.price import price_question

    if looks_like_log(text) and read_log(text) is not None:  # a pasted log: read, not parsed as a question
        from core.logs.cli import log_command

        return log_command(text, lang, out)
    if (asked := price_question(text)) is not None:  # "прайс", "сколько стоит аренда h100?"
        from core.catalogue.catalog import default_catalog
        from core.language.prices import price_list, render_price_list

        out.write(render_price_list(price_list(asked, default_catalog(), lang)) + "\n")
        return 0
    try:
        understood = understand(text)
        request = understood.request
        looked_up = _look_up([request.model, *(m.model for m in request.extra_models)], lang)
        if isinstance(looked_up, _Failed):
            out.write(looked_up.message + "\n")
            return looked_up.status
        result = estimate(request, hub=looked_up)
    except ParseError as e:
        from core.language.phrases import render_parse_error

        out.write(render_parse_error(e, lang) + "\n")
        return EXIT_INVALID
    except CoreError as e:
        sys.stderr.write(f"{e.message}\n")
        return EXIT_INVALID
    out.write(render_answer(result, lang, notes=understood.notes) + "\n")
    if command:
        from core.layouts.launch import launch_plain

        out.write("\n" + launch_plain(result, lang) + "\n")
    return 0


class _Failed:
    """A look-up that did not give the model: the line to say and the exit status."""

    def __init__(self, message: str, status: int) -> None:
        self.message, self.status = message, status


def _models_of(request: Any) -> list[Any]:
    """The model names of a JSON request (its model and its stack's), as given."""
    if not isinstance(request, dict):
        return []
    extra = request.get("extra_models")
    stack = [m.get("model") for m in extra if isinstance(m, dict)] if isinstance(extra, list) else []
    return [request.get("model"), *stack]


def _look_up(models: list[Any], lang: str) -> MemoryHub | _Failed | None:
    """A `core.model.hub.MemoryHub` holding the Hugging Face ids among `models` that the catalogue lacks,
    read from the Hub within one `LOOKUP_BUDGET_S`; None when there is nothing to look up or the
    look-up is off; `_Failed` when one could not be read."""
    import os

    from core.catalogue.catalog import default_catalog
    from core.errors import CoreError, UnknownModelError
    from core.language.words import t
    from core.model import hub as hf

    if os.environ.get(HF_LOOKUP_ENV, "") == "0":
        return None
    catalog = default_catalog()
    wanted = [
        m.strip()
        for m in models
        if isinstance(m, str) and hf.looks_like_hf_id(m) and catalog.find_model(m.strip()) is None
    ]
    if not wanted:
        return None
    endpoint = next((os.environ[e] for e in HF_ENDPOINT_ENVS if os.environ.get(e)), hf.HF_ENDPOINT)
    hub = hf.HttpHub(endpoint, hf.LOOKUP_BUDGET_S)  # one budget for the whole question
    records: dict[str, tuple[dict[str, Any], dict[str, int] | None]] = {}
    for repo_id in dict.fromkeys(wanted):
        try:
            records[repo_id.lower()] = hf.look_up(repo_id, hub)
        except UnknownModelError:
            return _Failed(t("cli-hf-not-found", lang, model=repo_id), EXIT_INVALID)
        except hf.HubUnavailable:
            seconds = round(hf.LOOKUP_BUDGET_S)
            return _Failed(t("cli-hf-unavailable", lang, model=repo_id, seconds=seconds), EXIT_UNAVAILABLE)
        except CoreError:
            return _Failed(t("cli-hf-unsupported", lang, model=repo_id), EXIT_INVALID)
    return hf.MemoryHub(records, key=str.lower)


def _gpus(out: TextIO, as_json: bool) -> int:
    from core.catalogue.catalog import default_catalog
    from core.units import format_bytes

    catalog = default_catalog()
    gpus = list(catalog.gpus.values())
    if as_json:
        rows: list[dict[str, Any]] = [g.model_dump(mode="json") for g in gpus]
        out.write(json.dumps(rows, ensure_ascii=False) + "\n")
        return 0
    offered: dict[str, list[str]] = {}
    for o in catalog.offers:
        offered.setdefault(o.gpu, []).append(str(o.count))
    out.write(
        f"{'id':16} {'name':40} {'usable memory':>22}  {'bandwidth':>11}  {'bf16':4} {'fp8':4} offered\n"
    )
    for g in gpus:
        cards = f"{'/'.join(offered[g.id])}× " if g.id in offered else "-"
        out.write(
            f"{g.id:16} {g.name:40} {format_bytes(g.usable_bytes):>22}  {g.bandwidth_gb_s:>6.0f} GB/s  "
            f"{_yes(g.bf16):4} {_yes(g.fp8):4} {cards}\n"
        )
    out.write("usable memory: as the driver reports it; GB = 10^9 bytes, GiB = 2^30 bytes\n")
    return 0


def _yes(flag: bool) -> str:
    return "yes" if flag else "no"


def _models(out: TextIO, as_json: bool) -> int:
    from core.catalogue.catalog import default_catalog

    models = list(default_catalog().models.values())
    if as_json:
        rows = [
            {
                "id": m.id,
                "name": m.name,
                "kind": str(m.kind),
                "params_b": m.params_b,
                "hf_id": m.hf_id,
                "aliases": m.aliases,
                "active_params_b": m.active_params_b,
                "native_precision": m.native_precision,
                "max_context": m.max_context,
            }
            for m in models
        ]
        out.write(json.dumps(rows, ensure_ascii=False) + "\n")
        return 0
    out.write(f"{'id':32} {'name':40} {'kind':7} {'params':>10} {'active':>8}  {'ships':6} {'context':>8}\n")
    for m in models:
        active = f"{m.active_params_b:.1f}B" if m.active_params_b else ""
        denoiser = [c.precision for c in m.components if c.role == "denoiser"]
        ships = str(m.native_precision or (denoiser[0] if denoiser else "bf16"))
        context = f"{m.max_context // 1024}k" if m.max_context else ""
        out.write(
            f"{m.id:32} {m.name:40} {m.kind:7} {m.params_b:>9.3f}B {active:>8}  {ships:6} {context:>8}\n"
        )
    return 0
