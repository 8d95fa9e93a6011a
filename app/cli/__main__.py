"""`python -m app.cli`: the `jackpot` command (as the demo starts its processes)."""

import sys

from app.cli.commands import main

if __name__ == "__main__":
    sys.exit(main())
