"""Operator accounts over the API: created, disabled, re-enabled, passwords reset, roles
changed by supervisors; the floor file's operators taken over once; dual control on
granting `supervisor`; the last active supervisor kept (docs/api.md "Accounts")."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import httpx
import pytest
from argon2 import PasswordHasher, profiles

from app.api.passwords import Passwords
from app.state.floor_state import FloorState
from app.store.journal import MemoryJournal
from tests.integration.app.support import KeptJournal, build_server, running
from tests.support import OPERATOR, SUPERVISOR, Clock, replayed

SUE = {"Authorization": "Bearer demo-supervisor-2"}
CHEAP = Passwords(PasswordHasher.from_parameters(profiles.CHEAPEST))
PASSWORD = "correct horse battery"


def new_account(name: str, role: str = "operator") -> dict[str, Any]:
    return {"name": name, "display_name": name.title(), "role": role, "password": PASSWORD}


async def serve(
    clock: Clock, *, dual: bool = False, journal: MemoryJournal | None = None
) -> AsyncIterator[httpx.AsyncClient]:
    server = build_server(dual=dual, clock=clock, journal=journal, passwords=CHEAP)
    async with running(server.app) as client:
        yield client


@pytest.fixture
async def client(clock: Clock) -> AsyncIterator[httpx.AsyncClient]:
    async for c in serve(clock):
        yield c


@pytest.fixture
async def dual(clock: Clock) -> AsyncIterator[httpx.AsyncClient]:
    async for c in serve(clock, dual=True):
        yield c


async def test_a_supervisor_creates_an_account_and_the_floor_operators_are_taken_over(
    client: httpx.AsyncClient,
) -> None:
    r = await client.post("/v1/accounts", json=new_account("ann"), headers=SUPERVISOR)
    assert r.status_code == 201, r.text
    assert r.json()["name"] == "ann" and r.json()["role"] == "operator"
    assert "password" not in r.json() and r.json()["has_password"] is True
    listed = (await client.get("/v1/accounts", headers=SUPERVISOR)).json()["accounts"]
    roles = {a["name"]: (a["role"], a["has_password"]) for a in listed}
    assert roles == {
        "olivia": ("operator", False),
        "sam": ("supervisor", False),
        "sue": ("supervisor", False),
        "ann": ("operator", True),
    }
    # The floor file's tokens go on working, now as the accounts' own.
    assert (await client.get("/v1/awards", headers=OPERATOR)).status_code == 200
    audit = (await client.get("/v1/audit", headers=OPERATOR)).json()["audit"]
    assert [r["action"] for r in audit] == ["account:import", "account:create"]
    assert audit[1]["who"] == "sam" and audit[1]["account"] == "ann"


async def test_operators_and_auditors_may_not_manage_accounts(client: httpx.AsyncClient) -> None:
    r = await client.post("/v1/accounts", json=new_account("ann"), headers=OPERATOR)
    assert r.status_code == 403
    assert (await client.get("/v1/accounts")).status_code == 401
    assert (await client.get("/v1/accounts", headers=OPERATOR)).status_code == 403


async def test_bad_bodies_name_the_field_and_change_nothing(client: httpx.AsyncClient) -> None:
    short = {**new_account("ann"), "password": "short"}
    r = await client.post("/v1/accounts", json=short, headers=SUPERVISOR)
    assert r.status_code == 422
    assert r.json()["errors"][0]["loc"] == ["body", "password"]
    bad_role = {**new_account("ann"), "role": "owner"}
    r = await client.post("/v1/accounts", json=bad_role, headers=SUPERVISOR)
    assert r.status_code == 422 and r.json()["errors"][0]["loc"] == ["body", "role"]
    r = await client.post("/v1/accounts", json={**new_account("a b")}, headers=SUPERVISOR)
    assert r.status_code == 422 and r.json()["errors"][0]["loc"] == ["body", "name"]
    assert (await client.get("/v1/audit", headers=OPERATOR)).json()["audit"] == []


async def test_a_name_is_taken_once(client: httpx.AsyncClient) -> None:
    await client.post("/v1/accounts", json=new_account("ann"), headers=SUPERVISOR)
    r = await client.post("/v1/accounts", json=new_account("ann"), headers=SUPERVISOR)
    assert r.status_code == 409


async def test_a_disabled_account_token_stops_and_it_can_be_re_enabled(
    client: httpx.AsyncClient,
) -> None:
    reason = {"reason": "left the company"}
    r = await client.post("/v1/accounts/olivia/disable", json=reason, headers=SUPERVISOR)
    assert r.status_code == 200, r.text
    assert r.json()["active"] is False
    assert (await client.get("/v1/awards", headers=OPERATOR)).status_code == 401
    again = await client.post("/v1/accounts/olivia/disable", json=reason, headers=SUPERVISOR)
    assert again.status_code == 409
    r = await client.post("/v1/accounts/olivia/enable", json={"reason": "back"}, headers=SUPERVISOR)
    assert r.status_code == 200 and r.json()["active"] is True
    assert (await client.get("/v1/awards", headers=OPERATOR)).status_code == 200
    unknown = await client.post("/v1/accounts/nobody/disable", json=reason, headers=SUPERVISOR)
    assert unknown.status_code == 404


async def test_the_last_active_supervisor_cannot_be_disabled_nor_demoted(
    client: httpx.AsyncClient,
) -> None:
    reason = {"reason": "left"}
    r = await client.post("/v1/accounts/sue/disable", json=reason, headers=SUPERVISOR)
    assert r.status_code == 200
    r = await client.post("/v1/accounts/sam/disable", json=reason, headers=SUPERVISOR)
    assert r.status_code == 409
    assert "last active supervisor" in r.json()["detail"]
    r = await client.post("/v1/accounts/sam/role", json={"role": "operator"}, headers=SUPERVISOR)
    assert r.status_code == 409
    assert (await client.get("/v1/accounts/sam", headers=SUPERVISOR)).json()["active"] is True


async def test_a_role_change_takes_effect_at_once(client: httpx.AsyncClient) -> None:
    r = await client.post("/v1/accounts/olivia/role", json={"role": "auditor"}, headers=SUPERVISOR)
    assert r.status_code == 200 and r.json()["role"] == "auditor"
    # An auditor reads, and still changes nothing.
    assert (await client.get("/v1/audit", headers=OPERATOR)).status_code == 200
    seed = {"seed": "12000.00", "reason": "promo"}
    r = await client.put("/v1/links/stud/meters/major/seed", json=seed, headers=OPERATOR)
    assert r.status_code == 403
    r = await client.post("/v1/accounts/olivia/role", json={"role": "supervisor"}, headers=SUE)
    assert r.status_code == 200
    assert (await client.get("/v1/accounts", headers=OPERATOR)).status_code == 200


async def test_with_dual_control_a_supervisor_grant_waits_for_another(
    dual: httpx.AsyncClient,
) -> None:
    r = await dual.post("/v1/accounts/olivia/role", json={"role": "supervisor"}, headers=SUPERVISOR)
    assert r.status_code == 202, r.text
    assert r.json()["role"] == "operator" and r.json()["pending_role"] == "supervisor"
    # Not yet: olivia is still an operator.
    assert (await dual.get("/v1/accounts", headers=OPERATOR)).status_code == 403
    own = await dual.post("/v1/accounts/olivia/role/approve", headers=SUPERVISOR)
    assert own.status_code == 409
    r = await dual.post("/v1/accounts/olivia/role/approve", headers=SUE)
    assert r.status_code == 200 and r.json()["role"] == "supervisor"
    assert (await dual.get("/v1/accounts", headers=OPERATOR)).status_code == 200


async def test_with_dual_control_a_new_supervisor_starts_as_an_operator(
    dual: httpx.AsyncClient,
) -> None:
    r = await dual.post("/v1/accounts", json=new_account("ann", "supervisor"), headers=SUPERVISOR)
    assert r.status_code == 202, r.text
    assert r.json()["role"] == "operator" and r.json()["pending_role"] == "supervisor"
    r = await dual.post("/v1/accounts/ann/role/reject", headers=SUE)
    assert r.status_code == 200 and r.json()["role"] == "operator"
    assert r.json()["pending_role"] is None


async def test_accounts_are_rebuilt_from_the_journal_alone(clock: Clock) -> None:
    journal = KeptJournal()
    async for client in serve(clock, journal=journal):
        await client.post("/v1/accounts", json=new_account("ann"), headers=SUPERVISOR)
        await client.post("/v1/accounts/olivia/disable", json={"reason": "x"}, headers=SUPERVISOR)
        before = (await client.get("/v1/accounts", headers=SUPERVISOR)).json()
    async for client in serve(clock, journal=journal):
        after = (await client.get("/v1/accounts", headers=SUPERVISOR)).json()
        assert after == before
        assert (await client.get("/v1/awards", headers=OPERATOR)).status_code == 401
    service: FloorState = replayed([r async for r in journal.read(0)])
    assert sorted(service.accounts.by_name) == ["ann", "olivia", "sam", "sue"]
    assert service.accounts.by_name["ann"].password is not None
