"""Helpers shared by tests of every level: the checkout's root, the demo floor and its
tokens, the writer's clock, request bodies, floor file text, and a replay of entries."""

from __future__ import annotations

from pathlib import Path
from typing import Any, TypeVar, get_args

import asyncpg
import msgspec
import orjson

from app.api.auth import token_hash
from app.api.table_events.decoding import decode
from app.config.floor_config import floor_config
from app.config.floor_file import parse_floor
from app.state.commands import Command
from app.state.floor_state import FloorState
from app.state.sealing import DEMO_KEY
from app.state.timefmt import format_time
from app.store.journal import JournalRow
from jackpot.canonical import loads_exact

ROOT = Path(__file__).resolve().parents[1]
DEMO = ROOT / "app" / "demo" / "floor.toml"
T01 = {"Authorization": "Bearer demo-table-T01"}
T02 = {"Authorization": "Bearer demo-table-T02"}
T03 = {"Authorization": "Bearer demo-table-T03"}
OPERATOR = {"Authorization": "Bearer demo-operator"}
SUPERVISOR = {"Authorization": "Bearer demo-supervisor"}


class Clock:
    """The writer's clock, moved by the test (the domain never reads a clock itself)."""

    def __init__(self) -> None:
        self.now = 1_800_000_000_000

    def __call__(self) -> int:
        return self.now

    def at(self, offset_ms: int = 0) -> str:
        return format_time(self.now + offset_ms)


def bets_body(clock: Clock, *boxes: tuple[int, str, str]) -> dict[str, Any]:
    return {
        "closed_at": clock.at(),
        "boxes": [{"box": b, "ante": a, "jackpot": j} for b, a, j in boxes],
    }


def table_command(kind: str, body: dict[str, Any]) -> Command:
    """A table event's command from its JSON body, decoded as the edge decodes it."""
    return decode(kind, orjson.dumps(body))


COMMANDS: dict[str, type[Command]] = {c.kind: c for c in get_args(Command)}


def as_command(kind: str, fields: dict[str, Any]) -> Command:
    """A command of `kind` from its fields as the state reads them (money in micro-units,
    times in ms): for tests that hand the writer what no route would build."""
    return command_of(COMMANDS[kind], fields)


C = TypeVar("C", bound=Command)


def command_of(cls: type[C], fields: dict[str, Any]) -> C:
    """As `as_command`, typed."""
    command: C = msgspec.convert(fields, cls)
    return command


H1, H2, H3 = (token_hash(f"token-{n}") for n in range(3))

HEADER = """
currency = "SGD"

[[links]]
id = "stud"
  [[links.meters]]
  id = "major"
  seed = "10000.00"
  rate = "0.25"
  reserve_rate = "0.05"
"""


def table(table_id: str, /, *, token: str, **fields: str) -> str:
    """A [[tables]] entry: fields are TOML values as text; "-" leaves the field out."""
    values = {"id": f'"{table_id}"', "game": '"casino_stud"', "link": '"stud"', "boxes": "7",
              "jackpot_wager": '"1.00"', "token_sha256": f'"{token}"', **fields}  # fmt: skip
    lines = [f"{key} = {value}" for key, value in values.items() if value != "-"]
    return "\n[[tables]]\n" + "\n".join(lines) + "\n"


def without_tiers(text: str) -> str:
    """The demo floor's text without its tiered link and table T06: the floor with no
    must-hit-by level, whose journals hold no random draw (a trigger's commitment), for
    the writer's tests that keep rows byte for byte or count them group by group."""
    text = text[: text.index("# A tiered link")] + text[text.index('[[tables]]\nid = "T01"') :]
    t06 = text.index('[[tables]]\nid = "T06"')
    return text[:t06] + text[text.index("[[operators]]") :]


def replayed(rows: list[JournalRow]) -> FloorState:
    """The state the entries give, applied one by one to an empty floor (the demo floor's
    without its tiered link: a journal's own `config` entry brings the levels it has, and
    the demo's key opens their draws)."""
    config = floor_config(parse_floor(without_tiers(DEMO.read_text())), DEMO_KEY)
    service = FloorState(config)
    for row in rows:
        service.apply(loads_exact(row.entry, f"journal entry {row.seq}"))
        if row.idem_key is not None and row.body_sha256 is not None:
            service.idem[row.idem_key] = row.body_sha256
    return service


async def rewrite_history(pool: asyncpg.Pool, statement: str, *args: object) -> None:
    """Run `statement` on the journal's past, as a database rolled back under the writers
    (or an operator's mistake) would change it: the journal refuses UPDATE, DELETE and
    TRUNCATE to every session but one that says, in its own transaction, that it means it
    (`jackpot.rewrite_history`, docs/operations.md "Roles and privileges"). The owner's
    pool only: the runtime role holds no such privilege at all."""
    async with pool.acquire() as connection, connection.transaction():
        await connection.execute("SET LOCAL jackpot.rewrite_history = 'on'")
        await connection.execute(statement, *args)
