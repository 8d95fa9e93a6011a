"""JSON answers from the current state: rounds, awards and meters as docs/api.md shows them;
and what reads and signs show of a must-hit-by level: its range and commitment, never its
trigger before the hit; the hit's reveal (docs/design.md "Must-hit-by levels")."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, replace
from typing import Any

from msgspec import to_builtins

from app.state.shape import FloorData
from app.state.timefmt import format_time
from jackpot.commands import FixedAward
from jackpot.link import Link
from jackpot.money import RATE_SCALE, format_money
from jackpot.mystery_levels import MysteryAward, trigger_range
from jackpot.records import PENDING, AwardRecord, ResetRecord, RoundRecord
from tables.settle import KINDS


def share_text(share: int) -> str:
    """Rate(10000) -> '1.00', Rate(1000) -> '0.10' (docs/api.md)."""
    whole, frac = divmod(share, RATE_SCALE)
    text = f"{whole}.{frac:04d}".rstrip("0")
    return text + "0" * (2 - len(text.split(".")[1]))


def meter_award(award: AwardRecord) -> dict[str, Any]:
    data: dict[str, Any] = {
        "box": award.box,
        "kind": "meter",
        "hand": award.hand,
        "meter": award.meter,
        "share": share_text(award.share),
        "state": award.state,
        "late": award.late,
        "dealt_at": format_time(award.dealt_at),
    }
    if award.target != "player":
        data["target"] = award.target
    if award.state == "final":
        assert award.amount is not None
        data["amount"] = format_money(award.amount)
        data["order"] = award.order
        data["sequence"] = award.sequence
        data["finalized_at"] = format_time(award.finalized_at or 0)
    elif award.state == "void" and award.amount is not None:
        # Voided while pending, it took this at its place for nobody; it went back to
        # the meter (docs/design.md, voids). Not `amount`: nobody is paid it.
        data["withheld"] = format_money(award.amount)
    data.update(reveal_fields(award))  # a must-hit-by hit: its trigger, revealed
    return data


def as_committed(service: FloorData, award: AwardRecord) -> AwardRecord:
    """The award as the journal has it: pending while its finalize entry is uncommitted."""
    return replace(award, state=PENDING) if award.id in service.uncommitted else award


def award_row(award: AwardRecord) -> dict[str, Any]:
    """An award for listings and displays: where it was won, not only what."""
    return {
        "id": award.id,
        "link": award.link,
        "table": award.table,
        "round": award.round,
        **meter_award(award),
    }


@dataclass(frozen=True, slots=True)
class Listed:
    """An award of any kind as `GET /v1/awards` filters and orders it; `row` renders it."""

    kind: str
    link: str | None
    meter: str | None
    table: str
    round: str
    box: int
    dealt_at: int
    sequence: int  # a meter award's place on its link; 0 for a fixed award
    row: Callable[[], dict[str, Any]]

    def order(self) -> tuple[int, int, str, str, int, int]:
        return (
            self.dealt_at,
            self.sequence,
            self.table,
            self.round,
            self.box,
            KINDS.index(self.kind),
        )


def every_award(service: FloorData) -> Iterator[Listed]:
    """Every award the server decided: meter awards (all kept), the fixed awards of the
    rounds in memory, and those of pruned rounds (kept by the floor when it prunes)."""
    floor = service.floor
    for a in floor.awards.values():
        yield meter_listed(service, a)
    for rnd in floor.rounds.values():
        for f in rnd.fixed:
            yield fixed_listed(rnd.table, rnd.round, rnd.link, f.award, f.voided, rnd.closed_at)
    for p in floor.past_fixed:
        yield fixed_listed(p.table, p.round, p.link, p.award, p.voided, 0)


def meter_listed(service: FloorData, a: AwardRecord) -> Listed:
    def row() -> dict[str, Any]:
        return award_row(as_committed(service, a))

    return Listed(
        "meter", a.link, a.meter, a.table, a.round, a.box, a.dealt_at, a.sequence or 0, row
    )


def fixed_listed(
    table: str, round_id: str, link: str | None, f: FixedAward, voided: bool, closed_at: int
) -> Listed:
    dealt_at = closed_at if f.dealt_at is None else f.dealt_at

    def row() -> dict[str, Any]:
        data: dict[str, Any] = {
            "id": "/".join(
                [table, round_id, str(f.box), f.target, f.kind]
                + ([] if f.for_box is None else [str(f.for_box)])
            ),
            "link": link,
            "table": table,
            "round": round_id,
            "box": f.box,
            "kind": f.kind,
            "hand": f.hand,
            "amount": format_money(f.amount),
            # Fixed awards are final at once (docs/api.md); a void takes them back.
            "state": "void" if voided else "final",
            "dealt_at": format_time(dealt_at),
        }
        if f.for_box is not None:
            data["for_box"] = f.for_box
        if f.target != "player":
            data["target"] = f.target
        return data

    return Listed(f.kind, link, None, table, round_id, f.box, dealt_at, 0, row)


def round_awards(service: FloorData, rnd: RoundRecord) -> list[dict[str, Any]]:
    awards = [meter_award(as_committed(service, service.floor.awards[a])) for a in rnd.awards]
    for fixed in rnd.fixed:
        f = fixed.award
        item: dict[str, Any] = {
            "box": f.box,
            "kind": f.kind,
            "hand": f.hand,
            "amount": format_money(f.amount),
        }
        if f.for_box is not None:
            item["for_box"] = f.for_box
        if f.target != "player":
            item["target"] = f.target
        if fixed.voided:
            item["state"] = "void"
        awards.append(item)
    return sorted(awards, key=lambda a: (a["box"], a["kind"] != "meter"))


def meters(service: FloorData, link: str | None) -> list[dict[str, Any]]:
    if link is None:
        return []
    state = service.floor.link(link)
    return [
        {"link": link, "meter": meter.id, "value": format_money(value)}
        for meter, value in zip(state.config.meters, state.display_values(), strict=True)
    ]


def bets_answer(service: FloorData, table: str, round_id: str) -> dict[str, Any]:
    rnd = service.floor.round(table, round_id)
    extras = service.extras[(table, round_id)]
    records = rnd.boxes
    boxes = []
    # The boxes of a round mostly contribute the same (the same contributions, often the
    # very tuple: jackpot/contributions.py): each amount summed and formatted once.
    texts: dict[tuple[tuple[int, int], ...], str] = {}
    for decision in extras.decisions:
        box, status = decision.box, decision.status
        if status == "accepted":
            contributions = records[box].contributions
            text = texts.get(contributions)
            if text is None:
                text = texts[contributions] = format_money(sum([m for m, _ in contributions]))
            item: dict[str, Any] = {"box": box, "jackpot": status, "contribution": text}
        else:
            item = {"box": box, "jackpot": status}
        if decision.reason:
            item["reason"] = decision.reason
        boxes.append(item)
    answer: dict[str, Any] = {
        "table": table,
        "round": round_id,
        "boxes": boxes,
        "meters": meters(service, rnd.link),
        "late": rnd.late,
    }
    if extras.draws is not None:
        answer["draws"] = to_builtins(extras.draws)
    return answer


def outcome_answer(service: FloorData, table: str, round_id: str) -> dict[str, Any]:
    rnd = service.floor.round(table, round_id)
    return {
        "table": table,
        "round": round_id,
        "awards": round_awards(service, rnd),
        "late": rnd.outcome_late,
    }


def void_answer(
    service: FloorData, table: str, round_id: str, reversed_: list[tuple[int, int]]
) -> dict[str, Any]:
    rnd = service.floor.round(table, round_id)
    return {
        "table": table,
        "round": round_id,
        "state": rnd.state,
        "reversed": [
            {"box": box, "contribution": format_money(amount)} for box, amount in reversed_
        ],
        "meters": meters(service, rnd.link),
    }


def round_view(service: FloorData, table: str, round_id: str) -> dict[str, Any]:
    rnd = service.floor.round(table, round_id)
    extras = service.extras[(table, round_id)]
    boxes = []
    for posted, decision in zip(extras.boxes, extras.decisions, strict=True):
        record = rnd.boxes[posted.box]
        item: dict[str, Any] = {
            "box": posted.box,
            "ante": format_money(posted.ante),
            "jackpot": decision.status,
            "wager": format_money(posted.jackpot),
            "contribution": format_money(record.contribution),
            "reserve": format_money(record.reserve),
            "voided": record.voided,
        }
        if posted.jackpot_dealer:
            item["jackpot_dealer"] = format_money(posted.jackpot_dealer)
        if posted.player is not None:
            item["player"] = posted.player
        if decision.reason:
            item["reason"] = decision.reason
        boxes.append(item)
    view: dict[str, Any] = {
        "table": table,
        "round": round_id,
        "link": rnd.link,
        "state": rnd.state,
        "closed_at": format_time(rnd.closed_at),
        "received_at": format_time(rnd.received_at),
        "late": rnd.late,
        "stale": rnd.stale,
        "boxes": boxes,
        "awards": round_awards(service, rnd),
        "pending": has_pending(service, table, round_id),
    }
    if extras.draws is not None:
        view["draws"] = to_builtins(extras.draws)
    if extras.hands is not None:
        view["hands"] = _hands(extras.hands)
    if rnd.void_reason is not None:
        view["void_reason"] = rnd.void_reason
    return view


def _hands(hands: dict[str, Any]) -> dict[str, Any]:
    """The outcome as posted, its times as RFC 3339 text (kept as epoch ms inside)."""

    def timed(hand: dict[str, Any]) -> dict[str, Any]:
        at = hand.get("dealt_at")
        return {**hand, "dealt_at": None if at is None else format_time(at)}

    dealer = hands.get("dealer")
    return {
        **hands,
        "boxes": [timed(h) for h in hands["boxes"]],
        "dealer": None if dealer is None else timed(dealer),
    }


def has_pending(service: FloorData, table: str, round_id: str) -> bool:
    rnd = service.floor.rounds.get((table, round_id))
    return rnd is not None and any(
        service.floor.awards[a].state == PENDING or a in service.uncommitted for a in rnd.awards
    )


def reset_view(reset: ResetRecord) -> dict[str, Any]:
    data: dict[str, Any] = {
        "id": reset.id,
        "link": reset.link,
        "meter": reset.meter,
        "state": reset.state,
        "requested_at": format_time(reset.requested_at),
        "by": reset.by,
        "reason": reset.reason,
    }
    if reset.funding is not None and reset.value_before is not None:
        data["value_before"] = format_money(reset.value_before)
        data["seed"] = format_money(reset.funding.seed)
        data["from_reserve"] = format_money(reset.funding.from_reserve)
        data["from_house"] = format_money(reset.funding.from_house)
        data["to_reserve"] = format_money(reset.funding.to_reserve)
    return data


# -- must-hit-by levels --------------------------------------------------------------


def level_fields(link: Link, index: int) -> dict[str, Any]:
    """`must_hit_by`, `must_hit_from` and the armed trigger's `commitment` (null while the
    next draw is awaited); nothing for any other meter."""
    meter = link.meters[index]
    bounds = trigger_range(meter)
    if bounds is None:
        return {}
    return {
        "must_hit_from": format_money(bounds[0]),
        "must_hit_by": format_money(bounds[1]),
        "commitment": None if meter.trigger is None else meter.trigger.commitment,
    }


def level_signs(link: Link) -> dict[str, dict[str, Any]]:
    """Meter id -> what a sign shows of each must-hit-by level of the link (its range and
    commitment: `level_fields`); the link's other meters are not there."""
    return {
        meter.config.id: fields
        for i, meter in enumerate(link.meters)
        if (fields := level_fields(link, i))
    }


def reveal_fields(award: AwardRecord) -> dict[str, Any]:
    """A must-hit-by award's reveal: what anyone needs to recompute its commitment."""
    if not isinstance(award, MysteryAward) or award.reveal is None:
        return {}
    reveal = award.reveal
    return {
        "reveal": {
            "commitment": reveal.commitment,
            "trigger": format_money(reveal.trigger),
            "nonce": reveal.nonce,
            "must_hit_from": format_money(reveal.low),
            "must_hit_by": format_money(reveal.high),
        }
    }
