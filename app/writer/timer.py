"""The writer's timed entries: the watermark's finalize, pruning and expiry, each with the
server time, so that replay never reads the clock (docs/design.md, the watermark); and
which tables are heard: each table's last status poll (its heartbeat), and the silent
tables the timer suspends when the floor asks it to (rules 5.17, 5.18.2)."""

from __future__ import annotations

import secrets

from msgspec import UNSET

from app.state.entries import ArmEntry, ExpireEntry, FinalizeEntry, SuspendEntry
from app.state.floor_state import FloorState
from app.state.in_play_state import InPlayChanged, in_play_answer
from app.state.sealing import seal
from app.writer.group import Group
from app.writer.position import Position
from app.writer.writer_settings import WriterSettings
from jackpot.floor import FinalizeResult
from jackpot.in_play import TABLE
from jackpot.money import format_money
from jackpot.mystery import draw_trigger
from jackpot.mystery_levels import last_hit, unarmed
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
        if unarmed(floor):
            return 0.0  # a must-hit-by level waits for its draw
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
        self._arm(now, group)
        if self._finalize_due(now):
            self._finalize(now, group)
            # A must-hit-by hit stops finalising until the level's next draw: draw, go on.
            while self._arm(now, group):
                self._finalize(now, group)
        self._expire(now, group)
        self._suspend_silent(now, group)

    def _arm(self, now: int, group: Group) -> bool:
        """Draw a trigger for every must-hit-by level without one (docs/design.md): with
        `secrets`, journaled as its commitment, the trigger sealed (app/state/sealing.py)."""
        position = self.position
        service = position.service
        waiting = unarmed(service.floor)
        for link, meter, low, high in waiting:
            drawn = draw_trigger(low, high, secrets.randbelow, secrets.token_hex)
            text = f"{format_money(drawn.value)}|{drawn.nonce}"
            key = service.config.mystery_key
            hit = last_hit(service.floor, link, meter)
            shown = None if hit is None else hit.reveal
            revealed = UNSET if shown is None else f"{format_money(shown.trigger)}|{shown.nonce}"
            sealed = seal(key, drawn.commitment, text)
            entry = ArmEntry(now=now, link=link, meter=meter, commitment=drawn.commitment,
                             sealed=sealed, revealed=revealed)  # fmt: skip
            service.apply(entry)
            position.append(group.rows, position.row(entry, None, None, None))
            group.links.add(link)
        return bool(waiting)

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


# -- which tables are heard ----------------------------------------------------------


class Liveness:
    """When each table was last heard, by the server's clock. Kept in memory only (a poll
    every few seconds is no journal entry): a table not heard since this writer began
    leading counts from then, so a restart or a takeover flags no one at once."""

    def __init__(self, since: int) -> None:
        self.since = since
        self.heard: dict[str, int] = {}

    def hear(self, table: str, now: int) -> None:
        self.heard[table] = max(now, self.heard.get(table, now))

    def last(self, table: str) -> int:
        return self.heard.get(table, self.since)

    def silent(self, service: FloorState, now: int) -> list[str]:
        """The tables unheard longer than the floor's `table_silence_ms`."""
        silence = service.config.table_silence_ms
        return [t for t in sorted(service.config.tables) if now - self.last(t) > silence]

    def quiet_since(self, service: FloorState) -> dict[str, int]:
        """Each table not suspended as a whole: since when it is quiet, counting a
        supervisor's resumption as word from it (it resumes only by a supervisor, who
        is then given `table_silence_ms` for it to be heard again)."""
        resumed: dict[str, int] = {}
        for p in service.in_play.periods:
            if p.scope == TABLE and p.table is not None and p.until is not None:
                resumed[p.table] = max(p.until, resumed.get(p.table, p.until))
        active = service.in_play.active
        return {
            t: max(self.last(t), resumed.get(t, self.since))
            for t in sorted(service.config.tables)
            if (TABLE, t, 0) not in active
        }

    def due(self, service: FloorState) -> int | None:
        """When the next silent table is to be suspended (None: none, or not asked)."""
        if not service.config.suspend_silent_tables:
            return None
        quiet = self.quiet_since(service).values()
        return min(quiet) + service.config.table_silence_ms + 1 if quiet else None

    def suspensions(self, service: FloorState, now: int) -> list[SuspendEntry]:
        """The `suspend` entries of the tables silent now (by null: the writer's timer)."""
        if not service.config.suspend_silent_tables:
            return []
        silence = service.config.table_silence_ms
        return [
            SuspendEntry(
                now=now,
                by=None,
                link=None,
                table=table,
                boxes=None,
                reason=f"no word from the table for {now - since} ms "
                f"(table_silence_ms {silence}): rule 5.17",
            )  # fmt: skip
            for table, since in self.quiet_since(service).items()
            if now - since > silence
        ]
