"""Where a packed snapshot stands in the chain, read without loading it: the seq and head
hash its text names, and the text's size. What a writer checks before it takes a stored
snapshot as the base to rebuild from (app/writer/snapshot_policy.py)."""

from __future__ import annotations

import re
import zlib
from typing import NamedTuple

# A snapshot is canonical JSON (sorted keys, no spaces: app/store/snapshots.py
# `dump_service`): its top level's `head` is followed by `idem`, and `seq` is its last key.
# In a string value, quotes are escaped: these bytes are keys, not text within a value.
_HEAD = re.compile(rb',"head":"([0-9a-f]{64})","idem":')
_SEQ = re.compile(rb',"seq":(\d+)\}$')
_CARRY = 128  # bytes kept from one unpacked megabyte to the next: a match may straddle them


class SnapshotPoint(NamedTuple):
    seq: int
    head: str
    text_size: int  # the snapshot's JSON in UTF-8 bytes


def snapshot_point(packed: bytes) -> SnapshotPoint:
    """The (seq, head) a packed snapshot says it is the state after, and its text's size,
    unpacked a megabyte at a time (never whole; zlib lets other threads run meanwhile).
    ValueError if the bytes are not a packed snapshot naming both."""
    unpacking, size, tail, head = zlib.decompressobj(), 0, b"", None
    try:
        while True:
            chunk = unpacking.decompress(packed, 1 << 20) if packed else unpacking.flush()
            packed = unpacking.unconsumed_tail
            size += len(chunk)
            window = tail + chunk
            for found in _HEAD.finditer(window):
                head = found.group(1).decode()  # the last one: the top level's comes late
            tail = window[-_CARRY:]
            if not chunk and not packed:
                break
    except zlib.error as error:
        raise ValueError(f"not a packed snapshot: {error}") from None
    seq = _SEQ.search(tail)
    if head is None or seq is None:
        raise ValueError("the snapshot's text names no seq and head")
    return SnapshotPoint(int(seq.group(1)), head, size)
