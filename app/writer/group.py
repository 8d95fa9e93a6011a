"""A request handed to the writer, and the group of requests committed together."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import msgspec

from app.state.commands import Command
from app.store.journal import JournalRow, body_sha256
from app.writer.ports import StagedCounts
from app.writer.refusals import Conflict
from jackpot.records import AwardRecord, ResetRecord

# An answer: the JSON text the journal records with the entry, or a dict built now.
Reply = dict[str, Any] | str
# How to answer an applied request once its group is committed.
AnswerOnCommit = Callable[[], tuple[int, Reply]]


@dataclass(slots=True)
class Submission:
    kind: str
    table: str | None
    round: str | None
    command: Command | None  # None: the writer's own stop, which no one submits
    by: str | None
    future: asyncio.Future[tuple[int, Reply]]
    # Refused, for a round not in memory: it may be a late retry of a recorded event,
    # which `submit` asks the journal about (the commit loop never waits for that).
    may_be_recorded: bool = False

    @property
    def idem_key(self) -> str | None:
        if self.table is None or self.round is None:
            return None
        return f"{self.table}|{self.round}|{self.kind}"

    def body_sha256(self) -> str:
        """What a retry's body is compared by: the hash of its command as JSON builtins."""
        return body_sha256({} if self.command is None else msgspec.to_builtins(self.command))

    def conflict(self) -> Conflict:
        return Conflict(
            f"{self.kind} of round {self.round!r} was already posted with a different body"
        )


@dataclass(slots=True)
class Group:
    """Requests applied to the state, answered once their journal rows are committed."""

    rows: list[JournalRow] = field(default_factory=list)
    done: list[tuple[Submission, AnswerOnCommit]] = field(default_factory=list)
    refused: list[tuple[Submission, Exception]] = field(default_factory=list)
    claimed: list[AwardRecord] = field(default_factory=list)
    finalized: list[AwardRecord | ResetRecord] = field(default_factory=list)
    links: set[str] = field(default_factory=set)
    staged: StagedCounts | None = None  # the metrics' counts, taken once the group is applied
    # Resolved True once committed, False if not (a snapshot of the state with these rows
    # applied is kept only if they are committed); made when a snapshot asks for it.
    committed: asyncio.Future[bool] | None = None

    def subs(self) -> list[Submission]:
        return [sub for sub, _ in self.done] + [sub for sub, _ in self.refused]

    def merge(self, later: Group) -> None:
        self.rows += later.rows
        self.done += later.done
        self.refused += later.refused
        self.claimed += later.claimed
        self.finalized += later.finalized
        self.links |= later.links
        if self.staged is None:
            self.staged = later.staged
        elif later.staged is not None:
            self.staged.merge(later.staged)
        assert later.committed is None  # asked for only of the groups waiting to commit

    def outcome(self) -> asyncio.Future[bool]:
        if self.committed is None:
            self.committed = asyncio.get_running_loop().create_future()
        return self.committed

    def resolve(self, committed: bool) -> None:
        if self.committed is not None and not self.committed.done():
            self.committed.set_result(committed)
