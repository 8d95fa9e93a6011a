"""The parameters in force and their history (docs/api.md `GET /v1/config`), and a change
of money parameters held for a second supervisor under dual control (docs/operations.md
"Changing a parameter")."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import httpx
import pytest

from app.config.floor_file import parse_floor
from app.writer.opening import StartRefused
from tests.integration.app.support import KeptJournal, build_server, running
from tests.support import DEMO, OPERATOR, T01, Clock

SAM = {"Authorization": "Bearer demo-supervisor"}
SUE = {"Authorization": "Bearer demo-supervisor-2"}
QUARTER = 'rate = "0.25"\n  reserve_rate = "0.05"'
HALF = 'rate = "0.50"\n  reserve_rate = "0.05"'


def demo(dual: bool, rate: str = QUARTER) -> str:
    text = Path(DEMO).read_text()
    assert QUARTER in text and "dual_control = false" in text
    return text.replace(QUARTER, rate).replace(
        "dual_control = false", f"dual_control = {dual}".lower()
    )


async def config(client: httpx.AsyncClient) -> dict[str, object]:
    r = await client.get("/v1/config", headers=OPERATOR)
    assert r.status_code == 200, r.text
    answer: dict[str, object] = r.json()
    return answer


async def stud_rate(client: httpx.AsyncClient) -> str:
    r = await client.get("/v1/links/stud/meters/major", headers=OPERATOR)
    rate: str = r.json()["rate"]
    return rate


async def test_the_parameters_in_force_with_their_seq_and_sha256() -> None:
    server = build_server(parse_floor(demo(False)), clock=Clock())
    async with running(server.app) as client:
        assert (await client.get("/v1/config", headers=T01)).status_code == 403
        assert (await client.get("/v1/config")).status_code == 401
        answer = await config(client)
        assert answer["seq"] == 1  # the first entry of a new journal
        params = answer["params"]
        # The sha256 of the canonical JSON (sorted keys, no spaces: docs/journal.md).
        canonical = json.dumps(params, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
        assert answer["sha256"] == hashlib.sha256(canonical.encode()).hexdigest()
        assert answer["proposal"] is None
        assert isinstance(params, dict) and params["dual_control"] is False
        history = (await client.get("/v1/config/history", headers=OPERATOR)).json()
        assert [(c["seq"], c["state"]) for c in history["changes"]] == [(1, "in_force")]


async def test_a_proposal_needs_a_second_supervisor() -> None:
    clock, journal = Clock(), KeptJournal()
    async with running(build_server(parse_floor(demo(True)), journal=journal, clock=clock).app):
        pass
    edited = parse_floor(demo(True, HALF))
    server = build_server(edited, journal=journal, clock=clock, changed_by="sam")
    async with running(server.app) as client:
        answer = await config(client)
        proposal = answer["proposal"]
        assert isinstance(proposal, dict)
        assert proposal["by"] == "sam" and proposal["state"] == "proposed"
        assert {"parameter": "links[stud].meters[major].rate", "before": 2500, "after": 5000} in (
            proposal["changes"]
        )
        assert await stud_rate(client) == "0.25"  # held: the recorded parameters run
        pid = proposal["sha256"]
        # The author cannot approve alone; an operator cannot at all; a table neither.
        r = await client.post(f"/v1/config/proposals/{pid}/approve", headers=SAM)
        assert r.status_code == 403, r.text
        assert "sam" in r.json()["detail"]
        assert (
            await client.post(f"/v1/config/proposals/{pid}/approve", headers=OPERATOR)
        ).status_code == 403
        assert (
            await client.post("/v1/config/proposals/nope/approve", headers=SUE)
        ).status_code == 404
        r = await client.post(f"/v1/config/proposals/{pid}/approve", headers=SUE)
        assert r.status_code == 200, r.text
        assert r.json()["state"] == "in_force" and r.json()["approved_by"] == "sue"
        assert await stud_rate(client) == "0.5"
        answer = await config(client)
        assert answer["sha256"] == pid and answer["proposal"] is None
        history = (await client.get("/v1/config/history", headers=OPERATOR)).json()["changes"]
        assert [c["state"] for c in history] == ["in_force", "proposed", "in_force"]
        assert history[1]["by"] == "sam" and history[2]["approved_by"] == "sue"
        r = await client.post(f"/v1/config/proposals/{pid}/approve", headers=SUE)
        assert r.status_code == 404  # nothing waiting any more
    # The approval is replayed: the next start runs the approved parameters.
    server = build_server(edited, journal=journal, clock=clock)
    async with running(server.app) as client:
        assert await stud_rate(client) == "0.5"


async def test_a_proposal_rejected() -> None:
    clock, journal = Clock(), KeptJournal()
    async with running(build_server(parse_floor(demo(True)), journal=journal, clock=clock).app):
        pass
    server = build_server(
        parse_floor(demo(True, HALF)), journal=journal, clock=clock, changed_by="sue"
    )
    async with running(server.app) as client:
        pid = (await config(client))["proposal"]["sha256"]  # type: ignore[index]
        path = f"/v1/config/proposals/{pid}/reject"
        assert (await client.post(path, json={"reason": "mine"}, headers=SUE)).status_code == 403
        r = await client.post(path, json={}, headers=SAM)
        assert r.status_code == 422 and "reason" in r.text
        r = await client.post(path, json={"reason": "not approved by the regulator"}, headers=SAM)
        assert r.status_code == 200, r.text
        assert r.json()["state"] == "rejected" and r.json()["rejected_by"] == "sam"
        assert (await config(client))["proposal"] is None
        assert await stud_rate(client) == "0.25"
        audit = (await client.get("/v1/audit?action=reject:config", headers=OPERATOR)).json()
        assert [a["reason"] for a in audit["audit"]] == ["not approved by the regulator"]


async def test_a_money_change_under_dual_control_names_its_author() -> None:
    clock, journal = Clock(), KeptJournal()
    async with running(build_server(parse_floor(demo(True)), journal=journal, clock=clock).app):
        pass
    for author in (None, "nobody", "olivia"):  # none, unknown, not a supervisor
        server = build_server(
            parse_floor(demo(True, HALF)), journal=journal, clock=clock, changed_by=author
        )
        with pytest.raises(StartRefused) as refused:
            async with running(server.app):
                pass
        assert any("--changed-by" in p for p in refused.value.problems), refused.value.problems
    # The first start's parameters and its mystery level's draw; the refused starts: nothing.
    assert [r.kind async for r in journal.read(0)] == ["config", "arm"]
