"""A snapshot's bytes as PostgreSQL stores them (alembic/versions/0002): packed JSON."""

from __future__ import annotations

import zlib
from collections.abc import Mapping
from typing import Any


def pack(state: str) -> bytes:
    """A snapshot's JSON as stored: zlib (RFC 1950) at level 1, fast and ~56:1 on it
    (bench_http's snapshots: 42 MB -> 0.75 MB).
    Packed where it is made (app/store/snapshots.py: the forked child), so that neither the
    writer's event loop nor PostgreSQL (pglz, beside the group commits) handles the
    whole text (alembic/versions/0002)."""
    return zlib.compress(state.encode(), 1)


def unpack_bytes(packed: bytes, seq: int) -> str:
    """A packed snapshot's JSON; ValueError for bytes that are not a packed snapshot."""
    try:
        return zlib.decompress(packed).decode()
    except (zlib.error, UnicodeDecodeError) as error:
        raise ValueError(f"the snapshot at seq {seq} cannot be unpacked: {error}") from None


def unpack(record: Mapping[str, Any]) -> str:
    """A stored snapshot's JSON: from `packed`, or from `state` for rows stored before
    0002."""
    if record["packed"] is None:
        return str(record["state"])
    return unpack_bytes(record["packed"], record["seq"])
