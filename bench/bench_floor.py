"""The demo floor as the benchmarks run it: without its cap on a table's open rounds.

The benchmarks post bets for new rounds and settle few of them, to measure what bets
cost; the demo's `max_open_rounds` (a guard against abandoned rounds, issue 17) would
refuse them after a thousand a table and turn the load into 409s.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

DEMO = Path(__file__).resolve().parent.parent / "app" / "demo" / "floor.toml"

# The servers a benchmark starts run on the demo floor's tokens, on purpose.
os.environ.setdefault("JACKPOT_DEMO_TOKENS", "1")


def bench_floor() -> Path:
    """A copy of the demo floor with no practical cap on open rounds (made once a run)."""
    path = Path(tempfile.gettempdir()) / "jackpot-bench-floor.toml"
    path.write_text("max_open_rounds = 100000000\n" + DEMO.read_text())
    return path
