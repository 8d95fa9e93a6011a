"""A property over random histories with parameter changes between restarts: the state a
restart rebuilds is the state before it, new entries are priced under the parameters in
force, and the journal verifies with no floor file (docs/journal.md `config`)."""

from __future__ import annotations

import asyncio
import copy
import random
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from app.audit.findings import format_report
from app.audit.verify_run import verify
from app.config.floor_file import load_floor
from app.config.floor_parameters import floor_parameters
from app.state.commands import ConfigCommand
from app.state.floor_state import FloorState
from app.state.parameters import config_of
from app.state.sealing import DEMO_KEY
from app.store.journal import MemoryJournal
from app.store.snapshots import dump_text
from app.writer.opening import opened
from app.writer.writer import Writer
from app.writer.writer_settings import WriterSettings
from tests.support import DEMO, as_command

DEMO_PARAMS = floor_parameters(load_floor(DEMO))
LOSING = ["2S", "7H", "9D", "JC", "4S"]  # no pay-table hand

# One start: the stud meter's rate and reserve rate (over 10,000), the hold, and the
# rounds then played (True: with an outcome, False: bets only).
starts = st.lists(
    st.tuples(
        st.integers(1, 60).map(lambda n: n * 100),
        st.integers(0, 20).map(lambda n: n * 100),
        st.sampled_from([1_000, 2_000, 5_000]),
        st.lists(st.booleans(), max_size=6),
    ),
    min_size=1,
    max_size=4,
)


def params_of(rate: int, reserve: int, hold: int) -> dict[str, Any]:
    params = copy.deepcopy(DEMO_PARAMS)
    params["hold_ms"] = hold
    meter = params["links"][0]["meters"][0]
    meter["rate"], meter["reserve_rate"] = rate, reserve
    return params


class Kept(MemoryJournal):
    async def close(self) -> None:
        pass


async def play(writer: Writer, clock: list[int], first: int, rounds: list[bool], rate: int) -> int:
    """The rounds at T01; returns what they added to the stud meter (micro-units)."""
    added = 0
    for n, settled in enumerate(rounds, first):
        box = {"box": 1, "ante": 10_000_000, "jackpot": 1_000_000, "jackpot_dealer": 0,
               "player": None}  # fmt: skip
        bets = as_command("bets", {"closed_at": clock[0], "boxes": [box]})
        await writer.submit("bets", "T01", f"R{n}", bets)
        added += 1_000_000 * rate // 10_000
        clock[0] += 500
        if settled:
            hand = {"box": 1, "dealt_at": clock[0], "cards": LOSING, "folded": False}
            outcome = as_command("outcome", {"boxes": [hand], "dealer": None})
            await writer.submit("outcome", "T01", f"R{n}", outcome)
        clock[0] += 500
    return added


async def history(plan: list[tuple[int, int, int, list[bool]]]) -> None:
    journal, clock = Kept(), [1_800_000_000_000]
    before: str | None = None
    expected, first = 10_000_000_000, 1
    for rate, reserve, hold, rounds in plan:
        params = params_of(rate, reserve, hold)
        # The floor file read at this start: its configuration is what the state is first
        # built with; the journal's parameters replace it where they are recorded.
        writer = Writer(
            FloorState(config_of(params, DEMO_KEY)),  # the writers' key for the mini's draws
            journal,
            WriterSettings(clock=lambda: clock[0], rng=random.Random(1), snapshot_every=4,
                           snapshot_growth=0),
        )  # fmt: skip
        writer.opening.append(("config", ConfigCommand(params)))
        await writer.recover()
        if before is not None:
            assert dump_text(writer.service, writer.seq, writer.head) == before
        writer.start()
        await opened(writer.opened)
        assert writer.service.config.links[0].meters[0].rate == rate
        expected += await play(writer, clock, first, rounds, rate)
        first += len(rounds)
        link = writer.service.floor.link("stud")
        assert link.display_values()[0] == expected
        await writer.stop()
        for task in [writer.snapshots.task]:
            if task is not None:
                await task
        before = dump_text(writer.service, writer.seq, writer.head)
    report = await verify(journal, None, mystery_key=DEMO_KEY)
    assert report.ok, format_report(report)
    assert report.parameters is not None
    assert report.parameters["params"] == params_of(*plan[-1][:3])


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(starts)
def test_restarts_under_changed_parameters_rebuild_the_state_and_verify(
    plan: list[tuple[int, int, int, list[bool]]],
) -> None:
    asyncio.run(history(plan))
