"""The in-process benchmarks run, small: they call the writer, the journal and the
verifier directly, and nothing else would notice when one of those calls changes
(`scripts/check` type-checks them; this runs them). The figures are not judged."""

from __future__ import annotations

import subprocess
import sys

import pytest

from tests.e2e.support import ROOT

pytestmark = [pytest.mark.integration, pytest.mark.slow]


def bench(*args: str) -> str:
    done = subprocess.run(
        [sys.executable, str(ROOT / "bench" / args[0]), *args[1:]],
        capture_output=True,
        text=True,
        timeout=600,
        cwd=ROOT,
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    return done.stdout


def test_bench_writer_prints_the_writers_cpu_per_bets_event() -> None:
    out = bench("bench_writer.py", "--groups", "5", "--cpu")
    assert "µs CPU per bets event" in out


def test_bench_core_prints_contributions_per_second() -> None:
    out = bench("bench_core.py", "--tables", "5", "--rounds", "200")
    assert "contributions/s:" in out


def test_bench_verify_writes_a_journal_and_verifies_it_clean_in_postgresql_too() -> None:
    out = bench("bench_verify.py", "--entries", "30000", "--jobs", "2")  # a snapshot: --since
    assert out.count("(clean)") == 4, out  # in memory, --jobs 1, --jobs 2, --since


def test_bench_startup_builds_a_journal_and_times_a_recovery() -> None:
    out = bench("bench_startup.py", "--entries", "3000")
    assert "start-up (snapshot + replay of" in out
