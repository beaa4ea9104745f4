"""How many real phrasings the bot reads right (issue 25: target ≥ 95 %).

    python bench/phrasings.py [-v]

Reads each line of the phrasing corpus (tests/core/fixtures/phrasings.toml: typos, slang,
transliteration, mixed Russian and English, follow-ups after an answer, thanks, questions the
company answers elsewhere) as the bot does (`core.parse.understand_message`) and prints the pass
rate; `-v` lists each line read wrong and how. With `PYTHONPATH` naming another checkout first
(e.g. `git worktree add /tmp/old <commit>`), it scores that checkout's parser against this corpus.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
_FIRST = len([p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p])
sys.path.insert(1 + _FIRST, str(ROOT))  # after PYTHONPATH: another checkout's `core` may be scored

import core  # noqa: E402
from tests.core.phrasings import cases, mismatches  # noqa: E402

TARGET = 0.95


def main(argv: list[str]) -> int:
    rows = cases()
    wrong = [(row, mismatches(row)) for row in rows]
    wrong = [(row, why) for row, why in wrong if why]
    if "-v" in argv:
        for row, why in wrong:
            after = f"  (after {row['after']!r})" if "after" in row else ""
            print(f"✗ {row['text']!r}{after}: {'; '.join(why)}")
    passed = len(rows) - len(wrong)
    rate = passed / len(rows)
    print(f"parser: {Path(core.__file__).parent}")
    print(f"phrasings read right: {passed}/{len(rows)} = {rate:.1%} (target {TARGET:.0%})")
    return 0 if rate >= TARGET else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
