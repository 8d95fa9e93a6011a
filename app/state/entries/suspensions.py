"""The entries that take a link, a table or boxes out of play and back (rules 5.17, 5.18)."""

from __future__ import annotations

from typing import ClassVar

from msgspec import Struct

from app.state.entries.base import Base
from jackpot.in_play import Place


class _InPlayFields(Struct, frozen=True, forbid_unknown_fields=True, kw_only=True):
    """What is named: a `link`, or a `table` with `boxes` (None: the whole table)."""

    link: str | None
    table: str | None
    boxes: list[int] | None
    reason: str

    def place(self) -> Place:
        return Place(self.link, self.table, None if self.boxes is None else tuple(self.boxes))


class SuspendChange(_InPlayFields, tag_field="kind", tag="suspend", frozen=True, kw_only=True):
    """A suspension as proposed (dual control): its entry's fields but `now` and `by`."""

    kind: ClassVar[str] = "suspend"

    def entry(self, now: int, by: str) -> SuspendEntry:
        return SuspendEntry(
            now=now, by=by, link=self.link, table=self.table, boxes=self.boxes,
            reason=self.reason,
        )  # fmt: skip


class ResumeChange(_InPlayFields, tag_field="kind", tag="resume", frozen=True, kw_only=True):
    kind: ClassVar[str] = "resume"

    def entry(self, now: int, by: str) -> ResumeEntry:
        return ResumeEntry(
            now=now, by=by, link=self.link, table=self.table, boxes=self.boxes,
            reason=self.reason,
        )  # fmt: skip


class SuspendEntry(Base, tag="suspend", kw_only=True, frozen=True):
    """`by` null: the writer's timer suspended a silent table (the floor's
    `suspend_silent_tables`)."""

    kind: ClassVar[str] = "suspend"
    by: str | None
    link: str | None
    table: str | None
    boxes: list[int] | None
    reason: str

    def place(self) -> Place:
        return Place(self.link, self.table, None if self.boxes is None else tuple(self.boxes))


class ResumeEntry(Base, tag="resume", kw_only=True, frozen=True):
    kind: ClassVar[str] = "resume"
    by: str
    link: str | None
    table: str | None
    boxes: list[int] | None
    reason: str

    def place(self) -> Place:
        return Place(self.link, self.table, None if self.boxes is None else tuple(self.boxes))
