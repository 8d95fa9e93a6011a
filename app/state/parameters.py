"""The parameters in force: the floor's money parameters, timings and who may do what, as
the journal records them (`config` entries, docs/journal.md), and what a change does.

The parameters are the floor file in canonical form (money in micro-units, rates over
10,000: `app/config/floor_parameters.py`). Each entry is applied under the parameters in
force at its place in the journal, so an edit of the file reprices nothing already
recorded; the state keeps them (and snapshots carry them) so that recovery, the standby
and `jackpot verify` need no floor file.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterator, Mapping
from typing import Any

from app.state.gaming_day import GamingDay
from app.state.shape import FloorConfig, FloorData, TableConfig
from jackpot.canonical import canonical_json
from jackpot.config import LinkConfig, MeterConfig, Timing
from jackpot.errors import StateConflictError
from jackpot.floor import Floor
from jackpot.link import Link
from jackpot.money import Money, Rate, format_money
from jackpot.records import OPEN
from tables.bets import TableSettings
from tables.games import game

# What dual control holds for a second supervisor: every parameter that prices a wager
# or pays an award, and dual control itself (turning it off is a change like the others).
_MONEY_TABLE_FIELDS = (
    "game", "link", "boxes", "jackpot_wager", "pay_table", "fold_keeps_jackpot",
    "lucky_dealer_odds",
)  # fmt: skip


class ParametersRefused(StateConflictError):
    """A change of the parameters the state forbids: every problem, one a line."""

    def __init__(self, problems: list[str]) -> None:
        super().__init__("\n".join(problems))
        self.problems = problems


class ParametersUnchanged(StateConflictError):
    """The parameters offered are those in force (or the ones waiting for approval)."""


def parameters_sha256(params: Mapping[str, Any]) -> str:
    """The sha256 of the parameters' canonical JSON (docs/journal.md), lowercase hex."""
    return hashlib.sha256(canonical_json(params).encode("utf-8")).hexdigest()


def config_of(params: Mapping[str, Any], mystery_key: str | None = None) -> FloorConfig:
    """The state's configuration from recorded parameters (as app/config/floor_config.py
    makes it from the floor file: a test holds the two together). The mystery key is no
    parameter (a secret kept out of the journal): the caller gives the one it holds."""
    links = tuple(
        LinkConfig(
            id=link["id"],
            name=link.get("name") or link["id"],
            meters=tuple(
                MeterConfig(
                    m["id"],
                    Money(m["seed"]),
                    Rate(m["rate"]),
                    Rate(m["reserve_rate"]),
                    _money(m.get("ceiling")),
                    m.get("name") or m["id"],
                    must_hit_by=_money(m.get("must_hit_by")),
                    must_hit_from=_money(m.get("must_hit_from")),
                    overflow_to=m.get("overflow_to") or "reserve",
                )
                for m in link["meters"]
            ),
        )
        for link in params.get("links", ())
    )
    tables = {}
    for t in params.get("tables", ()):
        settings = TableSettings(
            game=game(t["game"], t.get("pay_table") or {}),
            prescribed_wager=Money(t.get("jackpot_wager") or 0),
            boxes=t["boxes"],
            fold_keeps_jackpot=t.get("fold_keeps_jackpot"),
            lucky_dealer_odds=t.get("lucky_dealer_odds") or 10,
        )
        tables[t["id"]] = TableConfig(t["id"], t.get("link"), settings, t.get("property"))
    round_timeout = params.get("round_timeout_ms", 180_000)
    timing = Timing(
        params.get("hold_ms", 2_000),
        round_timeout,
        params.get("max_clock_skew_ms", 2_000),
        params.get("expire_after", 10) * round_timeout,
    )
    return FloorConfig(
        params["currency"],
        timing,
        links,
        tables,
        bool(params.get("dual_control", False)),
        retain_ms=params.get("retain_ms", 900_000),
        max_open_rounds=params.get("max_open_rounds", 1_000),
        mystery_key=mystery_key,
        witness_above=_money(params.get("witness_above")),
        pay_within_ms=params.get("pay_within_ms", 3_600_000),
        table_silence_ms=params.get("table_silence_ms", 10_000),
        suspend_silent_tables=bool(params.get("suspend_silent_tables", False)),
        hold_warning_ms=params.get("hold_warning_ms", 30_000),
        gaming_day=GamingDay(
            params.get("time_zone", "UTC"),
            params.get("gaming_day_start", "06:00"),
            tuple(params.get("shifts", ("06:00", "14:00", "22:00"))),
        ),
    )


def _money(value: Any) -> Money | None:
    return None if value is None else Money(value)


# -- what changed ----------------------------------------------------------------------


def flatten(params: Mapping[str, Any]) -> dict[str, Any]:
    """Every parameter by its path: `links[stud].meters[major].rate`, `hold_ms`, ...
    Lists of sections are keyed by their `id` (operators: `name`), not their place."""
    flat: dict[str, Any] = {}
    _flatten(params, "", flat)
    return flat


def _flatten(node: Any, path: str, flat: dict[str, Any]) -> None:
    if isinstance(node, Mapping):
        if not node and path:
            flat[path] = {}
        for key, value in node.items():
            _flatten(value, f"{path}.{key}" if path else str(key), flat)
    elif isinstance(node, list) and node and all(isinstance(x, Mapping) for x in node):
        for item in node:
            key = "id" if "id" in item else "name"
            rest = {k: v for k, v in item.items() if k != key}
            _flatten(rest, f"{path}[{item.get(key)}]", flat)
    else:
        flat[path] = node


def differences(before: Mapping[str, Any] | None, after: Mapping[str, Any]) -> list[dict[str, Any]]:
    """One row per parameter changed, added or removed: `parameter`, `before`, `after`
    (null where it is absent). Against no recorded parameters, nothing is a change."""
    if before is None:
        return []
    old, new = flatten(before), flatten(after)
    return [
        {"parameter": path, "before": old.get(path), "after": new.get(path)}
        for path in sorted(old.keys() | new.keys())
        if old.get(path) != new.get(path)
    ]


def touches_money(changes: list[dict[str, Any]]) -> bool:
    """Whether dual control holds this change for a second supervisor (docs/operations.md)."""
    for change in changes:
        path: str = change["parameter"]
        if path.startswith(("links", "currency", "dual_control")):
            return True
        if path.startswith("tables[") and any(f"].{f}" in path for f in _MONEY_TABLE_FIELDS):
            return True
        if path.startswith("tables[") and "]." not in path:
            return True
    return False


# -- what the state refuses (every problem at once) ------------------------------------


def _held(link: Link) -> list[tuple[str, Money, Money]]:
    """(meter, value, reserve) of each meter holding money, every pending event counted."""
    return [
        (m.id, value, reserve)
        for m, (value, reserve) in zip(link.config.meters, link.provisional(), strict=True)
        if value or reserve
    ]


def _amounts(value: int, reserve: int) -> str:
    return f"{format_money(Money(value))} (reserve {format_money(Money(reserve))})"


def refusals(state: FloorData, new: FloorConfig) -> list[str]:
    """What the state forbids of a change to `new`: money left on a meter or link taken
    away, a table's game or link changed under open rounds. Empty: it may be applied."""
    floor = state.floor
    problems: list[str] = []
    wanted = {link.id: link for link in new.links}
    for link_id, link in floor.links.items():
        if link_id not in wanted:
            held = _held(link)
            if held:
                money = ", ".join(f"{m} {_amounts(v, r)}" for m, v, r in held)
                problems.append(
                    f"links[{link_id}]: removed, but it holds money: {money}; moving it "
                    "is an audited transfer, not a file edit"
                )
            continue
        problems.extend(_meter_refusals(link, wanted[link_id]))
    open_rounds: dict[str, list[str]] = {}
    for (table_id, round_id), rnd in floor.rounds.items():
        if rnd.state == OPEN:
            open_rounds.setdefault(table_id, []).append(round_id)
    for table_id, table in state.config.tables.items():
        rounds = open_rounds.get(table_id)
        if not rounds:
            continue
        after = new.tables.get(table_id)
        names = ", ".join(sorted(rounds))
        if after is None:
            problems.append(f"tables[{table_id}]: removed, but it has open rounds: {names}")
            continue
        if after.link != table.link:
            problems.append(
                f"tables[{table_id}].link: changed ({table.link} -> {after.link}) while "
                f"rounds are open: {names}"
            )
        if after.settings.game.id != table.settings.game.id:
            problems.append(
                f"tables[{table_id}].game: changed ({table.settings.game.id} -> "
                f"{after.settings.game.id}) while rounds are open: {names}"
            )
    return problems


def _meter_refusals(link: Link, new: LinkConfig) -> Iterator[str]:
    """A link in play keeps its meters, in order: each is a place in every contribution
    recorded on it (a voided box's reversal takes back each meter's share)."""
    before = [m.id for m in link.config.meters]
    after = [m.id for m in new.meters]
    held = {m: (v, r) for m, v, r in _held(link)}
    for meter in before:
        if meter not in after:
            money = f": it holds {_amounts(*held[meter])}" if meter in held else ""
            yield (
                f"links[{link.id}].meters[{meter}]: removed{money}; a link's meters are "
                "removed with the link, once they hold no money"
            )
    for meter in after:
        if meter not in before:
            yield (
                f"links[{link.id}].meters[{meter}]: added to a link in play; a new meter "
                "goes on a new link"
            )
    if [m for m in before if m in after] != [m for m in after if m in before]:
        yield f"links[{link.id}].meters: reordered; a link in play keeps its meters' order"


# -- applying parameters to the state --------------------------------------------------


def reconfigure(floor: Floor, new: FloorConfig) -> None:
    """The core's floor under `new` (checked by `refusals`): timings, links' rates,
    reserve rates, ceilings and names; new links added, emptied ones removed. A changed
    seed of a meter in play is its seed from its next reset, as a supervisor's would be."""
    timing = new.timing
    floor.timing = timing
    floor.retain_ms = max(new.retain_ms, timing.round_timeout_ms + timing.hold_ms)
    for config in new.links:
        link = floor.links.get(config.id)
        if link is None:
            floor.links[config.id] = Link.new(config)
            continue
        for meter, meter_config in zip(link.meters, config.meters, strict=True):
            if meter_config.seed != meter.config.seed:
                meter.next_seed = meter_config.seed
            meter.config = meter_config
        link.config = config
        link.rates = tuple((m.rate, m.reserve_rate) for m in config.meters)
    kept = {link.id for link in new.links}
    for link_id in [link_id for link_id in floor.links if link_id not in kept]:
        del floor.links[link_id]
