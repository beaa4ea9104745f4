"""The launch commands of an answer laid out: a title per engine, the command as typed, and what each
option does in the engine's words (core/data/engine_flags.toml). The bot puts the code in a code block,
`python -m core ask --command` prints it as is."""

from __future__ import annotations

from dataclasses import dataclass

from core.contract import LaunchCommand, Result
from core.launch import command_text, flag_meaning
from core.texts import concept_key, t


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
