"""The validated floor file as the state's configuration: links, meters, tables' settings."""

from __future__ import annotations

from app.config.floor_file import FloorFile
from app.state.floor_state import FloorConfig, TableConfig
from app.state.gaming_day import GamingDay
from jackpot.money import Money
from tables.bets import TableSettings
from tables.games import game


def floor_config(floor: FloorFile, mystery_key: str | None = None) -> FloorConfig:
    """The validated floor file -> the domain's configuration (its tokens: app/api/auth.py)."""
    tables = {}
    for t in floor.tables:
        settings = TableSettings(
            game=game(t.game, t.pay_table),
            prescribed_wager=Money(t.jackpot_wager or 0),
            boxes=t.boxes,
            fold_keeps_jackpot=t.fold_keeps_jackpot,
            lucky_dealer_odds=t.lucky_dealer_odds or 10,
        )
        tables[t.id] = TableConfig(t.id, t.link, settings, t.property)
    return FloorConfig(
        floor.currency,
        floor.timing(),
        floor.link_configs(),
        tables,
        floor.dual_control,
        retain_ms=floor.retain_ms,
        max_open_rounds=floor.max_open_rounds,
        mystery_key=mystery_key,
        witness_above=floor.witness_above,
        pay_within_ms=floor.pay_within_ms,
        table_silence_ms=floor.table_silence_ms,
        suspend_silent_tables=floor.suspend_silent_tables,
        hold_warning_ms=floor.hold_warning_ms,
        gaming_day=GamingDay(floor.time_zone, floor.gaming_day_start, floor.shifts),
    )
