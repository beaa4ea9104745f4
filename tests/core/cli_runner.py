"""`python -m core …` for the CLI tests: `core.cli.main` in this process, with its stdin, stdout and
stderr captured and its exit status (argparse's `SystemExit` included), as a subprocess would give
them. `cli_process` runs the real `python -m core` for the few smoke tests of the entry point."""

import contextlib
import io
import subprocess
import sys
from pathlib import Path

from core.cli import main

ROOT = Path(__file__).resolve().parents[2]


def cli(*args: str, stdin: str = "") -> subprocess.CompletedProcess[str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stderr(err):
        try:
            code = main(list(args), stdin=io.StringIO(stdin), stdout=out)
        except SystemExit as e:  # argparse: a usage error (2) or --help (0)
            code = e.code if isinstance(e.code, int) else 1
    return subprocess.CompletedProcess(["python", "-m", "core", *args], code, out.getvalue(), err.getvalue())


def cli_process(*args: str, stdin: str = "") -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "core", *args],
        input=stdin,
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=60,
        check=False,
    )
