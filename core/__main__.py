import sys

from core.cli import main

try:
    sys.exit(main())
except BrokenPipeError:  # `python -m core models | head`: the reader left; not an error
    sys.stderr.close()
    sys.exit(0)
