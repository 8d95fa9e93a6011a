"""The head leaves the database: the writer signs it into a directory the auditor keeps,
and `jackpot verify` fails against a journal that no longer holds a signed head or an
expected one (a tail cut with the server stopped), naming it."""

from __future__ import annotations

import argparse
import asyncio
from pathlib import Path
from typing import Any

import asyncpg
import pytest

from app.audit.checkpoint import Checkpoint
from app.cli import main as jackpot
from app.cli.audit import main_verify
from app.config.floor_config import floor_config
from app.config.floor_file import load_floor
from app.state.floor_state import FloorState
from app.state.sealing import DEMO_KEY
from app.store.journal import PostgresJournal
from app.store.signed_heads import HeadSigner, private_key, read_signed_head, signed_heads
from app.writer.head_signing import HeadSigning
from app.writer.writer import Writer
from app.writer.writer_settings import WriterSettings
from tests.integration.app.support import build_server
from tests.integration.app.writer.support import NOW, bets
from tests.support import DEMO, Clock, rewrite_history

pytestmark = pytest.mark.integration


@pytest.fixture
def keys(tmp_path: Path) -> tuple[Path, Path]:
    private, public = tmp_path / "head.key", tmp_path / "head.pub"
    assert jackpot(["keygen", "--private-key", str(private), "--public-key", str(public)]) == 0
    assert private.stat().st_mode & 0o077 == 0  # the private key: its owner's only
    return private, public


@pytest.fixture(autouse=True)
def demo_key(monkeypatch: pytest.MonkeyPatch) -> None:
    """`jackpot verify` reads the demo floor's journal with its writers' key: the demo's."""
    monkeypatch.setenv("JACKPOT_DEMO_TOKENS", "1")


async def verify(dsn: str, **extra: Any) -> int:
    """`jackpot verify` (its own event loop, in a thread beside the test's)."""
    base = {"config": DEMO, "data_dir": None, "database_url": dsn, "progress": False}
    return await asyncio.to_thread(main_verify, argparse.Namespace(**{**base, **extra}))


async def thirty_bets(pool: asyncpg.Pool, signing_dir: Path, key: Path) -> Writer:
    """30 bets by a writer that signs its head at start and as it stops."""
    clock = Clock()
    clock.now = NOW
    # The demo floor `jackpot verify` is given (its must-hit-by level and key included).
    state = FloorState(floor_config(load_floor(DEMO), DEMO_KEY))
    writer = Writer(state, PostgresJournal(pool), WriterSettings(clock=clock, snapshot_every=20))
    signer = HeadSigning(HeadSigner(private_key(key.read_bytes()), signing_dir), writer, 3600)
    await writer.recover()
    writer.start()
    signer.start()
    for n in range(30):
        assert (await writer.submit("bets", "T01", f"R{n}", bets()))[0] == 201
        if writer.snapshots.task is not None:
            await writer.snapshots.task
    await writer.stop()
    await signer.stop()
    return writer


async def test_a_tail_cut_with_the_server_stopped_fails_verify_against_the_signed_head(
    pool: asyncpg.Pool,
    fresh_dsn: str,
    keys: tuple[Path, Path],
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    private, public = keys
    heads = tmp_path / "signed-heads"
    writer = await thirty_bets(pool, heads, private)
    signed = signed_heads(heads)
    assert [h.seq for h in signed] == [0, writer.seq]  # at start, and as it stopped
    assert signed[-1].hash == writer.head
    signed_args = {"signed_heads": heads, "public_key": public}
    assert await verify(fresh_dsn, **signed_args) == 0
    out = capsys.readouterr().out
    checkpoint = Checkpoint.parse(
        next(x for x in out.splitlines() if x.startswith("checkpoint: ")).split(": ")[1]
    )
    assert checkpoint.seq < writer.seq
    # Stopped, the tail is cut: the checkpoint still holds, the signed head does not.
    await rewrite_history(pool, "DELETE FROM journal WHERE seq > $1", writer.seq - 10)
    assert await verify(fresh_dsn, since=str(checkpoint)) == 0
    capsys.readouterr()
    assert await verify(fresh_dsn, since=str(checkpoint), **signed_args) == 1
    out = capsys.readouterr().out
    assert f"entry {writer.seq} is not in the journal" in out and "FAILED" in out
    expected = f"{writer.seq}:{writer.head}"
    assert await verify(fresh_dsn, expect_head=[expected]) == 1
    assert f"entry {writer.seq} is not in the journal" in capsys.readouterr().out


async def test_a_rewritten_entry_or_a_forged_signature_fails(
    pool: asyncpg.Pool,
    fresh_dsn: str,
    keys: tuple[Path, Path],
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    private, public = keys
    heads = tmp_path / "signed-heads"
    writer = await thirty_bets(pool, heads, private)
    assert await verify(fresh_dsn, expect_head=[f"{writer.seq}:{writer.head}"]) == 0
    assert await verify(fresh_dsn, expect_head=[f"{writer.seq}:{'0' * 64}"]) == 1
    assert f"entry {writer.seq} has another hash" in capsys.readouterr().out
    last = max(heads.iterdir())
    forged = read_signed_head(last)
    last.write_text(last.read_text().replace(forged.hash, "1" * 64))
    assert await verify(fresh_dsn, signed_heads=heads, public_key=public) == 1
    assert "signature does not verify" in capsys.readouterr().out
    assert await verify(fresh_dsn, expect_head=["12:nothex"]) == 2
    assert "--expect-head" in capsys.readouterr().err


async def test_the_server_signs_its_head_at_start_and_as_it_stops(
    pool: asyncpg.Pool, keys: tuple[Path, Path], tmp_path: Path
) -> None:
    private, _ = keys
    heads = tmp_path / "signed-heads"
    server = build_server(
        journal=PostgresJournal(pool), head_key=private.read_text(), signed_heads_dir=heads
    )
    app, writer = server.app, server.writer
    async with app.router.lifespan_context(app):
        await asyncio.sleep(0.1)
        # The head after the start's own entries (the parameters read, `config`, and the
        # demo floor's must-hit-by level's first draw, `arm`).
        assert [h.seq for h in signed_heads(heads)] == [2]
        assert (await writer.submit("bets", "T01", "R1", bets(writer.clock())))[0] == 201
    signed = signed_heads(heads)
    assert [h.seq for h in signed][-1] == writer.seq and signed[-1].hash == writer.head


async def test_without_a_key_the_server_runs_and_warns_once(
    pool: asyncpg.Pool, caplog: pytest.LogCaptureFixture
) -> None:
    server = build_server(journal=PostgresJournal(pool))
    app, writer = server.app, server.writer
    async with app.router.lifespan_context(app):
        assert (await writer.submit("bets", "T01", "R1", bets(writer.clock())))[0] == 201
    warned = [r for r in caplog.records if "no head signing key" in r.getMessage()]
    assert len(warned) == 1
