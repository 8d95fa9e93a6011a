"""The service's whole state as one JSON-able dict (snapshots) and back."""

from __future__ import annotations

import copy
import zlib
from collections.abc import Awaitable
from typing import Any, NamedTuple

import msgspec

from app.state.accounts import dump_accounts, load_accounts
from app.state.entries import Decision, Drawn, PostedBox
from app.state.floor_state import FloorState, RoundExtras
from app.state.parameters import config_of
from app.state.parameters_in_force import ParametersInForce
from app.store.aside import run_aside
from app.store.packing import pack
from jackpot import snapshot
from jackpot.canonical import canonical_json
from jackpot.in_play import InPlay


def dump_service(service: FloorState, seq: int, head: str) -> dict[str, Any]:
    state: dict[str, Any] = {
        "seq": seq,
        "head": head,
        "floor": snapshot.dump(service.floor),
        "extras": [
            [
                table,
                round_id,
                msgspec.to_builtins(e.boxes),
                msgspec.to_builtins(e.decisions),
                msgspec.to_builtins(e.draws),
                e.hands,
            ]
            for (table, round_id), e in service.extras.items()
        ],
        "idem": dict(service.idem),
        "proposals": service.proposals,
        "audit": service.audit,
        # Only once there is one: a snapshot of a floor without payments is as before.
        **({"payments": service.payments} if service.payments else {}),
    }
    # Only once there are accounts: the snapshots of a floor without keep their bytes.
    if not service.accounts.empty():
        state["accounts"] = dump_accounts(service.accounts)
    # Only once something was ever suspended: older snapshots stay byte for byte the same.
    if service.in_play.periods:
        state["in_play"] = service.in_play.dump()
    if service.parameters.history:  # absent before any `config` entry: older bytes kept
        state["parameters"] = service.parameters.dump()
    if service.retired:  # only once a link was retired: older snapshots keep their bytes
        state["retired"] = service.retired
    return state


def load_service(config: Any, state: dict[str, Any]) -> FloorState:
    """The state a snapshot describes, under the parameters it carries (`config`, the
    floor file's, only for a snapshot of a journal that recorded none)."""
    recorded = state.get("parameters")
    parameters = None if recorded is None else ParametersInForce.load(recorded)
    if parameters is not None and parameters.params is not None:
        config = config_of(parameters.params, config.mystery_key)
    service = FloorState(config)
    if parameters is not None:
        service.parameters = parameters
    if "floor" not in state:  # nothing durable yet: the empty floor
        return service
    service.floor = snapshot.load(
        state["floor"], list(config.links), config.timing, config.retain_ms
    )
    service.extras = {
        (table, round_id): RoundExtras(
            msgspec.convert(boxes, list[PostedBox]),
            msgspec.convert(decisions, list[Decision]),
            msgspec.convert(draws, Drawn | None),
            hands,
        )
        for table, round_id, boxes, decisions, draws, hands in state["extras"]
    }
    service.idem = dict(state["idem"])
    # Copies: the caller may keep the state dict.
    service.proposals = copy.deepcopy(state["proposals"])
    service.audit = list(state["audit"])
    service.accounts = load_accounts(state.get("accounts"))
    service.payments = copy.deepcopy(state.get("payments", {}))
    service.seq = state["seq"]
    service.in_play = InPlay.load(state.get("in_play", ()))
    service.retired = copy.deepcopy(state.get("retired", {}))
    return service


def dump_text(service: FloorState, seq: int, head: str) -> str:
    return canonical_json(dump_service(service, seq, head))


class Dumped(NamedTuple):
    """A snapshot as stored (`pack`) and the size of its JSON text in UTF-8 bytes: what the
    writer weighs the journal appended since against (app/writer/snapshot_policy.py)."""

    packed: bytes
    text_size: int


def text_size(text: str) -> int:
    """The UTF-8 size of a snapshot's text (without encoding it when it is ASCII)."""
    return len(text) if text.isascii() else len(text.encode())


def packed_text_size(packed: bytes) -> int:
    """`text_size` of a packed snapshot's text (app/store/packing.py: zlib), unpacked a
    megabyte at a time, never whole."""
    unpacking, size = zlib.decompressobj(), 0
    while packed:
        size += len(unpacking.decompress(packed, 1 << 20))
        packed = unpacking.unconsumed_tail
    return size + len(unpacking.flush())


def dump_packed_aside(service: FloorState, seq: int, head: str) -> Awaitable[Dumped]:
    """`dump_text` of the state as it is at this call, packed for storage (app.store.journal
    `pack`), with its text's size, without holding up the event loop: await the result
    (always: it also reaps the child).

    A forked child (copy-on-write: it sees the state as it was at the fork, whatever the
    writer does next) serialises and packs it and writes it to a pipe. The writer is held
    up by the fork alone: not by walking the whole state (hundreds of milliseconds on a
    large floor), nor by its text. Under bench_http's load the text reached 84 MB (packed,
    1.5 MB), and each pass over it in the writer's process is one call that holds the
    interpreter: 92 MB measured joined from the pipe in 64 ms, decoded in 47, encoded in
    48. Without fork (not POSIX) the state is dumped in place.
    """

    def work() -> bytes:
        text = dump_text(service, seq, head)
        return text_size(text).to_bytes(_SIZE, "big") + pack(text)

    return _dumped(run_aside(work))


_SIZE = 8  # the child's answer: the text's size in 8 bytes, then the packed snapshot


async def _dumped(aside: Awaitable[bytes]) -> Dumped:
    data = await aside
    return Dumped(data[_SIZE:], int.from_bytes(data[:_SIZE], "big"))
