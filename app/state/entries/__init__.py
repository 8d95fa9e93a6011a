"""The journal's entries, typed: one class per kind, as docs/journal.md specifies them.

An entry is decoded from its JSON (`entry_from_dict`, naming the entry and the field it
refuses) and encoded back (`entry_dict`, `entry_text`) to exactly the dict and canonical
bytes it came from: the hash chain covers those bytes. An absent `version` stays absent
(`UNSET`). Each class gives the core's command it records (`command`) and, for a round
event, the request body it holds (`body`); what each kind does, and its answer, is the
table in app/state/kinds.py.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeAlias, get_args

import msgspec
from msgspec import UNSET

from app.state.entries.accounts import AccountEntry
from app.state.entries.alarms import AcknowledgeEntry
from app.state.entries.base import EntryError, idempotency_key, version_of
from app.state.entries.mystery import ArmEntry
from app.state.entries.operators import (
    ApproveEntry,
    Change,
    CorrectChange,
    CorrectEntry,
    OperatorEntry,
    ProposeEntry,
    RejectEntry,
    ResetChange,
    ResetEntry,
    SeedChange,
    SeedEntry,
    change_of,
)
from app.state.entries.parameters import (
    ConfigApproveEntry,
    ConfigEntry,
    ConfigProposeEntry,
    ConfigRejectEntry,
)
from app.state.entries.payments import PaidAward, PaidConfirmEntry, PaidEntry, TablePaidEntry
from app.state.entries.rounds import (
    BetsEntry,
    Claim,
    Decision,
    Drawn,
    ExpireEntry,
    FinalizeEntry,
    Fixed,
    OutcomeEntry,
    PostedBox,
    PostedDealer,
    PostedHand,
    VoidEntry,
    entry_draws,
)
from app.state.entries.starts import StartEntry
from app.state.entries.suspensions import ResumeChange, ResumeEntry, SuspendChange, SuspendEntry
from app.state.entries.transfers import RetireChange, RetireEntry, TransferChange
from jackpot.canonical import canonical_json

__all__ = [
    "UNSET", "ApproveEntry", "ArmEntry", "BetsEntry", "Change", "Claim", "CorrectChange",
    "CorrectEntry", "Decision", "Drawn", "Entry", "EntryError", "ExpireEntry", "FinalizeEntry",
    "Fixed",
    "OperatorEntry", "OutcomeEntry", "PostedBox", "PostedDealer", "PostedHand",
    "ProposeEntry", "RejectEntry", "ResetChange", "ResetEntry", "SeedChange", "SeedEntry",
    "VoidEntry", "change_of", "entry_dict", "entry_draws", "entry_from_dict", "entry_text",
    "idempotency_key", "version_of", "AccountEntry",
    "idempotency_key", "version_of",
    "PaidAward", "PaidConfirmEntry", "PaidEntry", "TablePaidEntry",
    "ResumeChange", "ResumeEntry", "SuspendChange", "SuspendEntry",
    "AcknowledgeEntry",
    "RetireChange", "RetireEntry", "TransferChange",
]  # fmt: skip
__all__ += ["ConfigApproveEntry", "ConfigEntry", "ConfigProposeEntry", "ConfigRejectEntry"]
__all__ += ["StartEntry"]

Entry: TypeAlias = (
    BetsEntry
    | OutcomeEntry
    | VoidEntry
    | FinalizeEntry
    | ExpireEntry
    | SeedEntry
    | ResetEntry
    | CorrectEntry
    | ProposeEntry
    | ApproveEntry
    | RejectEntry
    | AccountEntry
    | ArmEntry
    | PaidEntry
    | PaidConfirmEntry
    | TablePaidEntry
    | SuspendEntry
    | ResumeEntry
    | AcknowledgeEntry
    | ConfigEntry
    | ConfigProposeEntry
    | ConfigApproveEntry
    | ConfigRejectEntry
    | StartEntry
    | RetireEntry
)


# -- decode and encode ---------------------------------------------------------------

_ENCODER = msgspec.json.Encoder(order="sorted")
_KINDS: dict[Any, Any] = {kind.kind: kind for kind in get_args(Entry)}


def _refused(error: msgspec.ValidationError, data: Any, where: str) -> EntryError:
    kind = data.get("kind") if isinstance(data, Mapping) else None
    what = f"{where} ({kind})" if isinstance(kind, str) else where
    return EntryError(f"{what}: {error}")


def entry_from_dict(data: Any, where: str = "entry") -> Entry:
    """The typed entry of a journal entry's JSON object; EntryError naming `where` (the
    entry's seq), its kind and the field, for one docs/journal.md does not specify."""
    kind = data.get("kind") if isinstance(data, dict) else None
    # Converted to its kind's class: a union of every kind would cost four times as much.
    try:
        entry: Entry = msgspec.convert(data, _KINDS.get(kind, Entry), strict=True)
        if isinstance(entry, ProposeEntry):
            entry.proposed()
    except msgspec.ValidationError as error:
        raise _refused(error, data, where) from None
    except EntryError as error:
        raise EntryError(f"{where} ({kind}): {error}") from None
    return entry


def entry_dict(entry: Entry) -> dict[str, Any]:
    """The entry as the JSON object it is journaled as."""
    data: dict[str, Any] = msgspec.to_builtins(entry)
    return data


def entry_text(entry: Entry) -> str:
    """The entry's canonical encoding (docs/journal.md): the text the hash chain covers.
    msgspec writes it straight from the entry, as `canonical_json` would from its dict;
    a string it cannot encode (a lone surrogate) takes canonical_json's own path."""
    try:
        return _ENCODER.encode(entry).decode()
    except (UnicodeEncodeError, msgspec.EncodeError):
        return canonical_json(entry_dict(entry))
