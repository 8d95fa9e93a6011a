"""What the journal's kinds and the answer views read and change of the floor's state.

`FloorData` is the shape of `app/state/floor_state.FloorState`, which applies entries through
the kinds (app/state/kinds.py) and answers through the views: the kinds and the views
depend on this shape, not on the service, so the state's modules import one way.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

from app.state.accounts import Accounts
from app.state.entries import Decision, Drawn, PostedBox
from app.state.gaming_day import GamingDay
from jackpot.config import LinkConfig, Timing
from jackpot.floor import Floor
from jackpot.in_play import InPlay
from tables.bets import TableSettings

if TYPE_CHECKING:
    from app.state.parameters_in_force import ParametersInForce
    from app.state.past_award import PastAward


@dataclass(frozen=True, slots=True)
class TableConfig:
    id: str
    link: str | None
    settings: TableSettings
    property: str | None = None  # the per-table report's roll-up (docs/api.md)


@dataclass(frozen=True, slots=True)
class FloorConfig:
    currency: str
    timing: Timing
    links: tuple[LinkConfig, ...]
    tables: Mapping[str, TableConfig]
    # A supervisor's change is only a proposal until a different supervisor approves it.
    dual_control: bool = False
    # Settled rounds stay in memory this long (then the journal answers for them).
    retain_ms: int = 900_000
    # A table may hold this many rounds with bets and no outcome or void; beyond it, its
    # bets are refused (409) until some settle, are void or expire (jackpot/expiry.py).
    max_open_rounds: int = 1_000
    # Opens the sealed triggers of must-hit-by levels (app/state/sealing.py); None: no key
    # (app/config/mystery_key.py), and a trigger can be neither sealed nor opened.
    mystery_key: str | None = None
    # A supervisor's payment above this amount needs a second operator's witness (None:
    # never); an award final and unpaid longer than pay_within_ms is overdue (metrics).
    witness_above: int | None = None
    pay_within_ms: int = 3_600_000
    # A table that has not asked what is in play for this long is flagged; with
    # suspend_silent_tables the writer's timer also takes it out of play (rule 5.17).
    table_silence_ms: int = 10_000
    suspend_silent_tables: bool = False
    # The console warns when a round has held meter awards past their hold this long.
    hold_warning_ms: int = 30_000
    # The floor's time zone, gaming day and shifts: the console's report presets.
    gaming_day: GamingDay = GamingDay()


@dataclass(slots=True)
class RoundExtras:
    """What the state keeps of a round beyond the core's record: for GET and audits.
    Its bets entry's records as they are (snapshots hold them as JSON objects)."""

    boxes: list[PostedBox]  # the bets as posted (money in micro-units)
    decisions: list[Decision]
    draws: Drawn | None
    hands: dict[str, Any] | None = None


class FloorData(Protocol):
    config: FloorConfig
    floor: Floor
    extras: dict[tuple[str, str], RoundExtras]
    idem: dict[str, str]
    proposals: dict[str, dict[str, Any]]
    audit: list[dict[str, Any]]
    uncommitted: set[str]
    accounts: Accounts
    payments: dict[str, dict[str, Any]]
    seq: int
    in_play: InPlay
    parameters: ParametersInForce
    retired: dict[str, dict[str, Any]]
    leaving: list[PastAward]  # the awards the last entry applied made leave memory

    def table(self, table: str) -> TableConfig: ...
