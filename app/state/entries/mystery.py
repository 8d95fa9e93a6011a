"""The entry of a must-hit-by level's draw: its commitment in clear, its trigger sealed."""

from __future__ import annotations

from typing import ClassVar

from msgspec import UNSET, UnsetType

from app.state.entries.base import Base, EntryError
from app.state.sealing import SealError, unseal
from jackpot.commands import ArmTrigger
from jackpot.money import MoneyError, parse_money


class ArmEntry(Base, tag="arm", kw_only=True, frozen=True):
    """The writer drew a trigger for a must-hit-by level (docs/design.md)."""

    kind: ClassVar[str] = "arm"
    link: str
    meter: str
    commitment: str  # sha256("<trigger>|<nonce>"), hex: published
    sealed: str  # "<trigger>|<nonce>" sealed with the writers' key (app/state/sealing.py)
    # The level's previous "<trigger>|<nonce>" in clear, once it was hit: anyone checks it
    # against the previous arm entry's commitment (`jackpot check-commitment`).
    revealed: str | UnsetType = UNSET

    def command(self, key: str | None) -> ArmTrigger:
        try:
            trigger, _, nonce = unseal(key, self.commitment, self.sealed).partition("|")
            revealed = None
            if not isinstance(self.revealed, UnsetType):
                shown, _, shown_nonce = self.revealed.partition("|")
                revealed = (parse_money(shown), shown_nonce)
            return ArmTrigger(
                self.link, self.meter, self.now, parse_money(trigger), nonce, revealed
            )
        except (SealError, ValueError, MoneyError) as error:
            raise EntryError(f"arm {self.link}/{self.meter}: {error}") from None
