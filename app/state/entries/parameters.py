"""The parameters' entries: the parameters put in force (`config`), and with dual control
a change of money parameters proposed, approved or rejected (docs/journal.md)."""

from __future__ import annotations

from typing import Any, ClassVar

from app.state.entries.base import Base


class ConfigEntry(Base, tag="config", kw_only=True, frozen=True):
    """The parameters in force from this entry on: the floor file in canonical form, its
    sha256 and the one in force before (null at the first); the file they were read
    from (null where none was named) and who approved them (null: in force at start)."""

    kind: ClassVar[str] = "config"
    params: dict[str, Any]
    sha256: str
    previous: str | None
    path: str | None
    file_sha256: str | None
    by: str | None


class ConfigProposeEntry(Base, tag="config_propose", kw_only=True, frozen=True):
    """Dual control: parameters read at start that change money parameters, held until
    a supervisor approves them (`config_approve`); the server runs on those in force.
    `by`: the supervisor who made the change, who cannot approve it."""

    kind: ClassVar[str] = "config_propose"
    params: dict[str, Any]
    sha256: str
    previous: str | None
    path: str | None
    file_sha256: str | None
    by: str | None


class ConfigApproveEntry(Base, tag="config_approve", kw_only=True, frozen=True):
    """The proposal whose parameters have sha256 `id` is in force from here."""

    kind: ClassVar[str] = "config_approve"
    id: str
    by: str


class ConfigRejectEntry(Base, tag="config_reject", kw_only=True, frozen=True):
    kind: ClassVar[str] = "config_reject"
    id: str
    by: str
    reason: str
