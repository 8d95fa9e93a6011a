"""What reads and signs show of a must-hit-by level: its range and commitment, never its
trigger before the hit; the hit's reveal (docs/design.md "Must-hit-by levels")."""

from __future__ import annotations

from typing import Any

from jackpot.link import Link
from jackpot.money import format_money
from jackpot.mystery_levels import MysteryAward, trigger_range
from jackpot.records import AwardRecord


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
