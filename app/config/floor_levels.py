"""A tiered link's levels in the floor file: which meter each pay-table row pays, checked."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from jackpot.money import MoneyError, parse_money
from tables.errors import TablesError
from tables.games import GameId, MeterShare, game

Loc = tuple[str | int, ...]


def _items(node: Mapping[str, Any], key: str) -> Iterator[tuple[int, Mapping[str, Any]]]:
    items = node.get(key)
    if isinstance(items, list):
        for index, item in enumerate(items):
            if isinstance(item, dict):
                yield index, item


def _meter_rows(table: Mapping[str, Any]) -> list[tuple[str, str | None]] | None:
    """(row, the meter it names or None) of each meter row of a table's pay table; None
    when the game or a row is bad (the floor file's own checks say so)."""
    game_id = table.get("game")
    overrides = table.get("pay_table", {})
    if game_id not in {g.value for g in GameId} or game_id == GameId.western_stud:
        return None
    if not isinstance(overrides, dict) or not all(isinstance(v, str) for v in overrides.values()):
        return None
    try:
        rows = game(game_id, overrides).pay_table
    except TablesError:
        return None
    return [(row.name, row.pay.meter) for row in rows if isinstance(row.pay, MeterShare)]


def _money(value: object) -> int | None:
    try:
        return int(parse_money(value)) if isinstance(value, str) else None
    except MoneyError:
        return None


def mystery_checks(meter: Mapping[str, Any], loc: Loc) -> Iterator[tuple[Loc, str]]:
    """A must-hit-by level's range: seed <= must_hit_from < must_hit_by <= ceiling."""
    if "must_hit_by" not in meter:
        if "must_hit_from" in meter:
            yield (*loc, "must_hit_from"), "only with must_hit_by"
        return
    seed, by = _money(meter.get("seed")), _money(meter.get("must_hit_by"))
    ceiling = _money(meter.get("ceiling"))
    low = _money(meter.get("must_hit_from", meter.get("seed")))
    if by is not None and ceiling is not None and by > ceiling:
        yield (*loc, "must_hit_by"), "is above the ceiling: the meter could never reach it"
    if seed is not None and low is not None and low < seed:
        yield (*loc, "must_hit_from"), "is below the seed"
    if by is not None and low is not None and low >= by:
        what = "must_hit_from" if "must_hit_from" in meter else "the seed"
        yield (*loc, "must_hit_by"), f"must be above {what}: the trigger is drawn in [from, by)"


def level_checks(raw: Mapping[str, Any]) -> Iterator[tuple[Loc, str]]:
    """Every row names a meter of its table's link (none: the link's first), and every
    meter of a link that has tables is paid by some row, else it would grow for ever.
    A hand's share of its meter is at most 100 %: tables.games refuses more."""
    links = list(_items(raw, "links"))
    ids = [link.get("id") for _, link in links]
    for li, link in links:
        link_id = link.get("id")
        if not isinstance(link_id, str) or ids.count(link_id) > 1:
            continue  # a duplicate link id is a problem of its own: whose tables are these?
        yield from _link_level_checks(raw, li, link_id, link)


def _link_level_checks(
    raw: Mapping[str, Any], li: int, link_id: str, link: Mapping[str, Any]
) -> Iterator[tuple[Loc, str]]:
    """One link's levels: their ranges, the rows of its tables, the levels no row pays."""
    meters = [(mi, m) for mi, m in _items(link, "meters") if isinstance(m.get("id"), str)]
    if not meters:
        return
    names = [str(m["id"]) for _, m in meters]
    for mi, level in meters:
        yield from mystery_checks(level, ("links", li, "meters", mi))
    # A must-hit-by level is won by its trigger: no hand pays it.
    mystery = {str(m["id"]) for _, m in meters if "must_hit_by" in m}
    paid: set[str] = set(mystery)
    tables = [(ti, t) for ti, t in _items(raw, "tables") if t.get("link") == link_id]
    known = True  # every table's rows could be read: "no row pays" is then certain
    for ti, table in tables:
        rows = _meter_rows(table)
        if rows is None:
            known = False
            continue
        for row, meter in rows:
            name = names[0] if meter is None else meter
            problem = _row_problem(link_id, names, mystery, name, meter)
            if problem is None:
                paid.add(name)
            else:
                yield ("tables", ti, "pay_table", row), problem
    if tables and known:
        yield from _unpaid_levels(li, link_id, meters, paid)


def _row_problem(
    link_id: str, names: list[str], mystery: set[str], name: str, meter: str | None
) -> str | None:
    """What is wrong with a pay-table row paying meter `name` (`meter` as written), if
    anything: a must-hit-by level, or a meter the link has not."""
    if name in mystery:
        return (
            f"pays meter {name!r}, a must-hit-by level: its trigger wins it, "
            "not a hand (name another level)"
        )
    if name in names:
        return None
    has = ", ".join(names)
    return f"pays meter {meter!r}, which link {link_id!r} has not (its meters: {has})"


def _unpaid_levels(
    li: int, link_id: str, meters: list[tuple[int, Mapping[str, Any]]], paid: set[str]
) -> Iterator[tuple[Loc, str]]:
    """The link's levels no pay-table row pays: they would grow for ever."""
    for mi, level in meters:
        if level["id"] in paid:
            continue
        yield (
            ("links", li, "meters", mi, "id"),
            f"no pay-table row of a table on link {link_id!r} pays meter {level['id']!r}: "
            f"it would grow for ever (name it in a row, such as "
            f'straight_flush = "{level["id"]}:1.00")',
        )
