"""Tokens managed at run time: personal tokens (shown once, hashed, expiring, revocable,
acting with their account's role) and tables' tokens replaced without a restart, the old
one working for the floor's grace period (docs/api.md "Tokens")."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import httpx
import pytest
from argon2 import PasswordHasher, profiles

from app.api.passwords import Passwords
from tests.integration.app.support import KeptJournal, build_server, running
from tests.support import OPERATOR, SUPERVISOR, T01, Clock, bets_body

CHEAP = Passwords(PasswordHasher.from_parameters(profiles.CHEAPEST))
DAY_MS = 86_400_000
GRACE_MS = 3_600_000  # the demo floor's table_token_grace_ms (the default)


def bearer(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


@pytest.fixture
async def client(clock: Clock) -> AsyncIterator[httpx.AsyncClient]:
    server = build_server(clock=clock, passwords=CHEAP)
    async with running(server.app) as client:
        yield client


async def make_token(client: httpx.AsyncClient, who: dict[str, str], days: int = 30) -> str:
    r = await client.post("/v1/tokens", json={"name": "nightly report", "days": days}, headers=who)
    assert r.status_code == 201, r.text
    token: str = r.json()["token"]
    return token


async def test_a_personal_token_is_shown_once_and_acts_with_its_accounts_role(
    client: httpx.AsyncClient, clock: Clock
) -> None:
    r = await client.post("/v1/tokens", json={"name": "nightly", "days": 7}, headers=OPERATOR)
    assert r.status_code == 201, r.text
    made = r.json()
    assert made["account"] == "olivia" and made["name"] == "nightly"
    assert made["token"].startswith("jpt_") and len(made["token"]) > 40
    listed = (await client.get("/v1/tokens", headers=OPERATOR)).json()["tokens"]
    assert made["token"] not in str(listed)
    assert {t["id"] for t in listed} == {made["id"], "floor-olivia"}
    token = bearer(made["token"])
    assert (await client.get("/v1/awards", headers=token)).status_code == 200
    seed = {"seed": "12000.00", "reason": "promo"}
    r = await client.put("/v1/links/stud/meters/major/seed", json=seed, headers=token)
    assert r.status_code == 403
    # Its account's role of the moment.
    role = {"role": "supervisor"}
    assert (await client.post("/v1/accounts/olivia/role", json=role, headers=SUPERVISOR)).is_success
    r = await client.put("/v1/links/stud/meters/major/seed", json=seed, headers=token)
    assert r.status_code == 200, r.text
    audit = (await client.get("/v1/audit", headers=SUPERVISOR)).json()["audit"]
    assert audit[-1]["who"] == "olivia"


async def test_an_expired_token_is_refused(client: httpx.AsyncClient, clock: Clock) -> None:
    token = bearer(await make_token(client, OPERATOR, days=1))
    clock.now += DAY_MS - 1
    assert (await client.get("/v1/awards", headers=token)).status_code == 200
    clock.now += 1
    assert (await client.get("/v1/awards", headers=token)).status_code == 401


async def test_a_revoked_token_stops_and_only_its_owner_or_a_supervisor_revokes(
    client: httpx.AsyncClient,
) -> None:
    r = await client.post("/v1/tokens", json={"name": "x"}, headers=SUPERVISOR)
    sams = r.json()
    r = await client.post(f"/v1/tokens/{sams['id']}/revoke", headers=OPERATOR)
    assert r.status_code == 403
    mine = await client.post("/v1/tokens", json={"name": "y"}, headers=OPERATOR)
    r = await client.post(f"/v1/tokens/{mine.json()['id']}/revoke", headers=OPERATOR)
    assert r.status_code == 200 and r.json()["revoked_at"] is not None
    assert (await client.get("/v1/awards", headers=bearer(mine.json()["token"]))).status_code == 401
    r = await client.post(f"/v1/tokens/{sams['id']}/revoke", headers=SUPERVISOR)
    assert r.status_code == 200
    again = await client.post(f"/v1/tokens/{sams['id']}/revoke", headers=SUPERVISOR)
    assert again.status_code == 409
    unknown = await client.post("/v1/tokens/tok-nothing/revoke", headers=SUPERVISOR)
    assert unknown.status_code == 404


async def test_a_disabled_accounts_tokens_stop(client: httpx.AsyncClient) -> None:
    token = bearer(await make_token(client, OPERATOR))
    await client.post("/v1/accounts/olivia/disable", json={"reason": "x"}, headers=SUPERVISOR)
    assert (await client.get("/v1/awards", headers=token)).status_code == 401


async def test_a_bad_token_request_names_the_field(client: httpx.AsyncClient) -> None:
    r = await client.post("/v1/tokens", json={"name": "x", "days": 0}, headers=OPERATOR)
    assert r.status_code == 422 and r.json()["errors"][0]["loc"] == ["body", "days"]
    r = await client.post("/v1/tokens", json={"name": "x"}, headers=T01)
    assert r.status_code == 403


async def test_a_tables_token_is_replaced_the_old_one_working_for_the_grace(
    client: httpx.AsyncClient, clock: Clock
) -> None:
    r = await client.post("/v1/tables/T01/token", headers=SUPERVISOR)
    assert r.status_code == 201, r.text
    new = bearer(r.json()["token"])
    assert r.json()["table"] == "T01" and r.json()["changed_by"] == "sam"
    r = await client.post(
        "/v1/tables/T01/rounds/R1/bets", json=bets_body(clock, (1, "10.00", "1.00")), headers=new
    )
    assert r.status_code == 200, r.text
    r = await client.post(
        "/v1/tables/T01/rounds/R2/bets", json=bets_body(clock, (1, "10.00", "1.00")), headers=T01
    )
    assert r.status_code == 200  # the old one, within the grace
    clock.now += GRACE_MS
    r = await client.post(
        "/v1/tables/T01/rounds/R3/bets", json=bets_body(clock, (1, "10.00", "1.00")), headers=T01
    )
    assert r.status_code == 401
    r = await client.post(
        "/v1/tables/T01/rounds/R4/bets", json=bets_body(clock, (1, "10.00", "1.00")), headers=new
    )
    assert r.status_code == 200
    # The new token is T01's only: another table's rounds stay closed to it.
    r = await client.post(
        "/v1/tables/T02/rounds/R1/bets", json=bets_body(clock, (1, "10.00", "1.00")), headers=new
    )
    assert r.status_code == 403
    audit = (await client.get("/v1/audit", headers=SUPERVISOR)).json()["audit"]
    assert [(a["action"], a["account"]) for a in audit] == [
        ("account:import", "olivia,sam,sue"),
        ("table:token", "T01"),
    ]


async def test_a_second_replacement_keeps_the_first_new_token_for_its_grace(
    client: httpx.AsyncClient, clock: Clock
) -> None:
    first = bearer((await client.post("/v1/tables/T01/token", headers=SUPERVISOR)).json()["token"])
    clock.now += 1_000
    second = bearer((await client.post("/v1/tables/T01/token", headers=SUPERVISOR)).json()["token"])
    assert (await client.get("/v1/tables/T01/rounds/R1", headers=first)).status_code == 404
    assert (await client.get("/v1/tables/T01/rounds/R1", headers=T01)).status_code == 401
    clock.now += GRACE_MS
    assert (await client.get("/v1/tables/T01/rounds/R1", headers=first)).status_code == 401
    assert (await client.get("/v1/tables/T01/rounds/R1", headers=second)).status_code == 404


async def test_only_a_supervisor_replaces_a_tables_token_of_a_known_table(
    client: httpx.AsyncClient,
) -> None:
    assert (await client.post("/v1/tables/T01/token", headers=OPERATOR)).status_code == 403
    assert (await client.post("/v1/tables/T01/token", headers=T01)).status_code == 403
    assert (await client.post("/v1/tables/T99/token", headers=SUPERVISOR)).status_code == 404


async def test_tokens_made_at_run_time_outlive_a_restart(clock: Clock) -> None:
    journal = KeptJournal()
    server = build_server(clock=clock, journal=journal, passwords=CHEAP)
    async with running(server.app) as client:
        personal = bearer(await make_token(client, OPERATOR))
        table = bearer(
            (await client.post("/v1/tables/T01/token", headers=SUPERVISOR)).json()["token"]
        )
    server = build_server(clock=clock, journal=journal, passwords=CHEAP)
    async with running(server.app) as client:
        assert (await client.get("/v1/awards", headers=personal)).status_code == 200
        assert (await client.get("/v1/tables/T01/rounds/R1", headers=table)).status_code == 404


async def test_tokens_that_no_longer_work_are_in_the_sign_in_log_once_a_minute(
    client: httpx.AsyncClient, clock: Clock
) -> None:
    token = bearer(await make_token(client, OPERATOR, days=1))
    await client.post("/v1/tables/T01/token", headers=SUPERVISOR)
    clock.now += DAY_MS
    for _ in range(3):
        assert (await client.get("/v1/awards", headers=token)).status_code == 401
        assert (await client.get("/v1/accounts", headers=token)).status_code == 401
        assert (await client.get("/v1/tables/T01/rounds/R1", headers=T01)).status_code == 401
    await asyncio.sleep(0.1)  # the log is written beside the answer
    log = (await client.get("/v1/signins?event=token_refused", headers=SUPERVISOR)).json()
    refused = {e["name"]: e["detail"] for e in log["signins"]}
    assert len(log["signins"]) == 2, log  # once a minute per name and reason
    assert refused["T01"] == "the table's floor file token, replaced, past its grace"
    assert refused["olivia"].startswith("personal token tok-")
    assert refused["olivia"].endswith("(nightly report): expired")


async def test_a_refusal_seen_by_a_routes_dependency_is_logged_too(
    client: httpx.AsyncClient,
) -> None:
    made = (await client.post("/v1/tokens", json={"name": "old"}, headers=SUPERVISOR)).json()
    await client.post(f"/v1/tokens/{made['id']}/revoke", headers=SUPERVISOR)
    # /v1/accounts checks the caller in a dependency FastAPI runs in a worker thread.
    assert (await client.get("/v1/accounts", headers=bearer(made["token"]))).status_code == 401
    await asyncio.sleep(0.1)
    log = (await client.get("/v1/signins?event=token_refused", headers=SUPERVISOR)).json()
    assert [e["detail"] for e in log["signins"]] == [f"personal token {made['id']} (old): revoked"]
