"""The writer's timed entries: the watermark's finalize, pruning and expiry, each with the
server time, so that replay never reads the clock (docs/design.md, the watermark)."""

from __future__ import annotations

from app.state.entries import ExpireEntry, FinalizeEntry
from app.state.in_play_views import InPlayChanged, in_play_answer
from app.writer.group import Group
from app.writer.liveness import Liveness
from app.writer.position import Position
from app.writer.writer_settings import WriterSettings
from jackpot.floor import FinalizeResult
from jackpot.records import AwardRecord

EXPIRE_BATCH = 1_000  # rounds named by one expire entry


class Timer:
    """When the writer must wake with no request, and the entries it then makes."""

    def __init__(self, position: Position, settings: WriterSettings) -> None:
        self.position, self.settings = position, settings
        self.last_finalize = 0  # the server time of the last finalize entry
        self.liveness = Liveness(settings.clock())

    def sleep_s(self) -> float | None:
        """How long the writer may wait for a request before a timed entry is due."""
        now = self.settings.clock()
        floor = self.position.service.floor
        due = floor.due_at()
        if any(link.timeline.heap for link in floor.links.values()):
            periodic = self.last_finalize + self.settings.finalize_every_ms
            due = periodic if due is None else min(due, periodic)
        if floor.done:
            prune = floor.done[0][0] + floor.retain_ms + 1
            due = prune if due is None else min(due, prune)
        expiry = floor.expire_due()
        if expiry is not None:
            due = expiry if due is None else min(due, expiry)
        silent = self.liveness.due(self.position.service)
        if silent is not None:
            due = silent if due is None else min(due, silent)
        if due is None:
            return None
        return max(0.0, (due - now) / 1000)

    def add_due(self, now: int, group: Group) -> None:
        """Apply the timed entries due at `now` and add their rows to the group."""
        if self._finalize_due(now):
            self._finalize(now, group)
        self._expire(now, group)
        self._suspend_silent(now, group)

    def _finalize_due(self, now: int) -> bool:
        floor = self.position.service.floor
        due = floor.due_at()
        if due is not None and now >= due:
            return True
        if floor.done and floor.done[0][0] < now - floor.retain_ms:
            return True  # settled rounds to prune
        pending = any(link.timeline.heap for link in floor.links.values())
        return pending and now - self.last_finalize >= self.settings.finalize_every_ms

    def _finalize(self, now: int, group: Group) -> None:
        position = self.position
        service = position.service
        result = service.apply(entry := FinalizeEntry(now=now))
        assert isinstance(result, FinalizeResult)
        self.last_finalize = now
        position.append(group.rows, position.row(entry, None, None, None))
        group.finalized.extend(result.finalized)
        service.uncommitted.update(r.id for r in result.finalized if isinstance(r, AwardRecord))
        group.links.update(r.link for r in result.finalized)

    def _expire(self, now: int, group: Group) -> None:
        """Rounds open longer than expire_after leave the open set (jackpot/expiry.py): an
        entry naming them. At most EXPIRE_BATCH an entry; the timer comes back at once for
        the rest."""
        position = self.position
        rounds = position.service.floor.expirable(now, EXPIRE_BATCH)
        if rounds:
            entry = ExpireEntry(now=now, rounds=[list(key) for key in rounds])
            position.service.apply(entry)
            position.append(group.rows, position.row(entry, None, None, None))

    def _suspend_silent(self, now: int, group: Group) -> None:
        """A table unheard longer than `table_silence_ms` is taken out of play when the
        floor asks for it (`suspend_silent_tables`): it cannot be told what is in play,
        so it may not take jackpot wagers (rule 5.17); a supervisor resumes it."""
        position = self.position
        for entry in self.liveness.suspensions(position.service, now):
            result = position.service.apply(entry)
            assert isinstance(result, InPlayChanged)
            position.append(group.rows, position.row(entry, None, None, in_play_answer(result)))
            if result.link is not None:
                group.links.add(result.link)
