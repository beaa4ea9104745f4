"""The "⌨️ Launch command" message: each command of a result in a code block (copyable on a phone),
what each option does under it, within Telegram's message limit. Layout only: the commands and
their words come from the core (`core.layouts.launch`)."""

from __future__ import annotations

from html import escape

from bot.presenter import BUDGET
from core.contract import Result
from core.language.answer import headline_settings
from core.language.words import t
from core.layouts.launch import LaunchBlock, launch_blocks

_LANGUAGE = {"shell": "bash", "modelfile": "dockerfile", "python": "python"}


def _block(block: LaunchBlock, kind: str, meanings: bool) -> list[str]:
    code = f'<pre><code class="language-{_LANGUAGE[kind]}">{escape(block.code)}</code></pre>'
    lines = ["", f"<b>{escape(block.title)}</b>", code]
    if meanings:
        lines += [f"• <code>{escape(option)}</code>: {escape(meaning)}" for option, meaning in block.meanings]
    if block.note:
        lines.append(f"<i>{escape(block.note)}</i>")
    return lines


def render_launch(result: Result, lang: str) -> str | None:
    """The message, or None when the result has no command. Options' meanings are dropped from the
    last command up while the message is too long; a command itself is never cut."""
    blocks = launch_blocks(result, lang)
    if not blocks:
        return None
    kinds = [c.kind for c in result.launch_commands]
    head = [
        f"<b>{escape(t('launch-title', lang))}</b>",
        f"<i>{escape(t('launch-sized', lang, settings=headline_settings(result, lang)))}</i>",
    ]
    explained = [True] * len(blocks)
    while True:
        lines = list(head)
        for block, kind, meanings in zip(blocks, kinds, explained, strict=True):
            lines += _block(block, kind, meanings)
        text = "\n".join(lines)
        if len(text) <= BUDGET or not any(explained):
            return text
        explained[max(i for i, on in enumerate(explained) if on)] = False
