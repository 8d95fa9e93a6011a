"""A packed snapshot's point in the chain (seq, head) and its text's size, read without
loading it (app/store/snapshot_point.py)."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from app.config.floor_config import floor_config
from app.config.floor_file import load_floor
from app.state.floor_state import FloorState
from app.store.packing import pack
from app.store.snapshot_point import snapshot_point
from app.store.snapshots import dump_text
from tests.support import DEMO

HEAD = "ab" * 32


def empty() -> FloorState:
    return FloorState(floor_config(load_floor(DEMO)))


def test_an_empty_floors_snapshot_names_its_seq_head_and_size() -> None:
    text = dump_text(empty(), 7, HEAD)
    assert snapshot_point(pack(text)) == (7, HEAD, len(text.encode()))


@settings(max_examples=25, deadline=None)
@given(
    seq=st.integers(0, 10**12),
    head=st.text("0123456789abcdef", min_size=64, max_size=64),
    audit=st.lists(st.text(max_size=40), max_size=30),
    pad=st.integers(0, 3_000_000),
)
def test_the_point_is_found_wherever_the_megabytes_fall(
    seq: int, head: str, audit: list[str], pad: int
) -> None:
    service = empty()
    # Text before the head (a key named head in a value, escaped) moves it across the
    # megabytes the reader unpacks at a time.
    service.audit = [{"note": '"head":"' + "f" * 64 + '","idem":', "pad": "x" * pad}]
    service.audit += [{"note": note} for note in audit]
    text = dump_text(service, seq, head)
    assert snapshot_point(pack(text)) == (seq, head, len(text.encode()))


def test_bytes_that_are_no_packed_snapshot_are_refused() -> None:
    with pytest.raises(ValueError, match="not a packed snapshot"):
        snapshot_point(b"not zlib")
    with pytest.raises(ValueError, match="names no seq and head"):
        snapshot_point(pack('{"a":1}'))
