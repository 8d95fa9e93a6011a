"""What displays are shown: committed wins and meters, and whether events are recorded."""

from __future__ import annotations

import asyncio
import contextlib
from dataclasses import dataclass, field

from app.state.in_play_state import link_in_play
from app.state.views import award_row, has_pending, level_signs, meters
from app.writer.ports import Broadcast
from app.writer.position import Position
from jackpot.records import FINAL, PENDING, VOID, AwardRecord, ResetRecord


@dataclass(frozen=True, slots=True)
class Shown:
    """What displays are shown of a commit: its wins and each link's meter values."""

    wins: list[tuple[str, dict[str, object]]]  # (link, win message)
    meters: dict[str, dict[str, str]]  # link -> meter -> value
    # link -> what is out of play there (a `status` message when it changes)
    in_play: dict[str, dict[str, object]] = field(default_factory=dict)
    # link -> meter -> a must-hit-by level's "must hit by" and commitment (never its trigger)
    levels: dict[str, dict[str, dict[str, object]]] = field(default_factory=dict)
    # links retired (app/state/transfers.py): their screens are told and they leave
    retired: list[str] = field(default_factory=list)


class Announcer:
    """Shows displays what is committed; tells them when events cannot be recorded."""

    def __init__(self, position: Position, broadcast: Broadcast | None) -> None:
        self.position, self.broadcast = position, broadcast
        self.degraded = False  # the last commit or database probe failed
        self.waiters: dict[tuple[str, str], list[asyncio.Future[None]]] = {}
        # Awards displays were shown `pending` and no end of yet: a void of one is shown to
        # them (docs/design.md, the watermark: "jackpot pending" ends); screens know no other.
        self.on_screens: set[str] = set()

    def cannot_record(self) -> None:
        """A commit failed, or the database probe did (app/api/health.py): say so once, to
        displays (docs/design.md: tables void unseen rounds, 5.17) and to /health."""
        if not self.degraded:
            self.degraded = True
            if self.broadcast is not None:
                self.broadcast.status(None, "degraded", "jackpot system cannot record events")

    def recorded_again(self) -> None:
        """A commit succeeded, or the probe did (with no traffic, no commit would come)."""
        if self.degraded:
            self.degraded = False
            if self.broadcast is not None:
                self.broadcast.status(None, "ok", "events are recorded again")

    async def wait_final(self, table: str, round_id: str, wait_s: float) -> None:
        """Wait until the round has no pending meter award, or `wait_s` seconds."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + wait_s
        while has_pending(self.position.service, table, round_id):
            remaining = deadline - loop.time()
            if remaining <= 0:
                return
            future: asyncio.Future[None] = loop.create_future()
            self.waiters.setdefault((table, round_id), []).append(future)
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(future, remaining)

    def announce_recovered(self) -> None:
        """After recovery: show displays every link's meters and the awards still pending
        (docs/design.md, the watermark: screens show "jackpot pending" while one is)."""
        floor = self.position.service.floor
        pending = [award for link in floor.links for award in floor.pending_awards(link)]
        self.announce(set(floor.links), pending, [])

    def announce(
        self,
        links: set[str],
        claimed: list[AwardRecord],
        finalized: list[AwardRecord | ResetRecord],
    ) -> None:
        """Show displays entries that are committed, the state being the one they leave."""
        self.show(self.shown(links, claimed, finalized), finalized)

    def shown(
        self,
        links: set[str],
        claimed: list[AwardRecord],
        finalized: list[AwardRecord | ResetRecord],
    ) -> Shown:
        """What displays are to be shown of these entries, with the state as they leave it:
        an award claimed here `pending`, one made final here `final` (docs/design.md, Broadcast:
        each once, so a claim made final by the same entries is shown only `final`)."""
        if self.broadcast is None:
            return Shown([], {})
        retired = sorted(link for link in links if link in self.position.service.retired)
        links = links - set(retired)
        # Claimed and final here: shown below, once. Claimed and void here: never shown.
        wins = [(a.link, win(a)) for a in claimed if a.state == PENDING]
        wins += [
            (r.link, win(r)) for r in finalized if isinstance(r, AwardRecord) and r.state == FINAL
        ]
        # Shown pending, void now (5.20: paid to nobody): "jackpot pending" ends on screens.
        awards = self.position.service.floor.awards
        voided = (awards.get(award_id) for award_id in sorted(self.on_screens))
        wins += [(a.link, win(a)) for a in voided if a is not None and a.state == VOID]
        values = {
            link: {m["meter"]: m["value"] for m in meters(self.position.service, link)}
            for link in links
        }
        in_play = {link: link_in_play(self.position.service, link) for link in links}
        floor = self.position.service.floor
        signs = ((link, level_signs(floor.link(link))) for link in links)
        return Shown(
            wins, values, in_play, {link: shown for link, shown in signs if shown}, retired
        )

    def show(self, shown: Shown, finalized: list[AwardRecord | ResetRecord]) -> None:
        rounds = {(a.table, a.round) for a in finalized if isinstance(a, AwardRecord)}
        for key in rounds:
            for future in self.waiters.pop(key, []):
                if not future.done():
                    future.set_result(None)
        if self.broadcast is None:
            return
        for link, win in shown.wins:
            if win["state"] == PENDING:
                self.on_screens.add(str(win["award_id"]))
            else:
                self.on_screens.discard(str(win["award_id"]))
            self.broadcast.win(link, win)
        for link, values in shown.meters.items():
            self.broadcast.meters(link, values)
        for link, levels in shown.levels.items():
            self.broadcast.levels(link, levels)
        for link, info in shown.in_play.items():
            self.broadcast.in_play(link, info)
        for link in shown.retired:
            self.broadcast.retire(link)


def win(award: AwardRecord) -> dict[str, object]:
    row = award_row(award)
    return {
        "state": award.state,
        "award_id": award.id,
        "table": award.table,
        "round": award.round,
        "box": award.box,
        "meter": award.meter,
        "hand": award.hand,
        **({"amount": row["amount"]} if "amount" in row else {}),
        "dealt_at": row["dealt_at"],
        **({"reveal": row["reveal"]} if "reveal" in row else {}),
    }
