"""The console's alarms acknowledged: a supervisor says they have seen one (docs/journal.md
`acknowledge`). It changes no money; it records who knew what, when."""

from __future__ import annotations

from typing import ClassVar

from app.state.entries.base import Base


class AcknowledgeEntry(Base, tag="acknowledge", kw_only=True, frozen=True):
    kind: ClassVar[str] = "acknowledge"
    by: str
    alarm: str  # the console's key of the alarm: `<source>:<what>` (docs/api.md "Alarms")
    note: str  # may be empty
