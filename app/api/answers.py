"""What the routes answer, as OpenAPI schemas (the routes' `response_model`).

The answers are built by the views (app/state/views.py, operator_views.py) and sent as
they are, rendered by orjson: FastAPI does not validate or re-encode a Response a route
returns, so these models describe the answers and change none of their bytes. Money is
a decimal string, times are RFC 3339 text; a field marked "absent unless" is left out,
not null, when it does not apply.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, Field

MoneyText = str  # "1234.56": docs/api.md, money


def _absent(when: str) -> Any:
    return Field(default=None, description=f"absent unless {when}")


class MeterValue(BaseModel):
    link: str
    meter: str
    value: MoneyText


class DrawsAnswer(BaseModel):
    """Singapore Stud's draws when bets close (4.3-4.5)."""

    magic_card: str
    lucky_box: int
    lucky_dealer: bool


class BoxBetsAnswer(BaseModel):
    box: int
    jackpot: str = Field(description="accepted, returned, none...")
    contribution: MoneyText | None = _absent("the jackpot wager is accepted")
    reason: str | None = _absent("a wager is returned (its rule)")


class BetsAnswer(BaseModel):
    table: str
    round: str
    boxes: list[BoxBetsAnswer]
    meters: list[MeterValue]
    late: bool
    draws: DrawsAnswer | None = _absent("the game draws (Singapore Stud)")


class Hold(BaseModel):
    """An open round holding a pending meter award (docs/design.md "The watermark")."""

    table: str
    round: str
    open_since: str = Field(description="the round's closed_at")
    ends_by: str = Field(description="open_since + round_timeout_ms: it turns stale then")


class Award(BaseModel):
    """A meter award (`kind` meter, `share` of the meter) or a fixed one (its `amount`,
    final at once)."""

    box: int
    kind: str
    hand: str | None
    meter: str | None = _absent("kind is meter")
    share: str | None = _absent("kind is meter")
    state: str | None = Field(default=None, description="pending, final or void")
    late: bool | None = _absent("kind is meter")
    dealt_at: str | None = _absent("kind is meter")
    target: str | None = _absent("won by another hand than the player's (dealer...)")
    for_box: int | None = _absent("an envy bonus: the box whose hand won it")
    amount: MoneyText | None = _absent("final, or a fixed award")
    order: int | None = _absent("a final meter award")
    sequence: int | None = _absent("a final meter award")
    finalized_at: str | None = _absent("a final meter award")
    withheld: MoneyText | None = _absent("a meter award voided while pending")
    held_by: list[Hold] | None = _absent("a pending meter award, in GET on its round")
    final_by: str | None = _absent("a pending meter award, in GET on its round")


class OutcomeAnswer(BaseModel):
    table: str
    round: str
    awards: list[Award]
    late: bool


class ReversedBox(BaseModel):
    box: int
    contribution: MoneyText


class VoidAnswer(BaseModel):
    table: str
    round: str
    state: str
    reversed: list[ReversedBox]
    meters: list[MeterValue]


class RoundBox(BaseModel):
    box: int
    ante: MoneyText
    jackpot: str
    wager: MoneyText
    contribution: MoneyText
    reserve: MoneyText
    voided: bool
    jackpot_dealer: MoneyText | None = _absent("a dealer-hand wager was posted")
    player: str | None = _absent("the bets named the player")
    reason: str | None = _absent("the wager was returned (its rule)")


class RoundView(BaseModel):
    """A round in memory; one that has left it answers `archived: true` with the first
    answers of its events (`bets`, `outcome`, `void`) from the journal, its `state` and
    `awards`."""

    table: str
    round: str
    state: str
    awards: list[Award]
    link: str | None = None
    closed_at: str | None = None
    received_at: str | None = None
    late: bool | None = None
    stale: bool | None = None
    boxes: list[RoundBox] | None = None
    pending: bool | None = None
    draws: DrawsAnswer | None = _absent("the game draws (Singapore Stud)")
    hands: dict[str, Any] | None = _absent("the outcome is recorded: the hands as posted")
    void_reason: str | None = _absent("the round is void")
    archived: bool | None = _absent("the round has left memory")
    bets: BetsAnswer | None = _absent("archived")
    outcome: OutcomeAnswer | None = _absent("archived, with an outcome")
    void: VoidAnswer | None = _absent("archived and void")


class MeterView(BaseModel):
    link: str
    meter: str
    value: MoneyText
    final_value: MoneyText
    seed: MoneyText
    next_seed: MoneyText | None
    rate: str
    reserve_rate: str
    reserve: MoneyText
    final_reserve: MoneyText
    ceiling: MoneyText | None
    pending_awards: list[str]
    stale_rounds: list[str]
    must_hit_by: MoneyText | None = _absent("a must-hit-by level")
    must_hit_from: MoneyText | None = _absent("a must-hit-by level")
    commitment: str | None = _absent("a must-hit-by level: its trigger's, null awaiting a draw")
    meters: RegulatorMeters


class RegulatorMeters(BaseModel):
    """A link meter's lifetime meters (docs/api.md, the meter read)."""

    wagers: int
    wagered: MoneyText
    wagers_voided: int
    wagered_voided: MoneyText
    contributions_meter: MoneyText
    contributions_reserve: MoneyText
    overflow: MoneyText
    hits: int
    wins: MoneyText
    overflow_to_house: MoneyText
    overflow_to_meter: MoneyText
    overflow_from_meter: MoneyText
    exact: dict[str, str]


class SeedAnswer(BaseModel):
    link: str
    meter: str
    seed_before: MoneyText
    seed: MoneyText
    effective: str
    by: str
    reason: str
    at: str


class ResetAnswer(BaseModel):
    id: str
    link: str
    meter: str
    state: str
    requested_at: str
    by: str
    reason: str
    value_before: MoneyText | None = _absent("the reset is done")
    seed: MoneyText | None = _absent("the reset is done")
    from_reserve: MoneyText | None = _absent("the reset is done")
    from_house: MoneyText | None = _absent("the reset is done")
    to_reserve: MoneyText | None = _absent("the reset is done")


class CorrectionAnswer(BaseModel):
    id: str
    kind: str
    link: str
    meter: str
    amount: MoneyText
    value_before: MoneyText
    value_after: MoneyText
    at: str
    by: str
    reason: str
    table: str | None = _absent("void_round")
    round: str | None = _absent("void_round")


class Proposal(BaseModel):
    """A change held for dual control: `change` is the change as proposed."""

    id: str
    state: str = Field(description="proposed, approved or rejected")
    change: dict[str, Any]
    proposed_by: str
    proposed_at: str
    decided_by: str | None = _absent("decided")
    decided_at: str | None = _absent("decided")


class Changes(BaseModel):
    changes: list[Proposal]


class JournalHead(BaseModel):
    seq: int
    entries: int
    head: str
