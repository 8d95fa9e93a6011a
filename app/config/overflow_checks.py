"""The floor file's checks of a link's `overflow_to`: a known destination, and no cycle."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

Loc = tuple[str | int, ...]
PLACES = ("reserve", "house")


def overflow_checks(link: Mapping[str, Any], loc: Loc) -> Iterator[tuple[Loc, str]]:
    """Each meter's overflow goes to its reserve, the house, or another meter of the same
    link; following the meters it names never comes back to one (passing on must end)."""
    meters = [m for m in link.get("meters") or [] if isinstance(m, dict)]
    ids = [m.get("id") for m in meters]
    to = {m.get("id"): m.get("overflow_to", "reserve") for m in meters}
    for index, meter in enumerate(meters):
        where = (*loc, "meters", index, "overflow_to")
        target = to[meter.get("id")]
        if target in PLACES or not isinstance(target, str):
            continue  # (a non-string is the section's own error)
        if target == meter.get("id") or target not in ids:
            yield (
                where,
                (
                    f"{target!r} is not reserve, house or another meter of the link "
                    f"({', '.join(str(i) for i in ids if i != meter.get('id')) or 'none'})"
                ),
            )
            continue
        seen = {meter.get("id")}
        while target not in PLACES and target in to and target not in seen:
            seen.add(target)
            target = to[target]
        if target in seen:
            yield where, f"forms a cycle through {', '.join(str(s) for s in seen)}"
