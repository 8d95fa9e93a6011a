"""`jackpot verify` on journals that record their parameters from entry 1, the demo
floor's with its must-hit-by level among them: the writers' mystery key opens the level's
draws though no floor file is given (the journal says which levels there are), and with
no floor file `jackpot verify` asks a key of nobody whose journal has no such level
(docs/operations.md, "Mystery key")."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from app.audit.export import export_line
from app.audit.findings import format_report
from app.audit.verify_run import verify
from app.cli.commands import main
from app.config.floor_config import floor_config
from app.config.floor_file import load_floor, parse_floor
from app.state.sealing import DEMO_KEY
from app.store.journal import GENESIS
from tests.integration.app.support import KeptJournal, build_server, running
from tests.support import DEMO, Clock, bets_body, without_tiers

T06 = {"Authorization": "Bearer demo-table-T06"}
T01 = {"Authorization": "Bearer demo-table-T01"}


async def journal_of(text: str | None, table: str, headers: dict[str, str]) -> KeptJournal:
    """Three rounds' bets at `table` on the floor `text` (None: the demo floor)."""
    clock, journal = Clock(), KeptJournal()
    floor = None if text is None else parse_floor(text)
    async with running(build_server(floor, journal=journal, clock=clock).app) as client:
        for n in range(3):
            body = bets_body(clock, (1, "10.00", "1.00"), (2, "25.00", "1.00"))
            r = await client.post(
                f"/v1/tables/{table}/rounds/R{n}/bets", json=body, headers=headers
            )
            assert r.status_code == 200, r.text
            clock.now += 1_000
    return journal


async def exported(journal: KeptJournal, path: Path) -> Path:
    previous = GENESIS
    with path.open("w") as out:
        async for row in journal.read(0):
            out.write(export_line(row, previous) + "\n")
            previous = row.hash
    return path


async def test_the_writers_key_opens_the_draws_of_a_journal_without_a_floor_file() -> None:
    journal = await journal_of(None, "T06", T06)
    kinds = [row.kind async for row in journal.read(0)]
    assert kinds[:2] == ["config", "arm"] and kinds.count("bets") == 3
    report = await verify(journal, None, mystery_key=DEMO_KEY)
    assert report.ok, format_report(report)
    assert (report.kinds["arm"], report.kinds["bets"]) == (1, 3)
    # As `jackpot verify` gives them: the floor file named, with the key read for it.
    report = await verify(journal, floor_config(load_floor(DEMO), DEMO_KEY))
    assert report.ok, format_report(report)
    # Without the key the draw cannot be opened: the entry is named, nothing else.
    report = await verify(journal, None)
    assert [(d.seq, d.kind) for d in report.discrepancies] == [(2, "arm")]
    assert "JACKPOT_MYSTERY_KEY" in report.discrepancies[0].what


def test_verify_without_a_floor_file_needs_no_key_for_a_journal_without_levels(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    plain = asyncio.run(journal_of(without_tiers(DEMO.read_text()), "T01", T01))
    mystery = asyncio.run(journal_of(None, "T06", T06))
    plain_file = asyncio.run(exported(plain, tmp_path / "plain.jsonl"))
    mystery_file = asyncio.run(exported(mystery, tmp_path / "mystery.jsonl"))
    for name in ("JACKPOT_CONFIG", "JACKPOT_DEMO_TOKENS", "JACKPOT_MYSTERY_KEY"):
        monkeypatch.delenv(name, raising=False)
    assert main(["verify", "--file", str(plain_file), "--no-progress"]) == 0, capsys.readouterr()
    # A journal with draws and no key given: the draw is named, exit 1 (not a refusal).
    assert main(["verify", "--file", str(mystery_file), "--no-progress"]) == 1
    assert "JACKPOT_MYSTERY_KEY" in capsys.readouterr().out
    monkeypatch.setenv("JACKPOT_DEMO_TOKENS", "1")  # `jackpot demo`'s journal, its key
    assert main(["verify", "--file", str(mystery_file), "--no-progress"]) == 0
