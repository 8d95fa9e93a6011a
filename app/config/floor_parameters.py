"""The floor file in canonical form: the parameters a `config` entry records
(app/state/parameters.py), and where they were read from."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from app.config.floor_file import FloorFile


def floor_parameters(floor: FloorFile) -> dict[str, Any]:
    """Every key of the floor file, defaults filled in, money in micro-units and rates
    over 10,000 (docs/journal.md units): JSON of integers, strings, booleans and null."""
    params: dict[str, Any] = floor.model_dump(mode="json")
    return params


@dataclass(frozen=True, slots=True)
class FloorSource:
    """The floor file as read: its path and the sha256 of its bytes."""

    path: str
    sha256: str

    @classmethod
    def of(cls, path: Path | str) -> FloorSource:
        data = Path(path).read_bytes()
        return cls(str(Path(path).resolve()), hashlib.sha256(data).hexdigest())
