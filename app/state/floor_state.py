"""The application state: the jackpot Floor plus what the tables tell us, driven by entries.

Every accepted request becomes one journal entry (app/state/entries.py): its kind's
`prepare` checks it against the rules and the state and builds its entry without changing
anything; `apply` applies an entry (by its kind: app/state/kinds.py). The writer calls
both; recovery calls only `apply`, so a replayed entry never re-derives a result from
configuration that may since have changed (the draws, the accepted wagers and the claims
are all in the entry).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import msgspec

from app.state.accounts import Accounts
from app.state.entries import Entry, entry_from_dict
from app.state.entries import idempotency_key as idempotency_key
from app.state.kinds import KINDS
from app.state.parameters_in_force import ParametersInForce
from app.state.past_award import PastAward
from app.state.shape import FloorConfig as FloorConfig
from app.state.shape import RoundExtras as RoundExtras
from app.state.shape import TableConfig as TableConfig
from jackpot.errors import UnknownError
from jackpot.floor import Floor, Result
from jackpot.in_play import InPlay


@dataclass(slots=True)
class FloorState:
    config: FloorConfig
    floor: Floor = field(init=False)
    extras: dict[tuple[str, str], RoundExtras] = field(default_factory=dict)
    # (table|round|kind) -> sha256 of the body, for the rounds in memory; the journal's
    # unique key answers for older ones.
    idem: dict[str, str] = field(default_factory=dict)
    proposals: dict[str, dict[str, Any]] = field(default_factory=dict)
    audit: list[dict[str, Any]] = field(default_factory=list)
    # Meter awards made final by a finalize entry that is applied but not yet committed
    # (the writer applies a group while the one before is being committed): answers and
    # views show them pending until it is, so that no table is told a final amount that a
    # failed commit would take back. Kept by the writer; empty in a rebuilt service.
    uncommitted: set[str] = field(default_factory=set)
    # Operator accounts, personal tokens, tables' keys (app/state/accounts.py).
    accounts: Accounts = field(default_factory=Accounts)
    # Award id -> its payment (app/state/payments.py), as JSON builtins (snapshots).
    payments: dict[str, dict[str, Any]] = field(default_factory=dict)
    # The journal seq of the last entry applied: every entry is applied here, in seq
    # order, so a payment knows its own entry's seq (the payout slip names it).
    seq: int = 0
    # What is out of play, and every period it was (docs/design.md, "In play").
    in_play: InPlay = field(default_factory=InPlay)
    # The parameters the journal put in force (app/state/parameters.py).
    parameters: ParametersInForce = field(default_factory=ParametersInForce)
    # Retired links -> when, by whom, why (app/state/transfers.py): off the floor for good.
    retired: dict[str, dict[str, Any]] = field(default_factory=dict)
    # The awards the last entry applied made leave memory (app/state/past_awards.py), for
    # the writer to write beside its journal row; not part of the state (not snapshotted).
    leaving: list[PastAward] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.floor = Floor(self.config.links, self.config.timing, self.config.retain_ms)

    def table(self, table: str) -> TableConfig:
        try:
            return self.config.tables[table]
        except KeyError:
            raise UnknownError(f"no table {table!r}", ("table",)) from None

    # -- apply: the only way state changes (live and on replay) ------------------------

    def apply(self, entry: Entry | Mapping[str, Any]) -> Result:
        """Apply one entry (a journal entry's JSON object is decoded first: EntryError if
        it is not one). Atomic: a refused entry (JackpotError) changes nothing."""
        typed = entry if isinstance(entry, msgspec.Struct) else entry_from_dict(entry)
        self.leaving = []
        result = KINDS[typed.kind].apply(self, typed)
        self.seq += 1
        return result
