"""The operators' entries: meter changes (seed, reset, correct) and dual control."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar, TypeAlias

import msgspec
from msgspec import UNSET, Struct, UnsetType

from app.state.entries.base import Base, EntryError, Version, version_of
from app.state.entries.suspensions import ResumeChange, SuspendChange
from app.state.entries.transfers import RetireChange, TransferChange
from jackpot.commands import Correct, ResetMeter, SetSeed
from jackpot.money import Money

# -- operators' changes: as proposed (dual control), and as entries ------------------


class Change(Struct, frozen=True, forbid_unknown_fields=True, tag_field="kind", kw_only=True):
    """A supervisor's change of a meter: the fields an entry of its kind has besides
    `now` and `by` (a proposal holds it until a second supervisor approves it)."""

    kind: ClassVar[str]
    link: str
    meter: str
    reason: str

    def entry(self, now: int, by: str) -> OperatorEntry:
        """The change as its entry, applied at `now` by `by`."""
        data = {**msgspec.to_builtins(self), "now": now, "by": by}
        entry: OperatorEntry = msgspec.convert(data, OperatorEntry, strict=True)
        return entry


class SeedChange(Change, tag="seed", kw_only=True, frozen=True):
    kind: ClassVar[str] = "seed"
    seed: int
    version: Version | UnsetType = UNSET


class ResetChange(Change, tag="reset", kw_only=True, frozen=True):
    kind: ClassVar[str] = "reset"
    # A listed reason (jackpot/reduction_reasons.py); absent in older servers' entries.
    reason_code: str | UnsetType = UNSET


class CorrectChange(Change, tag="correct", kw_only=True, frozen=True):
    kind: ClassVar[str] = "correct"
    correction: str  # adjust, hand_paid, void_round (5.24)
    amount: int  # signed for adjust
    reset: bool
    table: str | None
    round: str | None
    version: Version | UnsetType = UNSET
    reason_code: str | UnsetType = UNSET  # as a reset's


class SeedEntry(SeedChange, tag="seed", kw_only=True, frozen=True):
    now: int
    by: str

    def command(self) -> SetSeed:
        return SetSeed(
            self.link, self.meter, Money(self.seed), self.now, self.by, self.reason,
            version_of(self.version),
        )  # fmt: skip


class ResetEntry(ResetChange, tag="reset", kw_only=True, frozen=True):
    now: int
    by: str

    def command(self) -> ResetMeter:
        return ResetMeter(self.link, self.meter, self.now, self.by, self.reason)


class CorrectEntry(CorrectChange, tag="correct", kw_only=True, frozen=True):
    now: int
    by: str

    def command(self) -> Correct:
        return Correct(
            self.correction, self.link, self.meter, self.now, self.by, self.reason,
            Money(self.amount), self.reset, self.table, self.round, version_of(self.version),
        )  # fmt: skip


class ProposeEntry(Base, tag="propose", kw_only=True, frozen=True):
    kind: ClassVar[str] = "propose"
    by: str
    change: dict[str, Any]  # as proposed: `proposed` reads it

    def proposed(self) -> Proposable:
        return change_of(self.change, "change")


Proposable: TypeAlias = (
    SeedChange | ResetChange | CorrectChange | SuspendChange | ResumeChange | TransferChange
    | RetireChange
)  # fmt: skip
_CHANGES: dict[Any, type[Proposable]] = {
    "seed": SeedChange,
    "reset": ResetChange,
    "correct": CorrectChange,
    "suspend": SuspendChange,
    "resume": ResumeChange,
    "transfer": TransferChange,
    "retire": RetireChange,
}


def change_of(data: Mapping[str, Any], where: str) -> Proposable:
    """A proposed change (its `kind` and fields): fields its kind has not were ignored by
    the servers that journaled and applied it, and still are; the proposal keeps them."""
    change = _CHANGES.get(data.get("kind"))
    if change is None:
        raise EntryError(
            f"{where}: kind {data.get('kind')!r} is not seed, reset, correct, suspend, "
            "resume, transfer or retire"
        )
    known = {k: v for k, v in data.items() if k == "kind" or k in change.__struct_fields__}
    try:
        return msgspec.convert(known, change, strict=True)
    except msgspec.ValidationError as error:
        raise EntryError(f"{where} ({data['kind']}): {error}") from None


class ApproveEntry(Base, tag="approve", kw_only=True, frozen=True):
    kind: ClassVar[str] = "approve"
    by: str
    id: str


class RejectEntry(Base, tag="reject", kw_only=True, frozen=True):
    kind: ClassVar[str] = "reject"
    by: str
    id: str
    reason: str


OperatorEntry: TypeAlias = SeedEntry | ResetEntry | CorrectEntry
