"""What every journal entry has: its kind and time, strict fields, the version it replays by."""

from __future__ import annotations

from typing import Annotated, ClassVar

from msgspec import UNSET, Meta, Struct, UnsetType

from jackpot.commands import SEMANTICS


class EntryError(ValueError):
    """An entry that is not one docs/journal.md specifies (the replay cannot apply it)."""


def idempotency_key(table: str, round_id: str, kind: str) -> str:
    """The `idem_key` of a table's round event: unique in the journal (docs/journal.md)."""
    return f"{table}|{round_id}|{kind}"


# The rules an entry replays by: 1 to SEMANTICS (docs/journal.md, versions).
Version = Annotated[int, Meta(ge=1, le=SEMANTICS)]


def version_of(version: int | UnsetType) -> int:
    """The rules an entry replays by (docs/journal.md, versions): absent in the
    first version's entries, which replay as they were applied then."""
    return 1 if version is UNSET else version


class Part(Struct, frozen=True, forbid_unknown_fields=True):
    """A record inside an entry (a box, a decision, a claim): every field required."""


class Base(Struct, frozen=True, forbid_unknown_fields=True, tag_field="kind", kw_only=True):
    """Every entry: its `kind` (the tag) and the server time it was applied at. Lists,
    not tuples, so that `entry_dict` gives back the very dict decoded (JSON arrays)."""

    kind: ClassVar[str]
    now: int
