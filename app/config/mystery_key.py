"""The key that seals must-hit-by triggers in the journal (app/state/sealing.py): the
casino's own, JACKPOT_MYSTERY_KEY. The demo's key is published in the repository, so it
seals only under `jackpot demo` (JACKPOT_DEMO_TOKENS=1): anywhere else anyone reading the
journal could open a trigger before its hit (docs/operations.md, "Mystery key")."""

from __future__ import annotations

from app.config.floor_file import FloorFile
from app.config.settings import Settings
from app.state.sealing import DEMO_KEY


class MysteryKeyError(ValueError):
    """A floor with must-hit-by levels and no key of its own: the writer does not start."""


def must_hit_by_levels(floor: FloorFile) -> list[str]:
    """The floor's must-hit-by levels, as "link/meter"."""
    return [
        f"{link.id}/{meter.id}"
        for link in floor.links
        for meter in link.meters
        if meter.must_hit_by is not None
    ]


def given_key(settings: Settings) -> str | None:
    """JACKPOT_MYSTERY_KEY, whatever the floor; under the demo switch, the demo's key when
    none is given; None when none is given. For a reader whose floor the journal names
    (`jackpot verify` with no floor file): an `arm` it cannot open is named then."""
    key = settings.mystery_key or None
    if settings.demo_tokens:
        return key or DEMO_KEY
    if key == DEMO_KEY:
        raise MysteryKeyError(
            "JACKPOT_MYSTERY_KEY is the demo's key, published in the repository: "
            "give the floor a key of its own (docs/operations.md, Mystery key)"
        )
    return key


def mystery_key(floor: FloorFile, settings: Settings) -> str | None:
    """JACKPOT_MYSTERY_KEY; under the demo switch, the demo's key when none is given; None
    for a floor without must-hit-by levels and no key (nothing is ever sealed)."""
    key = given_key(settings)
    if settings.demo_tokens:
        return key
    levels = must_hit_by_levels(floor)
    if levels and key is None:
        raise MysteryKeyError(
            f"must-hit-by levels {', '.join(levels)} need JACKPOT_MYSTERY_KEY, the key that "
            "seals their triggers in the journal, the same on every writer and for "
            "`jackpot verify` (docs/operations.md, Mystery key)"
        )
    return key
