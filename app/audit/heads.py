"""Heads the auditor holds outside the database: `jackpot verify --expect-head SEQ:HASH`
and the writer's signed heads (`--signed-heads DIR --public-key FILE`). The journal must
still hold each one's entry with its hash: one cut short or rewritten does not."""

from __future__ import annotations

import contextlib
import dataclasses
from dataclasses import dataclass
from pathlib import Path

from app.audit.findings import Discrepancy, Report
from app.config.floor_file import SHA256_RE
from app.store.journal import GENESIS, JournalSource
from app.store.signed_heads import SignedHeadError, public_key, signed_heads


@dataclass(frozen=True, slots=True)
class ExpectedHead:
    seq: int
    hash: str
    source: str  # where the auditor had it: "--expect-head", a signed head's file


def parse_expected(text: str) -> ExpectedHead:
    seq, _, head = text.strip().partition(":")
    if not seq.isdigit() or int(seq) < 1 or not SHA256_RE.fullmatch(head):
        raise ValueError(f"{text!r} is not SEQ:HASH (a seq from 1, a sha256 in lower-case hex)")
    return ExpectedHead(int(seq), head, "--expect-head")


def signed_expectations(
    directory: Path, key_file: Path, since_seq: int = 0
) -> tuple[list[ExpectedHead], list[Discrepancy]]:
    """The signed heads of `directory` to check: those from `since_seq` on and the last
    one; a head whose signature does not verify with the key is a discrepancy itself.
    SignedHeadError if the key or the directory cannot be read."""
    key = public_key(key_file.read_bytes())
    heads = signed_heads(directory)
    if not heads:
        raise SignedHeadError(f"{directory}: no signed heads")
    chosen = [h for h in heads[:-1] if h.seq >= since_seq] + [heads[-1]]
    expected, bad = [], []
    for head in chosen:
        source = f"signed head {head.file_name()}"
        if head.verifies(key):
            expected.append(ExpectedHead(head.seq, head.hash, source))
        else:
            what = f"{source}: its signature does not verify with the public key"
            bad.append(Discrepancy(head.seq, "signed head", what, head.signature, None))
    return expected, bad


async def check_heads(journal: JournalSource, expected: list[ExpectedHead]) -> list[Discrepancy]:
    """A discrepancy for every expected head whose entry the journal no longer holds, or
    holds with another hash."""
    found: list[Discrepancy] = []
    last = await journal.last()
    end = 0 if last is None else last.seq
    for head in expected:
        if head.seq == 0:  # signed on an empty journal: the chain's start
            if head.hash != GENESIS:
                what = f"{head.source}: an empty journal's head is the genesis hash"
                found.append(Discrepancy(0, "head", what, GENESIS, head.hash))
            continue
        rows = journal.read(head.seq - 1, batch=1)
        async with contextlib.aclosing(rows):  # type: ignore[type-var]
            row = await anext(rows, None)
        if row is None or row.seq != head.seq:
            what = (
                f"{head.source}: entry {head.seq} is not in the journal (it ends at seq {end}):"
                " entries were removed"
            )
            found.append(Discrepancy(head.seq, "head", what, None, head.hash))
        elif row.hash != head.hash:
            what = f"{head.source}: entry {head.seq} has another hash (the journal was rewritten)"
            found.append(Discrepancy(head.seq, "head", what, row.hash, head.hash))
    return found


def with_discrepancies(report: Report, found: list[Discrepancy]) -> Report:
    """The report with `found` added first; a run that fails them prints no checkpoint."""
    if not found:
        return report
    return dataclasses.replace(
        report,
        discrepancies=(*found, *report.discrepancies),
        discrepancy_count=report.discrepancy_count + len(found),
        checkpoint=None,
    )
