"""The regulator's meters per link meter on /metrics, read at scrape time."""

from __future__ import annotations

from collections.abc import Callable

from app.ops.readings import Read, Value, WriterReadings
from app.state.regulator_meters import lifetime
from jackpot.money import SCALE

# name in the meter read -> (metric, help). Money in currency units, as jackpot_meter_value.
METRICS = {
    "wagers": ("jackpot_meter_wagers", "Qualifying jackpot wagers accepted on the meter's link"),
    "wagered": ("jackpot_meter_wagered", "Amount of those wagers, in currency units"),
    "wagers_voided": ("jackpot_meter_wagers_voided", "Qualifying wagers voided since"),
    "wagered_voided": ("jackpot_meter_wagered_voided", "Amount of those, in currency units"),
    "contributions_meter": (
        "jackpot_meter_contributions_meter",
        "Contributions final on the meter (gross of voids), in currency units",
    ),
    "contributions_reserve": (
        "jackpot_meter_contributions_reserve",
        "Contributions final on the reserve, overflow included, in currency units",
    ),
    "overflow": ("jackpot_meter_overflow", "Contributions past the ceiling, in currency units"),
    "hits": ("jackpot_meter_hits", "Meter awards final and jackpots paid by hand"),
    "wins": ("jackpot_meter_wins", "Paid out of the meter by its hits, in currency units"),
    "overflow_to_house": (
        "jackpot_meter_overflow_to_house",
        "Overflow sent to the house (overflow_to), in currency units",
    ),
    "overflow_to_meter": (
        "jackpot_meter_overflow_to_meter",
        "Overflow sent to another meter of the link (overflow_to), in currency units",
    ),
    "overflow_from_meter": (
        "jackpot_meter_overflow_from_meter",
        "Overflow received from another meter of the link, in currency units",
    ),
}
COUNTS = {"wagers", "wagers_voided", "hits"}


def meter_reads(writer: WriterReadings) -> list[Read]:
    """One counter per meter of the meter read, labelled by link and meter. The writer's
    service is read at every scrape (it is replaced when a commit fails)."""

    def reading(name: str) -> Callable[[], dict[tuple[str, ...], Value]]:
        scale = 1 if name in COUNTS else SCALE

        def read() -> dict[tuple[str, ...], Value]:
            figures: dict[tuple[str, ...], Value] = {}
            for link in writer.service.floor.links.values():
                for meter in link.meters:
                    figure = lifetime(meter)[name]
                    figures[(link.id, meter.config.id)] = figure if scale == 1 else figure / scale
            return figures

        return read

    return [
        Read(metric, help_text, reading(name), labels=("link", "meter"), kind="counter")
        for name, (metric, help_text) in METRICS.items()
    ]
