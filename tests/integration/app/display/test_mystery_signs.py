"""What the signs are told of a must-hit-by level (docs/api.md, Displays): its "must hit
by" amount and commitment in the snapshot and `meters` messages, a new commitment after
each draw, the reveal with the win, and never the trigger before the hit."""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import json
from typing import Any

import orjson

from app.config.floor_file import parse_floor
from tests.integration.app.api.test_mystery_level import FLOOR, KEY, NOTHING, TABLE
from tests.integration.app.support import KeptJournal, build_server, running
from tests.support import Clock, bets_body


async def arms(journal: KeptJournal) -> list[dict[str, Any]]:
    rows = [orjson.loads(row.entry) async for row in journal.read(0)]
    return [e for e in rows if e["kind"] == "arm"]


def mystery(message: dict[str, Any]) -> dict[str, Any] | None:
    for meter in message.get("meters") or []:
        if meter["meter"] == "mystery":
            found: dict[str, Any] = meter
            return found
    return None


async def test_the_signs_show_must_hit_by_and_the_commitment_and_the_reveal_at_the_hit() -> None:
    clock, journal = Clock(), KeptJournal()
    server = build_server(
        parse_floor(FLOOR), journal=journal, clock=clock, outcome_wait_s=0.2, mystery_key=KEY
    )
    texts: list[str] = []
    async with running(server.app) as client:
        subscription = server.broadcaster.subscribe("tiers")

        async def listen() -> None:
            async for text in subscription:
                texts.append(text)

        listener = asyncio.create_task(listen())
        drawn: list[dict[str, Any]] = []
        for _ in range(100):
            drawn = await arms(journal)
            if drawn:
                break
            await asyncio.sleep(0.02)
        first = drawn[0]["commitment"]
        bets = bets_body(clock, (1, "10.00", "1.00"), (2, "10.00", "1.00"))
        r = await client.post("/v1/tables/T01/rounds/R1/bets", headers=TABLE, json=bets)
        assert r.status_code == 200, r.text
        outcome = {"boxes": [{"box": b, "dealt_at": clock.at(10 * b), "cards": NOTHING[b - 1]}
                             for b in (1, 2)]}  # fmt: skip
        clock.now += 100
        r = await client.post("/v1/tables/T01/rounds/R1/outcome", json=outcome, headers=TABLE)
        assert r.status_code == 200, r.text
        clock.now += 5_000
        for _ in range(100):
            if len(await arms(journal)) >= 2 and any('"type":"win"' in t for t in texts):
                break
            await asyncio.sleep(0.1)
        await asyncio.sleep(0.3)  # the coalesced meters after the new draw
        second = (await arms(journal))[1]["commitment"]
        listener.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await listener
        subscription.close()
        link = (await client.get("/v1/links/tiers")).json()

    messages = [json.loads(t) for t in texts]
    (at,) = [i for i, m in enumerate(messages) if m["type"] == "win"]
    win = messages[at]
    reveal = win["reveal"]
    text = f"{reveal['trigger']}|{reveal['nonce']}"
    assert hashlib.sha256(text.encode()).hexdigest() == reveal["commitment"] == first
    # Before the hit: the level and its commitment (null until the first draw is
    # committed), never the nonce or the trigger's text.
    before = [m for m in map(mystery, messages[:at]) if m is not None]
    assert {(m["must_hit_by"], m["must_hit_from"]) for m in before} == {("50.10", "50.00")}
    assert {m["commitment"] for m in before} - {None} == {first}
    assert not any(reveal["nonce"] in t or text in t for t in texts[:at])
    assert all("trigger" not in mystery(m) for m in messages if mystery(m) is not None)  # type: ignore[operator]
    # After it: the next draw's commitment, and the major level carries no level fields.
    after = [mystery(m) for m in messages[at + 1 :] if mystery(m) is not None]
    assert after and after[-1] is not None and after[-1]["commitment"] == second != first
    major = next(m for m in link["meters"] if m["meter"] == "major")
    assert set(major) == {"meter", "name", "value"}
    assert mystery(link) is not None and mystery(link)["commitment"] == second  # type: ignore[index]
