"""The README's "A sample exchange", produced by the real bot: `python -m bot sandbox` (a local fake
Telegram, our bot, the terminal chat) is fed the same three questions, and what the terminal shows is
the sample.

    python bench/readme_sample.py          # print the exchange
    python bench/readme_sample.py --write  # rewrite it in README.md, between its markers

tests/bot/e2e/test_readme_sample.py fails when the README's copy is stale: after a change of what the
bot answers, run `--write` and commit what it changed. Pictures are off (a terminal shows a path, and
its time would change every run); the embedded SQLite database lives in a temporary directory.
"""

from __future__ import annotations

import argparse
import asyncio
import io
import re
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bot.__main__ import run_sandbox
from bot.config import Settings

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
BEGIN = "<!-- sample-exchange:begin (bench/readme_sample.py --write) -->"
END = "<!-- sample-exchange:end -->"
# The three turns: a question, a follow-up that changes the card, a comparison.
QUESTIONS = (
    "llama 3.1 8b int4 32k 4 пользователя",
    "а на 3090?",
    "сравни 4090 48 и h100 для llama 3.1 70b int4",
)
# After the first answer, the README shows the head of each reply: the decision, then "…".
FOLLOW_UP_LINES = 6
PROMPT = "you> "


async def exchange() -> str:
    """What the terminal chat shows for `QUESTIONS`, from the first question to the last reply."""
    screen = io.StringIO()
    typed: Iterator[str] = iter(QUESTIONS)

    def type_line(prompt: str) -> str:
        try:
            line = next(typed)
        except StopIteration:
            raise EOFError from None
        screen.write(f"{PROMPT}{line}\n")  # what a terminal echoes
        return line

    with tempfile.TemporaryDirectory() as tmp:
        settings = Settings(  # type: ignore[call-arg]
            _env_file=None,
            database_url=f"sqlite+aiosqlite:///{Path(tmp) / 'sample.sqlite3'}",
            bot_token=None,
            redis_url=None,
            offers_file=None,
            default_language="ru",
            contact_url="https://example.com/contact",
            sales_chat_id=None,
            answer_pictures=False,
            hf_lookup=False,
        )
        await run_sandbox(settings, input_fn=type_line, output=screen)
    return shown(screen.getvalue())


def shown(terminal: str) -> str:
    """The turns without the chat's greeting and farewell; each reply after the first cut to its head."""
    turns = terminal.split(PROMPT)[1:]
    out: list[str] = []
    for number, turn in enumerate(turns):
        lines = turn.rstrip("\n").split("\n")
        if lines and lines[-1] == "bye":
            lines.pop()
        if number > 0 and len(lines) > 1 + FOLLOW_UP_LINES:
            head = lines[: 1 + FOLLOW_UP_LINES]
            while head and not head[-1].strip():
                head.pop()
            lines = [*head, "…"]
        out.append(PROMPT + "\n".join(lines))
    return "\n".join(out) + "\n"


def embed(readme: str, sample: str) -> str:
    """The README with the code block between the markers replaced by `sample`."""
    pattern = re.compile(re.escape(BEGIN) + r"\n.*?" + re.escape(END), flags=re.S)
    if not pattern.search(readme):
        raise SystemExit(f"README.md has no {BEGIN} … {END} block")
    return pattern.sub(lambda _: f"{BEGIN}\n```\n{sample}```\n{END}", readme)


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--write", action="store_true", help="rewrite the sample in README.md")
    args = parser.parse_args()
    sample = asyncio.run(exchange())
    if not args.write:
        print(sample, end="")
        return
    content = embed(README.read_text(encoding="utf-8"), sample)
    if content != README.read_text(encoding="utf-8"):
        README.write_text(content, encoding="utf-8")
        print("wrote README.md")


if __name__ == "__main__":
    main()
