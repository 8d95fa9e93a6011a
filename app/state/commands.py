"""The commands a request hands to the writer: one class per table event and per
operator command, decoded once at the edge (app/api) and made an entry by its kind's
`prepare` (app/state/kinds.py). Money is in micro-units and times in ms, as in entries.

A table event's command is also what the journal's `body_sha256` covers (as JSON
builtins: app/writer/group.py `Submission.body_sha256`): its fields are the request
body's, money and times parsed.
"""

from __future__ import annotations

from typing import Any, ClassVar, Literal, TypeAlias

import msgspec
from msgspec import UNSET, UnsetType

from app.state.account_commands import AccountCommand
from app.state.entries import PostedBox, PostedDealer, PostedHand


class _Command(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    kind: ClassVar[str]


# -- a table's round events ----------------------------------------------------------


class BetsCommand(_Command, frozen=True):
    kind: ClassVar[str] = "bets"
    closed_at: int
    boxes: list[PostedBox]


class OutcomeCommand(_Command, frozen=True):
    kind: ClassVar[str] = "outcome"
    boxes: list[PostedHand]  # cards in upper case
    dealer: PostedDealer | None = None


class VoidCommand(_Command, frozen=True):
    kind: ClassVar[str] = "void"
    reason: str
    boxes: list[int] | None = None


# -- a supervisor's change of a meter, and dual control ------------------------------


class _MeterCommand(_Command, frozen=True, kw_only=True, tag_field="kind"):
    """A change of a meter: tagged with its kind (as a proposal records it), then its
    fields in the order a proposal shows them. `version`: the rules it is applied by
    (docs/journal.md, versions), absent in the entries of older servers."""


class SeedCommand(_MeterCommand, frozen=True, kw_only=True, tag="seed"):
    kind: ClassVar[str] = "seed"
    link: str
    meter: str
    seed: int
    reason: str
    version: int | UnsetType = UNSET


class ResetCommand(_MeterCommand, frozen=True, kw_only=True, tag="reset"):
    kind: ClassVar[str] = "reset"
    link: str
    meter: str
    reason: str
    reason_code: str | UnsetType = UNSET  # a listed reason (jackpot/reduction_reasons.py)


class CorrectCommand(_MeterCommand, frozen=True, kw_only=True, tag="correct"):
    kind: ClassVar[str] = "correct"
    version: int | UnsetType = UNSET
    correction: str  # adjust, hand_paid, void_round (5.24)
    link: str
    meter: str
    amount: int  # signed for adjust
    reset: bool
    table: str | None
    round: str | None
    reason: str
    reason_code: str | UnsetType = UNSET  # a listed reason, where it lowers the meter


MeterCommand: TypeAlias = SeedCommand | ResetCommand | CorrectCommand


# -- a supervisor takes a link, a table or boxes out of play, or back (5.17, 5.18) -----


class SuspendCommand(_MeterCommand, frozen=True, kw_only=True, tag="suspend"):
    kind: ClassVar[str] = "suspend"
    link: str | None
    table: str | None
    boxes: list[int] | None
    reason: str


class ResumeCommand(_MeterCommand, frozen=True, kw_only=True, tag="resume"):
    kind: ClassVar[str] = "resume"
    link: str | None
    table: str | None
    boxes: list[int] | None
    reason: str


InPlayCommand: TypeAlias = SuspendCommand | ResumeCommand


# -- money moved to another meter, and a link taken off the floor (docs/api.md) ---------


class TransferCommand(_MeterCommand, frozen=True, kw_only=True, tag="transfer"):
    kind: ClassVar[str] = "transfer"
    link: str
    meter: str
    to_link: str
    to_meter: str
    amount: int | Literal["above_seed", "all"]
    include_reserve: bool
    reason: str


class RetireCommand(_MeterCommand, frozen=True, kw_only=True, tag="retire"):
    kind: ClassVar[str] = "retire"
    link: str
    reason: str


class ProposeCommand(_Command, frozen=True):
    """A supervisor's change held until a second supervisor approves it."""

    kind: ClassVar[str] = "propose"
    change: MeterCommand | InPlayCommand | TransferCommand | RetireCommand

    def proposed(self) -> dict[str, Any]:
        """The change as the proposal (and its entry) records it: its kind, then its fields."""
        change: dict[str, Any] = msgspec.to_builtins(self.change)
        return change


class ApproveCommand(_Command, frozen=True):
    kind: ClassVar[str] = "approve"
    id: str


class RejectCommand(_Command, frozen=True):
    kind: ClassVar[str] = "reject"
    id: str
    reason: str


# -- payments: an award paid by a supervisor, witnessed, or paid at its table ---------


class PaidCommand(_Command, frozen=True):
    kind: ClassVar[str] = "paid"
    award: str
    amount: int
    method: str
    reference: str
    note: str


class PaidConfirmCommand(_Command, frozen=True):
    kind: ClassVar[str] = "paid_confirm"
    award: str


class TablePaidCommand(_Command, frozen=True):
    kind: ClassVar[str] = "table_paid"
    boxes: list[int]


class AcknowledgeCommand(_Command, frozen=True):
    """A supervisor has seen one of the console's alarms (it changes no money)."""

    kind: ClassVar[str] = "acknowledge"
    alarm: str
    note: str


# -- the parameters read at start (app/state/parameters.py) -------------------------


class ConfigCommand(_Command, frozen=True):
    """The floor file's parameters in canonical form, the file's path and sha256."""

    kind: ClassVar[str] = "config"
    params: dict[str, Any]
    path: str | None = None
    file_sha256: str | None = None
    by: str | None = None  # who made the change (`jackpot serve --changed-by`)


class ConfigDecisionCommand(_Command, frozen=True):
    """A supervisor's approval (`reason` None) or rejection of a parameters proposal."""

    kind: ClassVar[str] = "config_approve"
    id: str
    reason: str | None = None


class StartCommand(_Command, frozen=True):
    """The software identity of a writer that begins leading (app/ops/software.py)."""

    kind: ClassVar[str] = "start"
    software: dict[str, Any]
    host: str


Command: TypeAlias = (
    BetsCommand
    | OutcomeCommand
    | VoidCommand
    | SeedCommand
    | ResetCommand
    | CorrectCommand
    | ProposeCommand
    | ApproveCommand
    | RejectCommand
    | AccountCommand
    | PaidCommand
    | PaidConfirmCommand
    | TablePaidCommand
    | SuspendCommand
    | ResumeCommand
    | AcknowledgeCommand
    | ConfigCommand
    | ConfigDecisionCommand
    | StartCommand
    | TransferCommand
    | RetireCommand
)
