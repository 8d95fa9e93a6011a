"""`jackpot verify` replays every entry under the parameters in force at its place, from
the journal alone: no floor file, with snapshots (`--jobs`), from a checkpoint
(`--since`), from an export (`--file`); a file given is compared, as information."""

from __future__ import annotations

from pathlib import Path

import httpx

from app.audit.export import ExportFile, export_line
from app.audit.findings import Report, format_report
from app.audit.replay_check import Verifier
from app.audit.verify_run import verify
from app.config.floor_config import floor_config
from app.config.floor_file import parse_floor
from app.config.floor_parameters import floor_parameters
from app.state.sealing import DEMO_KEY
from app.store.journal import GENESIS, JournalRow
from app.store.snapshots import dump_text
from tests.integration.app.support import KeptJournal, build_server, running
from tests.support import DEMO, OPERATOR, T01, Clock, bets_body

QUARTER = 'rate = "0.25"\n  reserve_rate = "0.05"\n  ceiling = "2000000.00"'
HALF = 'rate = "0.50"\n  reserve_rate = "0.05"\n  ceiling = "2000000.00"'


def demo_text(rate: str = QUARTER) -> str:
    return Path(DEMO).read_text().replace(QUARTER, rate)


async def take_bets(client: httpx.AsyncClient, clock: Clock, first: int, rounds: int) -> None:
    for n in range(first, first + rounds):
        body = bets_body(clock, (1, "10.00", "1.00"))
        r = await client.post(f"/v1/tables/T01/rounds/R{n}/bets", json=body, headers=T01)
        assert r.status_code == 200, r.text
        clock.now += 1_000


async def two_starts(journal: KeptJournal, clock: Clock) -> str:
    """Rate 0.25 for 12 rounds, a restart on a file at 0.50, 12 more rounds; snapshots
    every few entries. Returns the state as the last writer left it."""
    for text, first in ((demo_text(), 1), (demo_text(HALF), 13)):
        server = build_server(
            parse_floor(text), journal=journal, clock=clock, snapshot_every=5, snapshot_growth=0
        )
        async with running(server.app) as client:
            await take_bets(client, clock, first, 12)
            r = await client.get("/v1/links/stud/meters/major", headers=OPERATOR)
            assert r.status_code == 200
        writer = server.writer
    return dump_text(writer.service, writer.seq, writer.head)


async def rows(journal: KeptJournal) -> list[JournalRow]:
    return [row async for row in journal.read(0)]


def ok(report: Report) -> Report:
    assert report.ok, format_report(report)
    return report


async def test_verify_needs_no_floor_file_and_replays_the_state_the_writer_had() -> None:
    clock, journal = Clock(), KeptJournal()
    state = await two_starts(journal, clock)
    all_rows = await rows(journal)
    assert [r.kind for r in all_rows].count("config") == 2
    report = ok(await verify(journal, None, mystery_key=DEMO_KEY))
    assert report.parameters is not None
    assert report.parameters["params"]["links"][0]["meters"][0]["rate"] == 5000
    # The replay of the journal alone, entry by entry, is the writer's state.
    verifier = Verifier(floor_config(parse_floor(demo_text()), DEMO_KEY))
    for row in all_rows:
        verifier.feed(row)
    assert verifier.ok
    last = all_rows[-1]
    assert dump_text(verifier.service, last.seq, last.hash) == state


async def test_verify_in_segments_and_from_a_checkpoint_needs_no_floor_file() -> None:
    clock, journal = Clock(), KeptJournal()
    await two_starts(journal, clock)
    assert len(await journal.snapshot_seqs()) >= 2
    whole = ok(await verify(journal, None, mystery_key=DEMO_KEY))
    assert ok(await verify(journal, None, mystery_key=DEMO_KEY, jobs=3)).meters == whole.meters
    assert whole.checkpoint is not None
    again = ok(await verify(journal, None, mystery_key=DEMO_KEY, since=whole.checkpoint))
    assert again.meters == whole.meters


async def test_verify_file_replays_an_export_with_no_floor_file(tmp_path: Path) -> None:
    clock, journal = Clock(), KeptJournal()
    await two_starts(journal, clock)
    export, prev = tmp_path / "all.jsonl", GENESIS
    with export.open("w") as out:
        for row in await rows(journal):
            out.write(export_line(row, prev) + "\n")
            prev = row.hash
    assert (
        ok(await verify(ExportFile(export), None, mystery_key=DEMO_KEY)).meters
        == ok(await verify(journal, None, mystery_key=DEMO_KEY)).meters
    )


async def test_a_floor_file_given_is_compared_with_the_parameters_in_force() -> None:
    clock, journal = Clock(), KeptJournal()
    await two_starts(journal, clock)
    quarter = parse_floor(demo_text())
    report = ok(
        await verify(
            journal,
            floor_config(quarter, DEMO_KEY),
            floor=floor_parameters(quarter),
            source="q.toml",
        )
    )
    text = "\n".join(report.notes)
    assert "floor file q.toml: differs from the parameters in force" in text
    assert "links[stud].meters[major].rate: 5000 -> 2500" in text
    half = parse_floor(demo_text(HALF))
    report = ok(
        await verify(
            journal, None, mystery_key=DEMO_KEY, floor=floor_parameters(half), source="h.toml"
        )
    )
    assert "floor file h.toml: the parameters in force" in report.notes
