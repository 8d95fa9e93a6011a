"""A journal entry as the core's command, and the bets' decisions and draws it records."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from jackpot.commands import (
    SEMANTICS,
    BoxWager,
    CloseBets,
    Command,
    Correct,
    Expire,
    Finalize,
    FixedAward,
    MeterClaim,
    RecordOutcome,
    ResetMeter,
    SetSeed,
    VoidRound,
)
from jackpot.money import Money
from tables.bets import BetDecision, Draws
from tables.cards import parse_card


def entry_command(entry: Mapping[str, Any], table_link: Callable[[str], str | None]) -> Command:
    """The core's command for a journal entry (its amounts are Money, its choices made);
    `table_link` gives a table's link (UnknownError for no such table)."""
    kind, now = entry["kind"], entry["now"]
    if kind == "bets":
        link = table_link(entry["table"])
        # The entry's amounts are Money already (integers in the journal's JSON).
        wagers = tuple(
            [BoxWager(d["box"], d["wager"], d["dealer_wager"]) for d in entry["decisions"]]
        )
        return CloseBets(entry["table"], entry["round"], link, entry["closed_at"], now, wagers)
    if kind == "outcome":
        claims = tuple(
            MeterClaim(c["box"], c["target"], c["hand"], c["share"], c["dealt_at"])
            for c in entry["claims"]
        )
        when = fixed_dealt_at(entry)
        fixed = tuple(
            FixedAward(
                f["box"], f["kind"], f["hand"], Money(f["amount"]), f["for_box"], f["target"],
                when(f),
            )
            for f in entry["fixed"]
        )  # fmt: skip
        return RecordOutcome(
            entry["table"], entry["round"], now, claims, fixed, entry_version(entry)
        )
    if kind == "void":
        boxes = entry["boxes"]
        return VoidRound(
            entry["table"],
            entry["round"],
            now,
            entry["reason"],
            None if boxes is None else tuple(boxes),
            entry_version(entry),
        )
    if kind == "finalize":
        return Finalize(now)
    if kind == "expire":
        return Expire(now, tuple((str(t), str(r)) for t, r in entry["rounds"]))
    if kind == "seed":
        return SetSeed(
            entry["link"],
            entry["meter"],
            Money(entry["seed"]),
            now,
            entry["by"],
            entry["reason"],
            entry_version(entry),
        )
    if kind == "reset":
        return ResetMeter(entry["link"], entry["meter"], now, entry["by"], entry["reason"])
    if kind == "correct":
        return Correct(
            entry["correction"], entry["link"], entry["meter"], now, entry["by"],
            entry["reason"], Money(entry["amount"]), entry["reset"], entry["table"],
            entry["round"], entry_version(entry),
        )  # fmt: skip
    raise ValueError(f"unknown entry kind {kind!r}")


def entry_version(entry: Mapping[str, Any]) -> int:
    """The rules an outcome, void, seed or correct entry replays by (docs/journal.md,
    versions): absent in entries written before issue 16, which replay as they were
    applied then."""
    version = entry.get("version", 1)
    if type(version) is not int or not 1 <= version <= SEMANTICS:
        raise ValueError(f"entry version {version!r} is not 1 to {SEMANTICS}")
    return version


def fixed_dealt_at(entry: Mapping[str, Any]) -> Callable[[Mapping[str, Any]], int]:
    """When the hand that won a fixed award was dealt, from the outcome entry: the
    dealer's for a dealer-hand award, the hitting box's for an envy bonus (4.7), else
    the box's own; the entry's server time if the entry has none (it always has)."""
    boxes = {b["box"]: b["dealt_at"] for b in entry["boxes"]}
    dealer = (entry.get("dealer") or {}).get("dealt_at")

    def when(f: Mapping[str, Any]) -> int:
        if f["target"] == "dealer":
            at = dealer
        else:
            at = boxes.get(f["box"] if f["for_box"] is None else f["for_box"])
        return int(entry["now"] if at is None else at)

    return when


def decision_entry(d: BetDecision) -> dict[str, Any]:
    return {
        "box": d.box,
        "status": d.status,
        "wager": d.wager,
        "dealer_wager": d.dealer_wager,
        "reason": d.reason,
        "ante": d.ante,
        "player": d.player,
    }


def entry_decision(d: Mapping[str, Any], *, voided: bool) -> BetDecision:
    if voided:  # a voided box's bets were returned (5.22): it takes no part in the outcome
        return BetDecision(d["box"], "none", Money(0), Money(0), "void", Money(0), d["player"])
    return BetDecision(
        d["box"],
        d["status"],
        Money(d["wager"]),
        Money(d["dealer_wager"]),
        d["reason"],
        Money(d["ante"]),
        d["player"],
    )


def draws_entry(draws: Draws) -> dict[str, Any]:
    return {
        "magic_card": str(draws.magic_card),
        "lucky_box": draws.lucky_box,
        "lucky_dealer": draws.lucky_dealer,
    }


def entry_draws(data: Mapping[str, Any]) -> Draws:
    return Draws(parse_card(data["magic_card"]), data["lucky_box"], data["lucky_dealer"])
