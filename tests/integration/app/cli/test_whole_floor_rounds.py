"""bench/whole_floor.py's floor and rounds, posted to the app in-process: every request of
every round is accepted, and each bets answer that took a jackpot wager shows its link's
meter above what the link's previous answer showed (what event-to-screen relies on)."""

from __future__ import annotations

import random
import time
from pathlib import Path

from app.cli.simulated_rounds import read_tables
from app.config.floor_file import parse_floor
from tests.integration.app.support import build_server, running
from tests.unit.bench.loading import load_bench

wf = load_bench("whole_floor")


async def test_the_benchs_rounds_are_accepted_at_every_table(tmp_path: Path) -> None:
    path = tmp_path / "floor.toml"
    path.write_text(wf.floor_text(10, 5))
    specs = read_tables(path)
    links = wf.floor_links(10, 5)
    server = build_server(parse_floor(path.read_text()))
    kinds: dict[str, int] = {}
    shown: dict[str, int] = {}  # link -> the meter in its latest answer
    async with running(server.app) as client:
        for spec in specs:
            rng = random.Random(f"test:{spec.id}")
            headers = {"Authorization": f"Bearer {spec.token}"}
            for n in range(12):
                plan = wf.next_round(spec, rng, 4)  # a void one round in four
                closed_at = time.time_ns() // 1_000_000
                bets = wf.bets_request(spec, f"R{n}", plan, closed_at)
                answer = await client.post(bets.path, json=bets.body, headers=headers)
                assert answer.status_code == 200, answer.text
                view = answer.json()
                link = links[spec.id]
                if link is not None and any(b["jackpot"] == "accepted" for b in view["boxes"]):
                    value = wf.meter_value(view["meters"], link)
                    assert value is not None and value > shown.get(link, 0)
                    shown[link] = value
                dealt_at = wf.dealt_at_for(plan, closed_at, time.time_ns() // 1_000_000)
                settle = wf.settle_request(spec, f"R{n}", plan, dealt_at)
                answer = await client.post(settle.path, json=settle.body, headers=headers)
                assert answer.status_code == 200, (settle.body, answer.text)
                kinds[settle.kind] = kinds.get(settle.kind, 0) + 1
                if link is not None and settle.kind == "void":
                    shown[link] = wf.meter_value(answer.json()["meters"], link)
    assert kinds.get("void", 0) > 0 and kinds.get("outcome", 0) > 0
