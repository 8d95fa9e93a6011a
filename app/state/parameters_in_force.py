"""The parameters the journal put in force, as the state keeps them (app/state/parameters.py
says how a `config` entry changes them)."""

from __future__ import annotations

import copy
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

Params = dict[str, Any]


@dataclass(slots=True)
class ParametersInForce:
    """The parameters the journal last put in force (None: none recorded yet, an old
    journal replayed under the floor file given), the change waiting for a second
    supervisor (dual control), and every change recorded."""

    params: Params | None = None
    sha256: str | None = None
    seq: int | None = None  # the entry that put them in force
    at: int | None = None
    proposal: dict[str, Any] | None = None
    history: list[dict[str, Any]] = field(default_factory=list)

    def dump(self) -> dict[str, Any]:
        return {
            "params": self.params,
            "sha256": self.sha256,
            "seq": self.seq,
            "at": self.at,
            "proposal": self.proposal,
            "history": self.history,
        }

    @classmethod
    def load(cls, data: Mapping[str, Any]) -> ParametersInForce:
        data = copy.deepcopy(dict(data))  # the caller may keep the snapshot's dict
        return cls(
            params=data["params"],
            sha256=data["sha256"],
            seq=data["seq"],
            at=data["at"],
            proposal=data["proposal"],
            history=[dict(h) for h in data["history"]],
        )
