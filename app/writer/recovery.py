"""Back to what the journal holds: the state rebuilt at start, and, after a failed commit,
the rows the journal has beyond ours (a COMMIT that landed though it failed)."""

from __future__ import annotations

import gc

from app.store.continuity import check_base
from app.store.journal import Journal
from app.store.past_award_check import Rebuild
from app.writer.announcer import Announcer
from app.writer.group import Group
from app.writer.position import Position
from jackpot.floor import FinalizeResult, OutcomeResult
from jackpot.snapshot import SnapshotWithoutMeters


class Recovery:
    """Rebuilds the state from the journal: whole at start, its tail after a failure."""

    def __init__(self, position: Position, journal: Journal, announcer: Announcer) -> None:
        self.position, self.journal, self.announcer = position, journal, announcer
        # A commit failed: the journal's head is checked before the next one (`resync`).
        self.unsure = False

    async def recover(self) -> int:
        """State = latest snapshot + every journal entry after it. Returns entries replayed."""
        position = self.position
        snapshot = await self.journal.latest_snapshot()
        # The snapshot is also the base to rebuild from if a commit fails: no second
        # dump of the whole state at start.
        position.start_from(b"" if snapshot is None else snapshot[1])
        # Recovery builds many long-lived objects and no garbage cycles: the cyclic
        # collector would walk the growing heap again and again for nothing.
        gc.disable()
        try:
            try:
                position.restore()
            except SnapshotWithoutMeters:
                # Stored before the regulator's meters were kept: their lifetime values
                # come only from the whole journal (the next snapshot carries them).
                position.start_from(b"")
                position.restore()
            await check_base(self.journal, position.seq, position.head)
            replayed = 0
            # The awards the replayed entries make leave memory: the table must hold them.
            rebuild = Rebuild(self.journal)
            async for row in self.journal.read(position.seq):
                position.replay(row)
                position.keep((row,))
                replayed += 1
                if position.service.leaving:
                    await rebuild.add(position.service.leaving)
                    position.service.leaving = []
            await rebuild.finish()
        finally:
            gc.enable()
        return replayed

    def restore_unsure(self) -> None:
        """A commit failed: back to the last durable point; the journal may hold more."""
        self.position.restore()
        self.unsure = True

    async def resync(self) -> None:
        """Replay what the journal holds beyond our head, and show it to displays."""
        position = self.position
        last = await self.journal.last()
        if last is not None and last.seq > position.seq:
            # Rows of a commit that landed though it failed: shown now, as their commit
            # would have shown them (docs/design.md, Broadcast: a win is shown final once).
            landed = Group()
            async for row in self.journal.read(position.seq):
                result = position.replay(row)
                if isinstance(result, OutcomeResult):
                    landed.claimed.extend(result.awards)
                elif isinstance(result, FinalizeResult):
                    landed.finalized.extend(result.finalized)
                position.keep((row,))
            floor = position.service.floor
            self.announcer.announce(set(floor.links), landed.claimed, landed.finalized)
        self.unsure = False
