"""A start: the software identity of the writer that begins leading, and the parameters
in force then (docs/journal.md `start`)."""

from __future__ import annotations

from typing import Any, ClassVar

from app.state.entries.base import Base


class StartEntry(Base, tag="start", kw_only=True, frozen=True):
    """`software`: name, version, install (`wheel`, `editable`, `source`), the sha256 over
    its recorded file hashes and their count, the lock file and its sha256, the Python
    version; `params_sha256` the parameters in force; `host` the machine's name. It
    changes nothing in the state."""

    kind: ClassVar[str] = "start"
    software: dict[str, Any]
    params_sha256: str | None
    host: str
