"""What the journal's kinds and the answer views read and change of the floor's state.

`FloorData` is the shape of `app/state/floor_state.Service`, which applies entries through
the kinds (app/state/kinds.py) and answers through the views: the kinds and the views
depend on this shape, not on the service, so the state's modules import one way.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

from app.state.entries import Decision, Drawn, PostedBox
from jackpot.config import LinkConfig, Timing
from jackpot.floor import Floor
from tables.bets import TableSettings

if TYPE_CHECKING:
    from app.state.parameters import ParametersInForce


@dataclass(frozen=True, slots=True)
class TableConfig:
    id: str
    link: str | None
    settings: TableSettings


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
    parameters: ParametersInForce
    applied: int

    def table(self, table: str) -> TableConfig: ...
