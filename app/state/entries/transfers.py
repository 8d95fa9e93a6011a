"""The entries that move money to another meter and take a link off the floor."""

from __future__ import annotations

from typing import ClassVar, Literal

from msgspec import Struct

from app.state.entries.base import Base
from jackpot.commands import TransferMoney
from jackpot.money import Money


class TransferChange(Struct, frozen=True, forbid_unknown_fields=True, kw_only=True,
                     tag_field="kind", tag="transfer"):  # fmt: skip
    """A transfer as proposed: always under dual control, it is journaled only inside its
    `propose` entry and applied by the `approve` of a second supervisor. `amount`: money
    in micro-units, or "above_seed" or "all", decided when it is approved."""

    kind: ClassVar[str] = "transfer"
    link: str
    meter: str
    to_link: str
    to_meter: str
    amount: int | Literal["above_seed", "all"]
    include_reserve: bool
    reason: str

    def command(self, now: int, *, below_seed: bool) -> TransferMoney:
        amount = self.amount if isinstance(self.amount, str) else Money(self.amount)
        return TransferMoney(
            self.link, self.meter, self.to_link, self.to_meter, amount,
            self.include_reserve, below_seed, now,
        )  # fmt: skip


class RetireChange(Struct, frozen=True, forbid_unknown_fields=True, kw_only=True,
                   tag_field="kind", tag="retire"):  # fmt: skip
    """A retirement as proposed (dual control): its entry's fields but `now` and `by`."""

    kind: ClassVar[str] = "retire"
    link: str
    reason: str

    def entry(self, now: int, by: str) -> RetireEntry:
        return RetireEntry(now=now, by=by, link=self.link, reason=self.reason)


class RetireEntry(Base, tag="retire", kw_only=True, frozen=True):
    """The link leaves the floor: it takes no bets, displays and the floor view drop it;
    its history stays in the journal and the reports."""

    kind: ClassVar[str] = "retire"
    by: str
    link: str
    reason: str
