"""A commit the database refused because it does not follow the database's head: the
database lost entries this writer committed (a rollback under it) or holds another
history. The database is the record: the writer refuses what it holds, rebuilds from it,
and forgets the answers it remembers, so nothing it no longer holds is answered 200."""

from __future__ import annotations

import logging
from collections import OrderedDict
from typing import Protocol

from app.store.errors import ChainBroken
from app.store.journal import JournalRow
from app.writer.chain import GENESIS
from app.writer.group import Group

log = logging.getLogger("jackpot.writer")


class Rebuilds(Protocol):
    answers: OrderedDict[str, str]
    stats: dict[str, int]
    base: bytes
    base_point: tuple[int, str]
    since_base: list[JournalRow]
    since_base_size: int

    def durable_head(self) -> tuple[int, str]: ...
    def _drop(self, error: BaseException, group: Group) -> None: ...
    def _restore(self) -> None: ...
    async def recover(self) -> int: ...


async def refuse_and_rebuild(writer: Rebuilds, error: ChainBroken, group: Group) -> None:
    """The group and the one behind it get 503 (`_drop`, which marks the writer degraded);
    the state is rebuilt from the database's snapshot and journal at once."""
    seq, head = writer.durable_head()
    log.error(
        "journal continuity broken: this writer's head is seq %d (hash %s), the "
        "database's is seq %d (hash %s): the database lost or changed committed entries "
        "(a rollback?); refusing the group and rebuilding from the database",
        seq, head, error.found_seq, error.found_hash,
    )  # fmt: skip
    writer.stats["chain_broken"] = writer.stats.get("chain_broken", 0) + 1
    writer._drop(error, group)
    writer.answers.clear()
    try:
        replayed = await writer.recover()
    except Exception as failed:
        # Not rebuilt now: from nothing, the next group's resync replays the whole journal.
        log.error("rebuild after the broken chain failed (%s): replaying before the next", failed)
        writer.base, writer.base_point, writer.since_base = b"", (0, GENESIS), []
        writer.since_base_size = 0
        writer._restore()
        return
    log.error("rebuilt from the database after the broken chain: %d entries replayed", replayed)
