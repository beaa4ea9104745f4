"""The launch commands of an answer laid out: a title per engine, the command as typed, and what each
option does in the engine's words (core/data/engine_flags.toml). The bot puts the code in a code block,
`python -m core ask --command` prints it as is."""

from __future__ import annotations

import shlex
from collections.abc import Sequence
from dataclasses import dataclass

from core.advice.launch import flag_meaning
from core.contract import LaunchArg, LaunchCommand, Result
from core.language.words import concept_key, t

# --- layout -------------------------------------------------------------------------------------


def _shell(parts: Sequence[str]) -> str:
    """Arguments joined for a POSIX shell, one option a line (copyable on a phone)."""
    return " \\\n  ".join(parts)


def _option(arg: LaunchArg) -> str:
    return arg.flag if arg.value is None else f"{arg.flag} {shlex.quote(arg.value)}"


def command_text(command: LaunchCommand, name: str = "my-model") -> str:
    """The command as typed: a shell line (options one a line), a Modelfile with the two `ollama`
    commands that use it, or a Python snippet."""
    if command.kind == "modelfile":
        lines = [f"FROM ./{command.model}", *(f"PARAMETER {a.flag} {a.value}" for a in command.args)]
        env = " ".join(f"{a.flag}={a.value}" for a in command.env)
        serve = f"{env} ollama serve" if env else "ollama serve"
        return "\n".join(
            [
                "# Modelfile",
                *lines,
                "",
                f"# {serve}",
                f"ollama create {name} -f Modelfile",
                f"ollama run {name}",
            ]
        )
    if command.kind == "python":
        kwargs = "".join(f"    {a.flag}={a.value},\n" for a in command.args)
        imports = "AutoModelForCausalLM, AutoTokenizer"
        if any(a.flag == "quantization_config" for a in command.args):
            imports += ", BitsAndBytesConfig"
        return (
            f"import torch\nfrom transformers import {imports}\n\n"
            f'tokenizer = AutoTokenizer.from_pretrained("{command.model}")\n'
            f'model = AutoModelForCausalLM.from_pretrained(\n    "{command.model}",\n{kwargs})'
        )
    options = [_option(a) for a in command.args]
    if command.engine == "accelerate":  # the script comes after the launcher's options
        return _shell([command.program, *options, command.model])
    head = f"{command.program} {shlex.quote(command.model)}"
    if command.engine == "llama.cpp":  # the file is an option (-m), not a positional argument
        head = command.program
    env = " ".join(f"{a.flag}={shlex.quote(a.value or '')}" for a in command.env)
    return _shell([f"{env} {head}" if env else head, *options])


@dataclass(frozen=True)
class LaunchBlock:
    title: str
    code: str
    meanings: tuple[tuple[str, str], ...]  # ("--max-model-len 8192", "model context length …"), per option
    note: str | None  # the file name to replace, when the command names a placeholder


def _meanings(command: LaunchCommand, lang: str) -> tuple[tuple[str, str], ...]:
    out = []
    for arg in [*command.env, *command.args]:
        meaning = flag_meaning(command.engine, arg.flag, lang)
        if meaning:
            shown = arg.flag if arg.value is None else f"{arg.flag} {arg.value}"
            out.append((shown, meaning))
    return tuple(out)


def launch_blocks(result: Result, lang: str) -> tuple[LaunchBlock, ...]:
    blocks = []
    for command in result.launch_commands:
        note = t("launch-placeholder", lang, file=command.model) if command.model_is_placeholder else None
        blocks.append(
            LaunchBlock(
                title=t(concept_key("launch-engine", command.engine), lang),
                code=command_text(command),
                meanings=_meanings(command, lang),
                note=note,
            )
        )
    return tuple(blocks)


def launch_plain(result: Result, lang: str) -> str:
    """Every command as plain text (the CLI)."""
    blocks = launch_blocks(result, lang)
    if not blocks:
        return t("launch-none", lang)
    parts = [t("launch-title", lang)]
    for block in blocks:
        lines = [block.title, block.code, *(f"  {option}: {meaning}" for option, meaning in block.meanings)]
        if block.note:
            lines.append(block.note)
        parts.append("\n".join(lines))
    return "\n\n".join(parts)
